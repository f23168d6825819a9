// One case per verifier rule of the quantised ops (dialects/quant.py).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @quantize_of_int(%x: tensor<4xi8>) {
  // expected-error@+1 {{'cortex.quantize' op x must have a float element type, got tensor<4xi8>}}
  %q = cortex.quantize %x {scale = 0.1 : f32} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @quantize_result_not_i8(%x: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.quantize' op result #0 has type tensor<4xi32>, but the operands imply tensor<4xi8>}}
  %q = cortex.quantize %x {scale = 0.1 : f32} : tensor<4xf32> -> tensor<4xi32>
  func.return
}

// -----

func.func @zero_scale(%x: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.quantize' op scale must be a positive finite number, got 0.0}}
  %q = cortex.quantize %x {scale = 0.0 : f32} : tensor<4xf32> -> tensor<4xi8>
  func.return
}

// -----

func.func @zero_point_out_of_int8(%x: tensor<4xi8>) {
  // expected-error@+1 {{'cortex.dequantize' op zero_point must lie in [-128, 127] (int8), got 200}}
  %d = cortex.dequantize %x {scale = 0.1 : f32, zero_point = 200 : i64} : tensor<4xi8> -> tensor<4xf32>
  func.return
}

// -----

func.func @dequantize_of_float(%x: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.dequantize' op x must be an i8 tensor, got tensor<4xf32>}}
  %d = cortex.dequantize %x {scale = 0.1 : f32} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @requantize_bad_in_scale(%x: tensor<4xi8>) {
  // expected-error@+1 {{'cortex.requantize' op in_scale must be a positive finite number, got -1.0}}
  %r = cortex.requantize %x {in_scale = -1.0 : f32, scale = 0.1 : f32} : tensor<4xi8> -> tensor<4xi8>
  func.return
}

// -----

func.func @qconv_float_weight(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.qconv2d' op weight must be an i8 tensor, got tensor<3x2x3x3xf32>}}
  %c = cortex.qconv2d %x, %w {x_scale = 0.1 : f32, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xi8>
  func.return
}

// -----

func.func @qconv_bias_not_i32(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>, %b: tensor<3xi8>) {
  // expected-error@+1 {{'cortex.qconv2d' op bias must be an i32 tensor, got tensor<3xi8>}}
  %c = cortex.qconv2d %x, %w, %b {x_scale = 0.1 : f32, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>, tensor<3xi8>) -> tensor<1x3x2x2xi8>
  func.return
}

// -----

func.func @qconv_scales_per_channel_count(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) {
  // expected-error@+1 {{'cortex.qconv2d' op w_scales must hold 1 (per tensor) or 3 (per channel) scales, got 2}}
  %c = cortex.qconv2d %x, %w {x_scale = 0.1 : f32, w_scales = array<f32: 0.01, 0.02>, out_scale = 0.2 : f32} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x2x2xi8>
  func.return
}

// -----

func.func @qconv_wrong_shape(%x: tensor<1x2x4x4xi8>, %w: tensor<3x2x3x3xi8>) {
  // expected-error@+1 {{'cortex.qconv2d' op result #0 has type tensor<1x3x4x4xi8>, but the operands imply tensor<1x3x2x2xi8>}}
  %c = cortex.qconv2d %x, %w {x_scale = 0.1 : f32, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>) -> tensor<1x3x4x4xi8>
  func.return
}

// -----

func.func @qlinear_bad_out_zero_point(%x: tensor<1x4xi8>, %w: tensor<2x4xi8>) {
  // expected-error@+1 {{'cortex.qlinear' op out_zero_point must lie in [-128, 127] (int8), got -129}}
  %l = cortex.qlinear %x, %w {x_scale = 0.1 : f32, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32, out_zero_point = -129 : i64} : (tensor<1x4xi8>, tensor<2x4xi8>) -> tensor<1x2xi8>
  func.return
}

// -----

func.func @qmatmul_batched(%a: tensor<2x1x4xi8>, %b: tensor<2x4x3xi8>) {
  // expected-error@+1 {{'cortex.qmatmul' op cortex.qmatmul takes 2-D operands, got 2x1x4 and 2x4x3}}
  %m = cortex.qmatmul %a, %b {x_scale = 0.1 : f32, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32} : (tensor<2x1x4xi8>, tensor<2x4x3xi8>) -> tensor<2x1x3xi8>
  func.return
}

// -----

func.func @qrelu_of_float(%x: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.qrelu' op x must be an i8 tensor, got tensor<4xf32>}}
  %r = cortex.qrelu %x : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @qmax_pool_window_too_big(%x: tensor<1x1x2x2xi8>) {
  // expected-error@+1 {{'cortex.qmax_pool' op}}
  %p = cortex.qmax_pool %x {kernel_shape = array<i64: 3, 3>} : tensor<1x1x2x2xi8> -> tensor<1x1x1x1xi8>
  func.return
}

// -----

func.func @qadd_does_not_broadcast(%a: tensor<2x3xi8>, %b: tensor<2xi8>) {
  // expected-error@+1 {{'cortex.qadd' op shapes 2x3 and 1x2 do not broadcast}}
  %s = cortex.qadd %a, %b {lhs_scale = 0.1 : f32, rhs_scale = 0.2 : f32, out_scale = 0.25 : f32} : (tensor<2x3xi8>, tensor<2xi8>) -> tensor<2x3xi8>
  func.return
}
