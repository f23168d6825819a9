// The quantised ops print and parse back (custom and generic forms).
// RUN: cortex-opt %s | cortex-opt | filecheck %s
// RUN: cortex-opt %s --print-op-generic | cortex-opt | filecheck %s
// RUN: cortex-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @all_ops(
// CHECK: cortex.quantize %{{.*}} {scale = 5.000000e-02 : f32, zero_point = 3 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xi8>
// CHECK: cortex.requantize %{{.*}} {in_scale = 5.000000e-02 : f32, in_zero_point = 3 : i64, scale = 1.000000e-01 : f32} : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xi8>
// CHECK: cortex.qconv2d %{{.*}}, %{{.*}}, %{{.*}} {x_scale = 1.000000e-01 : f32, w_scales = array<f32: 1.000000e-02, 2.000000e-02, 3.000000e-02>, out_scale = 2.000000e-01 : f32, out_zero_point = -5 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>, tensor<3xi32>) -> tensor<1x3x4x4xi8>
// CHECK: cortex.qrelu %{{.*}} {zero_point = -5 : i64} : tensor<1x3x4x4xi8> -> tensor<1x3x4x4xi8>
// CHECK: cortex.qmax_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x4x4xi8> -> tensor<1x3x2x2xi8>
// CHECK: cortex.reshape %{{.*}} : tensor<1x3x2x2xi8> -> tensor<1x12xi8>
// CHECK: cortex.qlinear %{{.*}}, %{{.*}} {x_scale = 2.000000e-01 : f32, x_zero_point = -5 : i64, w_scales = array<f32: 1.000000e-02>, out_scale = 1.000000e+00 : f32} : (tensor<1x12xi8>, tensor<2x12xi8>) -> tensor<1x2xi8>
// CHECK: cortex.qmatmul %{{.*}}, %{{.*}} {x_scale = 1.000000e+00 : f32, w_scales = array<f32: 5.000000e-01>, w_zero_point = 1 : i64, out_scale = 2.000000e+00 : f32} : (tensor<1x2xi8>, tensor<2x2xi8>) -> tensor<1x2xi8>
// CHECK: cortex.dequantize %{{.*}} {scale = 2.000000e+00 : f32} : tensor<1x2xi8> -> tensor<1x2xf32>

// GENERIC: "cortex.qconv2d"(%{{.*}}, %{{.*}}, %{{.*}}) <{x_scale = 1.000000e-01 : f32, w_scales = array<f32: 1.000000e-02, 2.000000e-02, 3.000000e-02>, out_scale = 2.000000e-01 : f32, out_zero_point = -5 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, x_zero_point = 0 : i64, w_zero_point = 0 : i64}>
func.func @all_ops(%x: tensor<1x2x4x4xf32>, %m: tensor<2x2xi8>) -> tensor<1x2xf32> {
  %q = cortex.quantize %x {scale = 0.05 : f32, zero_point = 3 : i64} : tensor<1x2x4x4xf32> -> tensor<1x2x4x4xi8>
  %r = cortex.requantize %q {in_scale = 0.05 : f32, in_zero_point = 3 : i64, scale = 0.1 : f32} : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xi8>
  %w = cortex.constant dense<1> : tensor<3x2x3x3xi8>
  %b = cortex.constant dense<[1, 2, 3]> : tensor<3xi32>
  %c = cortex.qconv2d %r, %w, %b {x_scale = 0.1 : f32, w_scales = array<f32: 0.01, 0.02, 0.03>, out_scale = 0.2 : f32, out_zero_point = -5 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xi8>, tensor<3x2x3x3xi8>, tensor<3xi32>) -> tensor<1x3x4x4xi8>
  %a = cortex.qrelu %c {zero_point = -5 : i64} : tensor<1x3x4x4xi8> -> tensor<1x3x4x4xi8>
  %p = cortex.qmax_pool %a {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x4x4xi8> -> tensor<1x3x2x2xi8>
  %f = cortex.reshape %p : tensor<1x3x2x2xi8> -> tensor<1x12xi8>
  %lw = cortex.constant dense<2> : tensor<2x12xi8>
  %l = cortex.qlinear %f, %lw {x_scale = 0.2 : f32, x_zero_point = -5 : i64, w_scales = array<f32: 0.01>, out_scale = 1.0 : f32} : (tensor<1x12xi8>, tensor<2x12xi8>) -> tensor<1x2xi8>
  %mm = cortex.qmatmul %l, %m {x_scale = 1.0 : f32, w_scales = array<f32: 0.5>, w_zero_point = 1 : i64, out_scale = 2.0 : f32} : (tensor<1x2xi8>, tensor<2x2xi8>) -> tensor<1x2xi8>
  %y = cortex.dequantize %mm {scale = 2.0 : f32} : tensor<1x2xi8> -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}

// CHECK-LABEL: func.func @qadd(
// CHECK: cortex.qadd %{{.*}}, %{{.*}} {lhs_scale = 1.000000e-01 : f32, lhs_zero_point = 2 : i64, rhs_scale = 2.000000e-01 : f32, out_scale = 2.500000e-01 : f32, out_zero_point = -3 : i64} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2x3xi8>
func.func @qadd(%a: tensor<2x3xi8>, %b: tensor<3xi8>) -> tensor<2x3xi8> {
  %s = cortex.qadd %a, %b {lhs_scale = 0.1 : f32, lhs_zero_point = 2 : i64, rhs_scale = 0.2 : f32, out_scale = 0.25 : f32, out_zero_point = -3 : i64} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2x3xi8>
  func.return %s : tensor<2x3xi8>
}
