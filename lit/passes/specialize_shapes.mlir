// cortex-specialize-shapes binds a shape-generic entry (`?` dimensions) to one
// concrete input shape: every shape below it, states included, becomes static,
// and a rule the verifier had to defer is checked with the real numbers.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-shapes{shapes=480x640x3}' | filecheck %s
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-shapes{shapes=96x128x3}' | filecheck %s --check-prefix=SMALL
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-shapes{shapes=481x640x3}' 2>&1 | filecheck %s --check-prefix=RULE
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-shapes{shapes=480x640x4}' 2>&1 | filecheck %s --check-prefix=FIT
// RUN: cortex-opt %s --split-input-file -p cortex-shape-inference | filecheck %s --check-prefix=INFER

// CHECK:      func.func @l2_frame(%frame: tensor<480x640x3xui8>) -> (tensor<?xui8>, tensor<15x20xf32>)
// CHECK:        cortex.state "prev_gray" : tensor<480x640xf32>
// CHECK:        cortex.state "prev_score" : tensor<15x20xf32>
// CHECK:        scf.if %blurred -> (tensor<15x20xf32>)
// CHECK-NEXT:     scf.yield %prev_score : tensor<15x20xf32>
// CHECK:        cortex.motion_map {{.*}} -> tensor<15x20xf32>
// CHECK-NOT:    tensor.cast
// CHECK:        cortex.encoder {{.*}} : (tensor<480x640x3xui8>, tensor<15x20xf32>) -> tensor<?xui8>

// SMALL: func.func @l2_frame(%frame: tensor<96x128x3xui8>) -> (tensor<?xui8>, tensor<3x4xf32>)
// SMALL: cortex.state "prev_gray" : tensor<96x128xf32>

// RULE: error: {{.*}}input shape 481x640x3 for @l2_frame breaks a rule: 'cortex.center_crop' op ({{.*}}in @l2_frame, defining %center): image H=481 is not a multiple of block=32
// FIT: error: {{.*}}@l2_frame argument #0 (%frame) is tensor<?x?x3xui8>; an input of shape 480x640x4 does not fit it

// Shape inference through `?`: the block grid of a ?x? image is ?x?, a state
// stored from it stays ?x? (nothing is known), and a static width still flows.
// INFER-LABEL: func.func @grid
// INFER:         cortex.center_crop %g : tensor<?x?xf32> -> tensor<?x?xf32>
// INFER:         cortex.center_crop %h : tensor<?x64xf32> -> tensor<?x2xf32>
func.func @grid(%g: tensor<?x?xf32>, %h: tensor<?x64xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = cortex.center_crop %g : tensor<?x?xf32> -> tensor<?x?xf32>
  %b = cortex.center_crop %h : tensor<?x64xf32> -> tensor<?x?xf32>
  func.return %a, %b : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// A batch dimension N flows through conv2d, pooling, reshape-free flatten and linear.
// INFER-LABEL: func.func @batch
// INFER:         cortex.conv2d {{.*}} -> tensor<?x4x8x8xf32>
// INFER:         cortex.max_pool {{.*}} -> tensor<?x4x4x4xf32>
// INFER:         cortex.linear {{.*}} -> tensor<?x10xf32>
// INFER:         func.return {{.*}} : tensor<?x10xf32>
func.func @batch(%x: tensor<?x3x8x8xf32>, %k: tensor<4x3x3x3xf32>, %y: tensor<?x64xf32>, %w: tensor<10x64xf32>) -> tensor<?x?xf32> {
  %c = "cortex.conv2d"(%x, %k) <{pads = array<i64: 1, 1, 1, 1>}> : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %p = cortex.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %l = "cortex.linear"(%y, %w) : (tensor<?x64xf32>, tensor<10x64xf32>) -> tensor<?x?xf32>
  func.return %l : tensor<?x?xf32>
}

// -----

// A state stored from a known shape takes it (its reads follow).
// INFER-LABEL: func.func @state
// INFER:         cortex.state "s" : tensor<4x4xf32>
// INFER:         cortex.add {{.*}} -> tensor<4x4xf32>
func.func @state(%x: tensor<4x4xf32>) -> tensor<?x?xf32> {
  %s = cortex.state "s" : tensor<?x?xf32>
  %y = cortex.add %x, %s : (tensor<4x4xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  cortex.update_state "s" = %x : tensor<4x4xf32>
  func.return %y : tensor<?x?xf32>
}
