// The whole L2 pipeline lowered (convert-cortex-to-linalg, then
// convert-cortex-to-extern): no cortex op is left, the frame boundary and
// externs follow the contract, and upstream mlir-opt accepts both printed forms.
// RUN: cortex-opt %l2_static -p convert-cortex-to-linalg,convert-cortex-to-extern | filecheck %s
// RUN: cortex-opt %l2_static -p convert-cortex-to-extern,convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-specialize-mode{mode=power_save},cortex-canonicalize,cortex-dce,convert-cortex-to-linalg,convert-cortex-to-extern' | filecheck %s --check-prefix=POWER

// CHECK-COUNT-4: func.func private @cortex_{{[a-z_]+}}({{.*}}) -> {{.*}} attributes {cortex.extern = "cortex.{{[a-z_]+}}"
// CHECK:         func.func @l2_frame(%frame: tensor<480x640x3xi8> {cortex.unsigned}, %prev_gray: tensor<480x640xf32> {cortex.state = "prev_gray"}, %prev_score: tensor<15x20xf32> {cortex.state = "prev_score"}, %sharpness_history: tensor<25xf32> {cortex.state = "sharpness_history"}, %blur_threshold: f32 {cortex.weight = "blur_threshold"}, %blur_fraction: f32 {cortex.weight = "blur_fraction"}, %wc: f32 {cortex.weight = "wc"}, %wt: f32 {cortex.weight = "wt"}, %ws: f32 {cortex.weight = "ws"}, %wm: f32 {cortex.weight = "wm"})
// CHECK:           %gray = linalg.generic {{.*}} ins(%frame, %{{.*}} : tensor<480x640x3xi8>, tensor<3xf32>)
// CHECK:           %sharpness = func.call @cortex_blur_detector(%gray)
// CHECK:           %sharpness_median = tensor.extract
// CHECK-NEXT:      %relative_threshold = arith.mulf %blur_fraction, %sharpness_median : f32
// CHECK-NEXT:      %threshold = arith.maximumf %blur_threshold, %relative_threshold : f32
// CHECK-NEXT:      %blurred = arith.cmpf olt, %sharpness, %threshold : f32
// CHECK-NEXT:      %score = scf.if %blurred -> (tensor<15x20xf32>) {
// CHECK:             %center = arith.constant {cortex.origin = "center"} dense<"0x{{[0-9A-F]+}}"> : tensor<15x20xf32>
// CHECK:             %saliency = linalg.generic
// CHECK:             %motion = linalg.generic
// CHECK:             %fused = linalg.generic {{.*}} ins(%center, %text, %saliency, %motion, %wc, %wt, %ws, %wm :
// CHECK:             %smoothed = linalg.generic {{.*}} ins(%fused, %prev_score, %{{.*}} : tensor<15x20xf32>, tensor<15x20xf32>, i1)
// CHECK:             scf.yield %smoothed
// CHECK:           %new_history = tensor.insert %sharpness into
// CHECK:           %encoded = func.call @cortex_encoder(%frame, %score)
// CHECK-NEXT:      func.return %encoded, %score, %gray, %score, %new_history
// CHECK-NOT:     cortex.{{(gray|blur_detector|scene_change|center_crop|text_roi|saliency_dft|motion_map|score_fusion|temporal_smooth|encoder|state|update_state|weight) }}
// CHECK-NOT:     unrealized_conversion_cast

// Power-save: the mode's weights are constants (the blur gate's inputs stay inputs), saliency and motion are gone before lowering.
// POWER:       func.func @l2_frame(%frame: tensor<480x640x3xi8> {cortex.unsigned}, %prev_gray: tensor<480x640xf32> {cortex.state = "prev_gray"}, %prev_score: tensor<15x20xf32> {cortex.state = "prev_score"}, %sharpness_history: tensor<25xf32> {cortex.state = "sharpness_history"}, %blur_threshold: f32 {cortex.weight = "blur_threshold"}, %blur_fraction: f32 {cortex.weight = "blur_fraction"}) ->
// POWER-NOT:   cortex.origin = "saliency"
// POWER-NOT:   cortex.origin = "motion"
// POWER:       %fused = linalg.generic
// POWER:       func.return
