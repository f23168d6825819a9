// Elementwise ops: one linalg.generic each; NumPy broadcasting lives in the
// indexing maps (trailing alignment, constant 0 for a broadcast size-1 dim,
// no result for a rank-0 operand).
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @add_row
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b : tensor<2x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2x3xf32>)
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
func.func @add_row(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %y = cortex.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @sub_both
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 0, d2)>, affine_map<(d0, d1, d2) -> (d1, 0)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>]
// CHECK:           arith.subf
func.func @sub_both(%a: tensor<2x1x3xf32>, %b: tensor<4x1xf32>) -> tensor<2x4x3xf32> {
  %y = cortex.sub %a, %b : (tensor<2x1x3xf32>, tensor<4x1xf32>) -> tensor<2x4x3xf32>
  func.return %y : tensor<2x4x3xf32>
}

// CHECK-LABEL: func.func @mul_scalar
// CHECK:         %[[C:.*]] = arith.constant {cortex.origin = "two"} dense<2.000000e+00> : tensor<f32>
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], {{.*}} ins(%x, %[[C]] : tensor<3x4xf32>, tensor<f32>)
// CHECK:           arith.mulf
func.func @mul_scalar(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %two = cortex.constant dense<2.0> : tensor<f32>
  %y = cortex.mul %x, %two : (tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// CHECK-LABEL: func.func @unary
// CHECK:         arith.negf
// CHECK:         math.exp
// CHECK:         math.log
// CHECK:         math.sqrt
// CHECK:         math.absf
// CHECK:         arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    arith.maximumf
// CHECK:         arith.negf
// CHECK-NEXT:    math.exp
// CHECK-NEXT:    arith.addf
// CHECK-NEXT:    arith.divf
// CHECK:         math.tanh
// CHECK:         arith.divf
// CHECK:         math.powf
func.func @unary(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cortex.neg %x : tensor<4xf32> -> tensor<4xf32>
  %1 = cortex.exp %0 : tensor<4xf32> -> tensor<4xf32>
  %2 = cortex.log %1 : tensor<4xf32> -> tensor<4xf32>
  %3 = cortex.sqrt %2 : tensor<4xf32> -> tensor<4xf32>
  %4 = cortex.abs %3 : tensor<4xf32> -> tensor<4xf32>
  %5 = cortex.relu %4 : tensor<4xf32> -> tensor<4xf32>
  %6 = cortex.sigmoid %5 : tensor<4xf32> -> tensor<4xf32>
  %7 = cortex.tanh %6 : tensor<4xf32> -> tensor<4xf32>
  %8 = cortex.div %7, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = cortex.pow %8, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %9 : tensor<4xf32>
}
