// convert-cortex-to-extern on the L2 pipeline alone: OpenCV stages become
// calls to private declarations carrying cortex.extern/cortex.props; state
// reads and weights become arguments, state updates extra results; the ui8
// frame and bytes travel as i8 {cortex.unsigned}. Compilable stages stay.
// RUN: cortex-opt %l2_static -p convert-cortex-to-extern | filecheck %s
// RUN: cortex-opt %l2_static -p convert-cortex-to-extern --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK:      func.func private @cortex_blur_detector(tensor<480x640xf32>) -> f32 attributes {cortex.extern = "cortex.blur_detector", cortex.props = {}}
// CHECK-NEXT: func.func private @cortex_scene_change(tensor<480x640xf32>, tensor<480x640xf32>) -> f32 attributes {cortex.extern = "cortex.scene_change", cortex.props = {}}
// CHECK-NEXT: func.func private @cortex_text_roi(tensor<480x640xf32>) -> tensor<15x20xf32> attributes {cortex.extern = "cortex.text_roi", cortex.props = {block = 32 : i64, delta = 5 : i64, min_area = 60 : i64, max_area = 14400 : i64}}
// CHECK-NEXT: func.func private @cortex_encoder(tensor<480x640x3xi8>, tensor<15x20xf32>) -> tensor<?xi8> attributes {cortex.extern = "cortex.encoder", cortex.props = {block = 32 : i64, threshold = 5.000000e-01 : f32, quality = 85 : i64}}
// CHECK-NEXT: func.func @l2_frame(%frame: tensor<480x640x3xi8> {cortex.unsigned}, %prev_gray: tensor<480x640xf32> {cortex.state = "prev_gray"}, %prev_score: tensor<15x20xf32> {cortex.state = "prev_score"}, %sharpness_history: tensor<25xf32> {cortex.state = "sharpness_history"}, %blur_threshold: f32 {cortex.weight = "blur_threshold"}, %blur_fraction: f32 {cortex.weight = "blur_fraction"}, %wc: f32 {cortex.weight = "wc"}, %wt: f32 {cortex.weight = "wt"}, %ws: f32 {cortex.weight = "ws"}, %wm: f32 {cortex.weight = "wm"}) -> (tensor<?xi8> {cortex.unsigned}, tensor<15x20xf32>, tensor<480x640xf32> {cortex.state = "prev_gray"}, tensor<15x20xf32> {cortex.state = "prev_score"}, tensor<25xf32> {cortex.state = "sharpness_history"})
// CHECK-NEXT:   %[[FRAME:.*]] = builtin.unrealized_conversion_cast %frame : tensor<480x640x3xi8> to tensor<480x640x3xui8>
// CHECK-NEXT:   %gray = cortex.gray %[[FRAME]]
// CHECK-NEXT:   %sharpness = func.call @cortex_blur_detector(%gray) {cortex.origin = "sharpness"} : (tensor<480x640xf32>) -> f32
// CHECK:        %scene = func.call @cortex_scene_change(%gray, %prev_gray) {cortex.origin = "scene"}
// CHECK:        %text = func.call @cortex_text_roi(%gray) {cortex.origin = "text"}
// CHECK:        %motion = cortex.motion_map %gray, %prev_gray
// CHECK:        cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm)
// CHECK:        %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene
// CHECK:      %encoded = func.call @cortex_encoder(%frame, %score) {cortex.origin = "encoded"} : (tensor<480x640x3xi8>, tensor<15x20xf32>) -> tensor<?xi8>
// CHECK-NEXT: func.return %encoded, %score, %gray, %score, %new_history : tensor<?xi8>, tensor<15x20xf32>, tensor<480x640xf32>, tensor<15x20xf32>, tensor<25xf32>
// CHECK-NOT:  cortex.state
// CHECK-NOT:  cortex.weight "

// The declaration's unsigned markers print in the generic form.
// GENERIC: "func.func"() <{sym_name = "cortex_encoder", function_type = (tensor<480x640x3xi8>, tensor<15x20xf32>) -> tensor<?xi8>, sym_visibility = "private", arg_attrs = [{cortex.unsigned}, {}], res_attrs = [{cortex.unsigned}]}>
