// cortex-partition on the L2 pipeline: the compiled pieces, between the
// OpenCV stages and the state, which stay in @l2_frame; inside the scf.if
// each branch block is partitioned on its own. Running it again changes nothing.
// RUN: cortex-opt %l2_static -p cortex-partition | filecheck %s
// RUN: cortex-opt %l2_static -p cortex-partition,cortex-partition | filecheck %s

// CHECK-LABEL: func.func @l2_frame(%frame: tensor<480x640x3xui8>)
// CHECK-NEXT:    %gray = func.call @l2_frame_compiled_0(%frame) : (tensor<480x640x3xui8>) -> tensor<480x640xf32>
// CHECK-NEXT:    %prev_gray = cortex.state "prev_gray"
// CHECK-NEXT:    %prev_score = cortex.state "prev_score"
// CHECK-NEXT:    %sharpness_history = cortex.state "sharpness_history"
// CHECK-NEXT:    %sharpness = cortex.blur_detector %gray
// CHECK-NEXT:    %blur_threshold = cortex.weight "blur_threshold"
// CHECK-NEXT:    %blur_fraction = cortex.weight "blur_fraction"
// CHECK-NEXT:    %blurred = func.call @l2_frame_compiled_1(%sharpness_history, %blur_fraction, %blur_threshold, %sharpness) : (tensor<25xf32>, f32, f32, f32) -> i1
// CHECK-NEXT:    %score = scf.if %blurred -> (tensor<15x20xf32>) {
// CHECK-NEXT:      scf.yield %prev_score
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %scene = cortex.scene_change %gray, %prev_gray
// CHECK-NEXT:      %text = cortex.text_roi %gray
// CHECK-NEXT:      %wc = cortex.weight "wc"
// CHECK-NEXT:      %wt = cortex.weight "wt"
// CHECK-NEXT:      %ws = cortex.weight "ws"
// CHECK-NEXT:      %wm = cortex.weight "wm"
// CHECK-NEXT:      %smoothed = func.call @l2_frame_compiled_2(%gray, %prev_gray, %text, %wc, %wt, %ws, %wm, %prev_score, %scene)
// CHECK-NEXT:      scf.yield %smoothed
// CHECK-NEXT:    }
// CHECK-NEXT:    cortex.update_state "prev_gray" = %gray
// CHECK-NEXT:    cortex.update_state "prev_score" = %score
// CHECK-NEXT:    %new_history = func.call @l2_frame_compiled_3(%sharpness_history, %sharpness) : (tensor<25xf32>, f32) -> tensor<25xf32>
// CHECK-NEXT:    cortex.update_state "sharpness_history" = %new_history
// CHECK-NEXT:    %encoded = cortex.encoder %frame, %score
// CHECK-NEXT:    func.return %encoded, %score

// CHECK-LABEL: func.func private @l2_frame_compiled_0(%frame: tensor<480x640x3xui8>) -> tensor<480x640xf32> attributes {cortex.compiled} {
// CHECK-NEXT:    %gray = cortex.gray %frame
// CHECK-NEXT:    func.return %gray

// The blur gate (fixed and relative thresholds) is one compiled piece.
// CHECK-LABEL: func.func private @l2_frame_compiled_1(%sharpness_history: tensor<25xf32>, %blur_fraction: f32, %blur_threshold: f32, %sharpness: f32) -> i1 attributes {cortex.compiled} {
// CHECK-NEXT:    %sharpness_median = cortex.window_median %sharpness_history
// CHECK-NEXT:    %relative_threshold = arith.mulf %blur_fraction, %sharpness_median : f32
// CHECK-NEXT:    %threshold = arith.maximumf %blur_threshold, %relative_threshold : f32
// CHECK-NEXT:    %blurred = arith.cmpf olt, %sharpness, %threshold : f32
// CHECK-NEXT:    func.return %blurred

// CHECK-LABEL: func.func private @l2_frame_compiled_2(%gray: tensor<480x640xf32>, %prev_gray: tensor<480x640xf32>, %text: tensor<15x20xf32>, %wc: f32, %wt: f32, %ws: f32, %wm: f32, %prev_score: tensor<15x20xf32>, %scene: f32) -> tensor<15x20xf32> attributes {cortex.compiled} {
// CHECK-NEXT:    %center = cortex.center_crop %gray
// CHECK-NEXT:    %saliency = cortex.saliency_dft %gray
// CHECK-NEXT:    %motion = cortex.motion_map %gray, %prev_gray
// CHECK-NEXT:    %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm)
// CHECK-NEXT:    %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene
// CHECK-NEXT:    func.return %smoothed

// CHECK-LABEL: func.func private @l2_frame_compiled_3(%sharpness_history: tensor<25xf32>, %sharpness: f32) -> tensor<25xf32> attributes {cortex.compiled} {
// CHECK-NEXT:    %new_history = cortex.window_push %sharpness_history, %sharpness
// CHECK-NEXT:    func.return %new_history

// CHECK-NOT: func.func
