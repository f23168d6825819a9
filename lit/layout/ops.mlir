// The NHWC ops: round trip, verifier errors, and lowering (linalg.conv_2d_nhwc_hwcf,
// windowed generics) that upstream mlir-opt accepts.
// RUN: cortex-opt %s --split-input-file | cortex-opt --split-input-file | filecheck %s --check-prefix=ROUND
// RUN: cortex-opt %s --split-input-file -p convert-cortex-to-linalg | filecheck %s --check-prefix=LOWER
// RUN: cortex-opt %s --split-input-file -p convert-cortex-to-linalg --print-op-generic | %mlir-opt --split-input-file > /dev/null
// REQUIRES: mlir-opt

// ROUND: cortex.conv2d_nhwc %{{.*}}, %{{.*}}, %{{.*}} {strides = array<i64: 2, 2>} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
// ROUND: cortex.avg_pool_nhwc %{{.*}} {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x2x4xf32> -> tensor<1x3x3x4xf32>
// ROUND: cortex.batch_norm_nhwc
// LOWER: linalg.conv_2d_nhwc_hwcf {{.*}}strides = dense<2> : tensor<2xi64>
// LOWER: linalg.generic
// LOWER: arith.divf
func.func @ops(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x2x4xf32>, %b: tensor<4xf32>) -> tensor<1x3x3x4xf32> {
  %c = cortex.conv2d_nhwc %x, %w, %b {strides = array<i64: 2, 2>} : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>) -> tensor<1x2x2x4xf32>
  %p = cortex.avg_pool_nhwc %c {kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x2x4xf32> -> tensor<1x3x3x4xf32>
  %n = cortex.batch_norm_nhwc %p, %b, %b, %b, %b : (tensor<1x3x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  func.return %n : tensor<1x3x3x4xf32>
}

// -----

// ROUND: cortex.max_pool_nhwc %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x3xf32> -> tensor<1x2x2x3xf32>
// LOWER-LABEL: func.func @max_pool
// LOWER: linalg.generic
// LOWER: arith.maximumf
func.func @max_pool(%x: tensor<1x4x4x3xf32>) -> tensor<1x2x2x3xf32> {
  %m = cortex.max_pool_nhwc %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x4x3xf32> -> tensor<1x2x2x3xf32>
  func.return %m : tensor<1x2x2x3xf32>
}
