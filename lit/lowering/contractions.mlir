// Contractions: 2-D matmul → linalg.matmul from a zero fill; batched (with
// broadcast batch dims) → one linalg.generic; linear → matmul into the
// broadcast bias, the weight transposed at compile time when constant;
// batch_norm → one generic with per-channel maps.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK:         %[[Z:.*]] = linalg.fill {cortex.origin = "y"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x4xf32>)
// CHECK-NEXT:    %y = linalg.matmul {cortex.origin = "y"} ins(%a, %b : tensor<3x5xf32>, tensor<5x4xf32>) outs(%[[Z]] : tensor<3x4xf32>) -> tensor<3x4xf32>
func.func @matmul(%a: tensor<3x5xf32>, %b: tensor<5x4xf32>) -> tensor<3x4xf32> {
  %y = cortex.matmul %a, %b : (tensor<3x5xf32>, tensor<5x4xf32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @batched
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (0, d1, d2, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[W:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[X]], %[[W]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[ACC]], %[[M]] : f32
func.func @batched(%a: tensor<1x2x3x5xf32>, %b: tensor<3x1x5x4xf32>) -> tensor<3x2x3x4xf32> {
  %y = cortex.matmul %a, %b : (tensor<1x2x3x5xf32>, tensor<3x1x5x4xf32>) -> tensor<3x2x3x4xf32>
  func.return %y : tensor<3x2x3x4xf32>
}

// A constant weight is transposed at compile time: [[1, 2, 3], [4, 5, 6]]ᵀ.
// CHECK-LABEL: func.func @linear_constant
// CHECK:         %[[WT:.*]] = arith.constant {cortex.origin = "y"} dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK:         %[[B:.*]] = linalg.broadcast ins(%b:tensor<2xf32>) outs(%{{.*}}:tensor<4x2xf32>) dimensions = [0]
// CHECK-NEXT:    %y = linalg.matmul {cortex.origin = "y"} ins(%x, %[[WT]] : tensor<4x3xf32>, tensor<3x2xf32>) outs(%[[B]] : tensor<4x2xf32>)
func.func @linear_constant(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = cortex.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %b = cortex.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %y = cortex.linear %x, %w, %b : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}

// A runtime weight is transposed by linalg.transpose; rank-3 x is collapsed to rows and back.
// CHECK-LABEL: func.func @linear_runtime
// CHECK:         %[[WT:.*]] = linalg.transpose ins(%w:tensor<2x3xf32>) outs(%{{.*}}:tensor<3x2xf32>) permutation = [1, 0]
// CHECK:         %[[X:.*]] = tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] {cortex.origin = "y"} : tensor<2x4x3xf32> into tensor<8x3xf32>
// CHECK:         %[[M:.*]] = linalg.matmul {cortex.origin = "y"} ins(%[[X]], %[[WT]] : tensor<8x3xf32>, tensor<3x2xf32>)
// CHECK:         %y = tensor.expand_shape %[[M]] {{\[}}[0 : i64, 1 : i64], [2 : i64]] output_shape [2, 4, 2] {cortex.origin = "y"} : tensor<8x2xf32> into tensor<2x4x2xf32>
func.func @linear_runtime(%x: tensor<2x4x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x4x2xf32> {
  %y = cortex.linear %x, %w : (tensor<2x4x3xf32>, tensor<2x3xf32>) -> tensor<2x4x2xf32>
  func.return %y : tensor<2x4x2xf32>
}

// CHECK-LABEL: func.func @batch_norm
// CHECK:         %[[INV:.*]] = linalg.generic {{.*}} ins(%v : tensor<3xf32>)
// CHECK:           arith.constant 1.000000e-03 : f32
// CHECK:           math.sqrt
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%x, %m, %[[INV]], %s, %b :
// CHECK:           arith.subf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NOT:   cortex.
func.func @batch_norm(%x: tensor<2x3x4x5xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x5xf32> {
  %y = cortex.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>
  func.return %y : tensor<2x3x4x5xf32>
}
