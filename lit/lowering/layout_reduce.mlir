// Layout and reductions: transpose → linalg.transpose; reshape →
// collapse_shape / expand_shape (through 1-D when the shapes do not nest);
// reduce_* → linalg.reduce (+ a divide for mean, a reshape for keepdims);
// softmax → reduce max, exp(x − max), reduce add, divide.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @transpose
// CHECK:         %y = linalg.transpose ins(%x:tensor<2x3x4xf32>) outs(%{{.*}}:tensor<4x2x3xf32>) permutation = [2, 0, 1]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %y = cortex.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  func.return %y : tensor<4x2x3xf32>
}

// CHECK-LABEL: func.func @reshapes
// CHECK:         %a = tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64], [2 : i64]] {cortex.origin = "a"} : tensor<2x3x4xf32> into tensor<6x4xf32>
// CHECK-NEXT:    %b = tensor.expand_shape %a {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [2, 3, 2, 2] {cortex.origin = "b"} : tensor<6x4xf32> into tensor<2x3x2x2xf32>
// CHECK-NEXT:    %[[FLAT:.*]] = tensor.collapse_shape %x {{\[}}[0 : i64, 1 : i64, 2 : i64]] {cortex.origin = "c"} : tensor<2x3x4xf32> into tensor<24xf32>
// CHECK-NEXT:    %c = tensor.expand_shape %[[FLAT]] {{\[}}[0 : i64, 1 : i64]] output_shape [4, 6] {cortex.origin = "c"} : tensor<24xf32> into tensor<4x6xf32>
func.func @reshapes(%x: tensor<2x3x4xf32>) -> (tensor<2x3x2x2xf32>, tensor<4x6xf32>) {
  %a = cortex.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %b = cortex.reshape %a : tensor<6x4xf32> -> tensor<2x3x2x2xf32>
  %c = cortex.reshape %x : tensor<2x3x4xf32> -> tensor<4x6xf32>
  func.return %b, %c : tensor<2x3x2x2xf32>, tensor<4x6xf32>
}

// CHECK-LABEL: func.func @reductions
// CHECK:         %sum = linalg.reduce ins(%x:tensor<2x3x4xf32>) outs(%{{.*}}:tensor<f32>) dimensions = [0, 1, 2]
// CHECK:           arith.addf
// CHECK:         %[[M:.*]] = linalg.reduce ins(%x:tensor<2x3x4xf32>) outs(%{{.*}}:tensor<3xf32>) dimensions = [0, 2]
// CHECK:         %[[MEAN:.*]] = linalg.generic
// CHECK:           arith.constant 8.000000e+00 : f32
// CHECK-NEXT:      arith.divf
// CHECK:         %mean = tensor.expand_shape %[[MEAN]] {{\[}}[0 : i64, 1 : i64, 2 : i64]] output_shape [1, 3, 1] {cortex.origin = "mean"} : tensor<3xf32> into tensor<1x3x1xf32>
// CHECK:         %[[NEG:.*]] = arith.constant {cortex.origin = "max"} 0xff800000 : f32
// CHECK:         %max = linalg.reduce ins(%x:tensor<2x3x4xf32>) outs(%{{.*}}:tensor<2x3xf32>) dimensions = [2]
// CHECK:           arith.maximumf
func.func @reductions(%x: tensor<2x3x4xf32>) -> (tensor<f32>, tensor<1x3x1xf32>, tensor<2x3xf32>) {
  %sum = cortex.reduce_sum %x {keepdims = 0 : i64} : tensor<2x3x4xf32> -> tensor<f32>
  %mean = cortex.reduce_mean %x {axes = array<i64: 0, 2>} : tensor<2x3x4xf32> -> tensor<1x3x1xf32>
  %max = cortex.reduce_max %x {axes = array<i64: -1>, keepdims = 0 : i64} : tensor<2x3x4xf32> -> tensor<2x3xf32>
  func.return %sum, %mean, %max : tensor<f32>, tensor<1x3x1xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func.func @softmax
// CHECK:         %[[PEAK:.*]] = linalg.reduce ins(%x:tensor<2x4x3xf32>) outs(%{{.*}}:tensor<2x3xf32>) dimensions = [1]
// CHECK:           arith.maximumf
// CHECK:         %[[E:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], {{.*}} ins(%x, %[[PEAK]] :
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:         %[[SUM:.*]] = linalg.reduce ins(%[[E]]:tensor<2x4x3xf32>) outs(%{{.*}}:tensor<2x3xf32>) dimensions = [1]
// CHECK:         %y = linalg.generic {{.*}} ins(%[[E]], %[[SUM]] :
// CHECK:           arith.divf
// CHECK-NOT:   cortex.
func.func @softmax(%x: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %y = cortex.softmax %x {axis = 1 : i64} : tensor<2x4x3xf32> -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}
