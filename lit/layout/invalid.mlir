// Verifier rules of the NHWC ops (dialects/layout.py).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @conv_channels_mismatch(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x3x4xf32>) {
  // expected-error@+1 {{'cortex.conv2d_nhwc' op conv2d: input has 2 channels but the weight expects 3}}
  %c = cortex.conv2d_nhwc %x, %w : (tensor<1x5x5x2xf32>, tensor<3x3x3x4xf32>) -> tensor<1x3x3x4xf32>
  func.return
}

// -----

func.func @conv_wrong_result(%x: tensor<1x5x5x2xf32>, %w: tensor<3x3x2x4xf32>) {
  // expected-error@+1 {{'cortex.conv2d_nhwc' op result #0 has type tensor<1x4x3x3xf32>, but the operands imply tensor<1x3x3x4xf32>}}
  %c = cortex.conv2d_nhwc %x, %w : (tensor<1x5x5x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x3x3xf32>
  func.return
}

// -----

func.func @pool_not_4d(%x: tensor<5x5x2xf32>) {
  // expected-error@+1 {{'cortex.max_pool_nhwc' op x must be a 4-D NHWC tensor, got 5x5x2}}
  %p = cortex.max_pool_nhwc %x {kernel_shape = array<i64: 2, 2>} : tensor<5x5x2xf32> -> tensor<4x4x2xf32>
  func.return
}

// -----

func.func @batch_norm_params_not_per_channel(%x: tensor<1x2x2x4xf32>, %p: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.batch_norm_nhwc' op}}
  %n = cortex.batch_norm_nhwc %x, %p, %p, %p, %p : (tensor<1x2x2x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x4xf32>
  func.return
}
