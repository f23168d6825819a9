// The L2 pipeline round-trips through the custom and the generic form.
// RUN: cortex-opt %l2_static | cortex-opt | filecheck %s
// RUN: cortex-opt %l2_static --print-op-generic | cortex-opt | filecheck %s

// CHECK-LABEL: func.func @l2_frame(%frame: tensor<480x640x3xui8>) -> (tensor<?xui8>, tensor<15x20xf32>)
// CHECK:         %gray = cortex.gray %frame
// CHECK:         %score = scf.if %blurred -> (tensor<15x20xf32>)
// CHECK:           %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm)
// CHECK:         cortex.update_state "prev_gray" = %gray
// CHECK:         func.return %encoded, %score
