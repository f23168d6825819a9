builtin.module {
  func.func @l2_frame(%frame: tensor<?x?x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>) {
    %gray = cortex.gray %frame : tensor<?x?x3xui8> -> tensor<?x?xf32>
    %prev_gray = cortex.state "prev_gray" : tensor<?x?xf32>
    %prev_score = cortex.state "prev_score" : tensor<?x?xf32>
    %sharpness_history = cortex.state "sharpness_history" : tensor<25xf32>
    %sharpness = cortex.blur_detector %gray : tensor<?x?xf32> -> f32
    %blur_threshold = cortex.weight "blur_threshold" : f32
    %blur_fraction = cortex.weight "blur_fraction" : f32
    %sharpness_median = cortex.window_median %sharpness_history : tensor<25xf32>
    %relative_threshold = arith.mulf %blur_fraction, %sharpness_median : f32
    %threshold = arith.maximumf %blur_threshold, %relative_threshold : f32
    %blurred = arith.cmpf olt, %sharpness, %threshold : f32
    %score = scf.if %blurred -> (tensor<?x?xf32>) {
      scf.yield %prev_score : tensor<?x?xf32>
    } else {
      %scene = cortex.scene_change %gray, %prev_gray : (tensor<?x?xf32>, tensor<?x?xf32>) -> f32
      %center = cortex.center_crop %gray : tensor<?x?xf32> -> tensor<?x?xf32>
      %text = cortex.text_roi %gray : tensor<?x?xf32> -> tensor<?x?xf32>
      %saliency = cortex.saliency_dft %gray : tensor<?x?xf32> -> tensor<?x?xf32>
      %motion = cortex.motion_map %gray, %prev_gray : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
      %wc = cortex.weight "wc" : f32
      %wt = cortex.weight "wt" : f32
      %ws = cortex.weight "ws" : f32
      %wm = cortex.weight "wm" : f32
      %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm) {terms = ["center_crop", "text_roi", "saliency_dft", "motion_map"]} : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
      %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene : (tensor<?x?xf32>, tensor<?x?xf32>, f32) -> tensor<?x?xf32>
      scf.yield %smoothed : tensor<?x?xf32>
    }
    cortex.update_state "prev_gray" = %gray : tensor<?x?xf32>
    cortex.update_state "prev_score" = %score : tensor<?x?xf32>
    %new_history = cortex.window_push %sharpness_history, %sharpness : tensor<25xf32>
    cortex.update_state "sharpness_history" = %new_history : tensor<25xf32>
    %encoded = cortex.encoder %frame, %score : (tensor<?x?x3xui8>, tensor<?x?xf32>) -> tensor<?xui8>
    func.return %encoded, %score : tensor<?xui8>, tensor<?x?xf32>
  }
}
