// convert-cortex-to-linalg on the quantised ops: int8 × int8 products accumulate
// in i32 inside linalg.generic (extsi, subi of the zero point, muli, addi),
// then one elementwise rescale to i8; upstream mlir-opt verifies the result.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg --print-op-generic | %mlir-opt > /dev/null
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @qlinear(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME:        ins(%{{.*}}, %{{.*}} : tensor<2x4xi8>, tensor<4x3xi8>) outs(%{{.*}} : tensor<2x3xi32>)
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.subi
// CHECK:           arith.extsi %{{.*}} : i8 to i32
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK:         linalg.generic
// CHECK:           arith.sitofp %{{.*}} : i32 to f32
// CHECK:           math.roundeven
// CHECK:           arith.fptosi %{{.*}} : f32 to i8
// CHECK-NOT:     = cortex.
func.func @qlinear(%x: tensor<2x4xi8>) -> tensor<2x3xi8> {
  %w = cortex.constant dense<[[1, -2, 3, 4], [5, 6, -7, 8], [1, 1, 1, 1]]> : tensor<3x4xi8>
  %b = cortex.constant dense<[10, -20, 30]> : tensor<3xi32>
  %l = cortex.qlinear %x, %w, %b {x_scale = 0.05 : f32, x_zero_point = 3 : i64, w_scales = array<f32: 0.1, 0.2, 0.3>, out_scale = 0.2 : f32} : (tensor<2x4xi8>, tensor<3x4xi8>, tensor<3xi32>) -> tensor<2x3xi8>
  func.return %l : tensor<2x3xi8>
}

// CHECK-LABEL: func.func @qconv_pool(
// CHECK:         linalg.fill {{.*}}ins(%{{.*}} : i8)
// CHECK:         tensor.insert_slice
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// CHECK-SAME:        outs(%{{.*}} : tensor<1x2x4x4xi32>)
// CHECK:           arith.muli
// CHECK:           arith.addi
// CHECK:         arith.maxsi
// CHECK:         arith.maxsi
// CHECK-NOT:     = cortex.
func.func @qconv_pool(%x: tensor<1x1x4x4xi8>) -> tensor<1x2x2x2xi8> {
  %w = cortex.constant dense<1> : tensor<2x1x3x3xi8>
  %c = cortex.qconv2d %x, %w {x_scale = 0.1 : f32, x_zero_point = -3 : i64, w_scales = array<f32: 0.01>, out_scale = 0.2 : f32, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xi8>, tensor<2x1x3x3xi8>) -> tensor<1x2x4x4xi8>
  %r = cortex.qrelu %c : tensor<1x2x4x4xi8> -> tensor<1x2x4x4xi8>
  %p = cortex.qmax_pool %r {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xi8> -> tensor<1x2x2x2xi8>
  func.return %p : tensor<1x2x2x2xi8>
}

// CHECK-LABEL: func.func @edges(
// CHECK:         arith.divf
// CHECK:         math.roundeven
// CHECK:         arith.fptosi %{{.*}} : f32 to i8
// CHECK:         arith.extsi %{{.*}} : i8 to i32
// CHECK:         arith.sitofp
// CHECK:         arith.mulf
// CHECK-NOT:     = cortex.
func.func @edges(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = cortex.quantize %x {scale = 0.5 : f32, zero_point = 1 : i64} : tensor<4xf32> -> tensor<4xi8>
  %r = cortex.requantize %q {in_scale = 0.5 : f32, in_zero_point = 1 : i64, scale = 0.25 : f32} : tensor<4xi8> -> tensor<4xi8>
  %d = cortex.dequantize %r {scale = 0.25 : f32} : tensor<4xi8> -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// CHECK-LABEL: func.func @qadd(
// CHECK:         linalg.generic
// CHECK:           arith.extsi
// CHECK:           arith.sitofp
// CHECK:           arith.addf
// CHECK:           math.roundeven
// CHECK:           arith.fptosi %{{.*}} : f32 to i8
// CHECK-NOT:     = cortex.
func.func @qadd(%a: tensor<2x3xi8>, %b: tensor<3xi8>) -> tensor<2x3xi8> {
  %s = cortex.qadd %a, %b {lhs_scale = 0.1 : f32, lhs_zero_point = 2 : i64, rhs_scale = 0.2 : f32, out_scale = 0.25 : f32, out_zero_point = -3 : i64} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2x3xi8>
  func.return %s : tensor<2x3xi8>
}
