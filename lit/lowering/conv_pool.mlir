// conv2d and pooling: ONNX pads become a constant-padded copy (fill, then
// tensor.insert_slice); conv accumulates into the broadcast bias; pooling is
// a windowed linalg.generic (xDSL has no pooling_nchw_sum, and its
// pooling_nchw_max body is wrong); avg_pool divides by the count of real cells.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @conv
// CHECK:         %[[PADDED:.*]] = linalg.fill {cortex.origin = "y"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x3x9x10xf32>)
// CHECK-NEXT:    %[[X:.*]] = tensor.insert_slice %x into %[[PADDED]][0, 0, 1, 0] [2, 3, 7, 8] [1, 1, 1, 1] {cortex.origin = "y"} : tensor<2x3x7x8xf32> into tensor<2x3x9x10xf32>
// CHECK:         %[[B:.*]] = linalg.broadcast ins(%b:tensor<4xf32>) outs(%{{.*}}:tensor<2x4x4x5xf32>) dimensions = [0, 2, 3]
// CHECK-NEXT:    %y = linalg.conv_2d_nchw_fchw {cortex.origin = "y", strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%[[X]], %w : tensor<2x3x9x10xf32>, tensor<4x3x3x2xf32>) outs(%[[B]] : tensor<2x4x4x5xf32>)
func.func @conv(%x: tensor<2x3x7x8xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x5xf32> {
  %y = cortex.conv2d %x, %w, %b {pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  func.return %y : tensor<2x4x4x5xf32>
}

// Windows reaching into the padding hold 4 or 6 real cells, the others 9.
// CHECK-LABEL: func.func @avg_pool
// CHECK:         tensor.insert_slice %x into %{{.*}}[0, 0, 1, 1] [1, 2, 5, 6] [1, 1, 1, 1]
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, ((d2 * 2) + d4), ((d3 * 2) + d5))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK:           arith.addf
// CHECK:         %[[COUNT:.*]] = arith.constant {cortex.origin = "y"} dense<{{\[}}[4.000000e+00, 6.000000e+00, 6.000000e+00], [6.000000e+00, 9.000000e+00, 9.000000e+00], [4.000000e+00, 6.000000e+00, 6.000000e+00]]> : tensor<3x3xf32>
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], {{.*}} ins(%[[SUM]], %[[COUNT]] :
// CHECK:           arith.divf
func.func @avg_pool(%x: tensor<1x2x5x6xf32>) -> tensor<1x2x3x3xf32> {
  %y = cortex.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x5x6xf32> -> tensor<1x2x3x3xf32>
  func.return %y : tensor<1x2x3x3xf32>
}

// CHECK-LABEL: func.func @max_pool
// CHECK:         arith.constant {cortex.origin = "y"} 0xff800000 : f32
// CHECK:         tensor.insert_slice %x into %{{.*}}[0, 0, 1, 0] [1, 2, 5, 5] [1, 1, 1, 1]
// CHECK:         arith.constant {cortex.origin = "y"} 0xff800000 : f32
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, (d2 + d4), (d3 + d5))>,
// CHECK:           arith.maximumf
// CHECK-NOT:   cortex.
func.func @max_pool(%x: tensor<1x2x5x5xf32>) -> tensor<1x2x5x5xf32> {
  %y = cortex.max_pool %x {kernel_shape = array<i64: 3, 2>, pads = array<i64: 1, 0, 1, 1>} : tensor<1x2x5x5xf32> -> tensor<1x2x5x5xf32>
  func.return %y : tensor<1x2x5x5xf32>
}
