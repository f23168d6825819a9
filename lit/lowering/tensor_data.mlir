// The data-movement ops lower to the tensor dialect (concat: insert_slice chain into one
// tensor.empty; pad: insert_slice into a fill of the value; slice: one strided extract_slice),
// max/min/erf to one elementwise linalg.generic each, and a grouped conv2d to one linalg.generic
// over (n, g, o, oh, ow; c, kh, kw) on the group-split input and weight.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @concat
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT:    %[[A:.*]] = tensor.insert_slice %a into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK-NEXT:    %y = tensor.insert_slice %b into %[[A]][0, 3] [2, 1] [1, 1]
// CHECK-LABEL: func.func @pad
// CHECK:         %[[V:.*]] = arith.constant {{.*}}-1.000000e+00 : f32
// CHECK:         %[[F:.*]] = linalg.fill {{.*}}ins(%[[V]] : f32)
// CHECK-NEXT:    %y = tensor.insert_slice %a into %[[F]][1, 0] [2, 3] [1, 1]
// CHECK-LABEL: func.func @slice
// CHECK-NEXT:    %y = tensor.extract_slice %a[1, 0] [2, 3] [2, 3]
// CHECK-LABEL: func.func @max_erf
// CHECK:         arith.maximumf
// CHECK:         arith.minimumf
// CHECK:         math.erf
// CHECK-LABEL: func.func @depthwise
// CHECK:         tensor.insert_slice %x into %{{.*}}[0, 0, 1, 1] [1, 2, 8, 8]
// CHECK:         tensor.expand_shape {{.*}} into tensor<1x2x1x9x9xf32>
// CHECK:         tensor.expand_shape %w {{.*}} into tensor<2x1x1x3x3xf32>
// CHECK:         linalg.broadcast ins(%{{.*}}:tensor<2x1xf32>) outs(%{{.*}}:tensor<1x2x1x4x4xf32>) dimensions = [0, 3, 4]
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d5, ((d3 * 2) + d6), ((d4 * 2) + d7))>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d1, d2, d5, d6, d7)>, affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d0, d1, d2, d3, d4)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK:           arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK:         %y = tensor.collapse_shape {{.*}} into tensor<1x2x4x4xf32>

func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>) -> tensor<2x4xf32> {
  %y = cortex.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
func.func @pad(%a: tensor<2x3xf32>) -> tensor<3x5xf32> {
  %y = cortex.pad %a {pads = array<i64: 1, 0, 0, 2>, value = -1.0 : f32} : tensor<2x3xf32> -> tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}
func.func @slice(%a: tensor<4x7xf32>) -> tensor<2x3xf32> {
  %y = cortex.slice %a {starts = array<i64: 1, 0>, sizes = array<i64: 2, 3>, steps = array<i64: 2, 3>} : tensor<4x7xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
func.func @max_erf(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %m = cortex.max %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %n = cortex.min %m, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %y = cortex.erf %n : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
func.func @depthwise(%x: tensor<1x2x8x8xf32>, %w: tensor<2x1x3x3xf32>, %b: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %y = cortex.conv2d %x, %w, %b {group = 2 : i64, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 0, 0>} : (tensor<1x2x8x8xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
