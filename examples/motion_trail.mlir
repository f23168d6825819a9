builtin.module {
  // A pipeline whose states only some modes read: `prev_gray` (a delayed input) only through the
  // motion term, `trail` (a recurrence: smoothed text map) only through its own term. power_save zeroes
  // both weights, so its DCE would stop updating both (see cortex.passes.mode_states).
  func.func @motion_trail(%frame: tensor<?x?x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>) {
    %gray = cortex.gray %frame : tensor<?x?x3xui8> -> tensor<?x?xf32>
    %prev_gray = cortex.state "prev_gray" : tensor<?x?xf32>
    %trail = cortex.state "trail" : tensor<?x?xf32>
    %text = cortex.text_roi %gray : tensor<?x?xf32> -> tensor<?x?xf32>
    %motion = cortex.motion_map %gray, %prev_gray : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %calm = arith.constant 0.0 : f32
    %trail_next = cortex.temporal_smooth %text, %trail, %calm : (tensor<?x?xf32>, tensor<?x?xf32>, f32) -> tensor<?x?xf32>
    %wt = cortex.weight "wt" : f32
    %wm = cortex.weight "wm" : f32
    %ws = cortex.weight "ws" : f32
    %fused = cortex.score_fusion(%text, %motion, %trail_next) weights(%wt, %wm, %ws) {terms = ["text_roi", "motion_map", "trail"]} : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    cortex.update_state "prev_gray" = %gray : tensor<?x?xf32>
    cortex.update_state "trail" = %trail_next : tensor<?x?xf32>
    %encoded = cortex.encoder %frame, %fused : (tensor<?x?x3xui8>, tensor<?x?xf32>) -> tensor<?xui8>
    func.return %encoded, %fused : tensor<?xui8>, tensor<?x?xf32>
  }
}
