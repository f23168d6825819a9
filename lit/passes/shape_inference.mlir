// cortex-shape-inference: from the argument types, every dynamic result
// dimension the operands determine becomes static (the verifiers' own rules).
// RUN: cortex-opt %s --split-input-file -p cortex-shape-inference | filecheck %s

// Function results are refined (arguments never are); so are scf.if results.
// CHECK-LABEL: func.func @chain(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %c: i1) -> (tensor<4x2xf32>, tensor<2x4xf32>)
// CHECK:         cortex.relu %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK:         cortex.matmul {{.*}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK:         cortex.transpose {{.*}} : tensor<2x4xf32> -> tensor<4x2xf32>
// CHECK:         scf.if %c -> (tensor<4x2xf32>)
// CHECK:           cortex.neg {{.*}} : tensor<4x2xf32> -> tensor<4x2xf32>
// CHECK:         func.return {{.*}} : tensor<4x2xf32>, tensor<2x4xf32>
func.func @chain(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>, %c: i1) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = cortex.relu %x : tensor<2x3xf32> -> tensor<?x?xf32>
  %m = "cortex.matmul"(%a, %w) : (tensor<?x?xf32>, tensor<3x4xf32>) -> tensor<?x?xf32>
  %t = cortex.transpose %m {perm = array<i64: 1, 0>} : tensor<?x?xf32> -> tensor<?x?xf32>
  %r = scf.if %c -> (tensor<?x?xf32>) {
    scf.yield %t : tensor<?x?xf32>
  } else {
    %n = cortex.neg %t : tensor<?x?xf32> -> tensor<?x?xf32>
    scf.yield %n : tensor<?x?xf32>
  }
  func.return %r, %m : tensor<?x?xf32>, tensor<?x?xf32>
}

// -----

// Broadcasting, reductions, pooling, conv and the vision stages; the
// encoder's byte count stays dynamic (nothing determines it).
// CHECK-LABEL: func.func @mixed(
// CHECK-SAME:    -> (tensor<2x4x3xf32>, tensor<1x8x4x4xf32>, tensor<?xui8>, tensor<2x2xf32>)
// CHECK:         cortex.add {{.*}} -> tensor<2x4x3xf32>
// CHECK:         cortex.reduce_sum {{.*}} -> tensor<2x1x3xf32>
// CHECK:         cortex.conv2d {{.*}} -> tensor<1x8x8x8xf32>
// CHECK:         cortex.max_pool {{.*}} -> tensor<1x8x4x4xf32>
// CHECK:         cortex.gray {{.*}} -> tensor<64x64xf32>
// CHECK:         cortex.saliency_dft {{.*}} -> tensor<2x2xf32>
// CHECK:         cortex.encoder {{.*}} -> tensor<?xui8>
func.func @mixed(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>, %img: tensor<1x3x8x8xf32>, %k: tensor<8x3x3x3xf32>, %frame: tensor<64x64x3xui8>) -> (tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xui8>, tensor<?x?xf32>) {
  %s = cortex.add %a, %b : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<?x?x?xf32>
  %r = cortex.reduce_sum %s {axes = array<i64: 1>} : tensor<?x?x?xf32> -> tensor<?x?x?xf32>
  %c = "cortex.conv2d"(%img, %k) <{pads = array<i64: 1, 1, 1, 1>}> : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<?x?x?x?xf32>
  %p = cortex.max_pool %c {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xf32>
  %g = cortex.gray %frame : tensor<64x64x3xui8> -> tensor<?x?xf32>
  %sal = cortex.saliency_dft %g : tensor<?x?xf32> -> tensor<?x?xf32>
  %bytes = cortex.encoder %frame, %sal : (tensor<64x64x3xui8>, tensor<?x?xf32>) -> tensor<?xui8>
  func.return %s, %p, %bytes, %sal : tensor<?x?x?xf32>, tensor<?x?x?x?xf32>, tensor<?xui8>, tensor<?x?xf32>
}

// -----

// A branch that stays dynamic (from a dynamic argument) keeps the if's
// result dynamic; the refined branch is cast back, as MLIR requires.
// CHECK-LABEL: func.func @one_branch_known(
// CHECK:         scf.if %c -> (tensor<?x4xf32>)
// CHECK:           %[[A:.*]] = cortex.relu %x : tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK:           %[[C:.*]] = tensor.cast %[[A]] : tensor<2x4xf32> to tensor<?x4xf32>
// CHECK:           scf.yield %[[C]] : tensor<?x4xf32>
// CHECK:           scf.yield %y : tensor<?x4xf32>
func.func @one_branch_known(%x: tensor<2x4xf32>, %y: tensor<?x4xf32>, %c: i1) -> tensor<?x4xf32> {
  %r = scf.if %c -> (tensor<?x4xf32>) {
    %a = cortex.relu %x : tensor<2x4xf32> -> tensor<?x4xf32>
    scf.yield %a : tensor<?x4xf32>
  } else {
    scf.yield %y : tensor<?x4xf32>
  }
  func.return %r : tensor<?x4xf32>
}
