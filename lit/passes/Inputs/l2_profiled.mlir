// The bundled L2 pipeline with fixed cortex.profile_ms times (what cortex-profile would attach),
// so that lit/passes/schedule.mlir checks the critical path and the schedule without measuring.
builtin.module {
  func.func @l2_frame(%frame: tensor<480x640x3xui8>) -> (tensor<?xui8>, tensor<15x20xf32>) {
    %gray = cortex.gray %frame {cortex.profile_ms = 3.0 : f64} : tensor<480x640x3xui8> -> tensor<480x640xf32>
    %prev_gray = cortex.state "prev_gray" {cortex.profile_ms = 0.0 : f64} : tensor<480x640xf32>
    %prev_score = cortex.state "prev_score" {cortex.profile_ms = 0.0 : f64} : tensor<15x20xf32>
    %sharpness_history = cortex.state "sharpness_history" {cortex.profile_ms = 0.0 : f64} : tensor<25xf32>
    %sharpness = cortex.blur_detector %gray {cortex.profile_ms = 2.0 : f64} : tensor<480x640xf32> -> f32
    %blur_threshold = cortex.weight "blur_threshold" {cortex.profile_ms = 0.0 : f64} : f32
    %blur_fraction = cortex.weight "blur_fraction" {cortex.profile_ms = 0.0 : f64} : f32
    %sharpness_median = cortex.window_median %sharpness_history {cortex.profile_ms = 0.5 : f64} : tensor<25xf32>
    %relative_threshold = arith.mulf %blur_fraction, %sharpness_median : f32
    %threshold = arith.maximumf %blur_threshold, %relative_threshold : f32
    %blurred = arith.cmpf olt, %sharpness, %threshold : f32
    %score = scf.if %blurred -> (tensor<15x20xf32>) {
      scf.yield %prev_score : tensor<15x20xf32>
    } else {
      %scene = cortex.scene_change %gray, %prev_gray {cortex.profile_ms = 1.0 : f64} : (tensor<480x640xf32>, tensor<480x640xf32>) -> f32
      %center = cortex.center_crop %gray {cortex.profile_ms = 0.5 : f64} : tensor<480x640xf32> -> tensor<15x20xf32>
      %text = cortex.text_roi %gray {cortex.profile_ms = 20.0 : f64} : tensor<480x640xf32> -> tensor<15x20xf32>
      %saliency = cortex.saliency_dft %gray {cortex.profile_ms = 10.0 : f64} : tensor<480x640xf32> -> tensor<15x20xf32>
      %motion = cortex.motion_map %gray, %prev_gray {cortex.profile_ms = 2.0 : f64} : (tensor<480x640xf32>, tensor<480x640xf32>) -> tensor<15x20xf32>
      %wc = cortex.weight "wc" {cortex.profile_ms = 0.0 : f64} : f32
      %wt = cortex.weight "wt" {cortex.profile_ms = 0.0 : f64} : f32
      %ws = cortex.weight "ws" {cortex.profile_ms = 0.0 : f64} : f32
      %wm = cortex.weight "wm" {cortex.profile_ms = 0.0 : f64} : f32
      %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm) {cortex.profile_ms = 1.0 : f64, terms = ["center_crop", "text_roi", "saliency_dft", "motion_map"]} : tensor<15x20xf32>, tensor<15x20xf32>, tensor<15x20xf32>, tensor<15x20xf32> -> tensor<15x20xf32>
      %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene {cortex.profile_ms = 0.5 : f64} : (tensor<15x20xf32>, tensor<15x20xf32>, f32) -> tensor<15x20xf32>
      scf.yield %smoothed : tensor<15x20xf32>
    }
    cortex.update_state "prev_gray" = %gray {cortex.profile_ms = 0.0 : f64} : tensor<480x640xf32>
    cortex.update_state "prev_score" = %score {cortex.profile_ms = 0.0 : f64} : tensor<15x20xf32>
    %new_history = cortex.window_push %sharpness_history, %sharpness {cortex.profile_ms = 0.25 : f64} : tensor<25xf32>
    cortex.update_state "sharpness_history" = %new_history {cortex.profile_ms = 0.0 : f64} : tensor<25xf32>
    %encoded = cortex.encoder %frame, %score {cortex.profile_ms = 5.0 : f64} : (tensor<480x640x3xui8>, tensor<15x20xf32>) -> tensor<?xui8>
    func.return %encoded, %score : tensor<?xui8>, tensor<15x20xf32>
  }
}

