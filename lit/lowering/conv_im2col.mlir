// cortex-conv-im2col: linalg.conv_2d_nchw_fchw as an im2col gather (a copying
// linalg.generic with the window map), one collapse and one linalg.matmul with
// the filter on the left; the bias broadcast is re-made for F x (N*OH*OW), the
// old accumulator erased; a batch of one needs no transpose. mlir-opt accepts it.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-conv-im2col | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-conv-im2col,cortex-fold-constant-layouts | filecheck %s --check-prefix=FOLD
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-conv-im2col,cortex-fold-constant-layouts --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @conv
// CHECK-NOT:     linalg.conv_2d_nchw_fchw
// CHECK-NOT:     dimensions = [0, 2, 3]
// CHECK:         %[[COLS:.*]] = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, ((d4 * 2) + d1), ((d5 * 2) + d2))>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3, d4, d5)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
// CHECK-SAME:      outs(%{{.*}} : tensor<3x3x2x2x4x5xf32>)
// CHECK:         %[[K:.*]] = tensor.collapse_shape %[[COLS]] {{\[}}[0 : i64, 1 : i64, 2 : i64], [3 : i64, 4 : i64, 5 : i64]] {cortex.origin = "y"} : tensor<3x3x2x2x4x5xf32> into tensor<18x40xf32>
// CHECK:         %[[W:.*]] = tensor.collapse_shape %w {{.*}} : tensor<4x3x3x2xf32> into tensor<4x18xf32>
// CHECK:         %[[B:.*]] = linalg.broadcast ins(%b:tensor<4xf32>) outs(%{{.*}}:tensor<4x40xf32>) dimensions = [1]
// CHECK:         %[[P:.*]] = linalg.matmul {cortex.origin = "y"} ins(%[[W]], %[[K]] : tensor<4x18xf32>, tensor<18x40xf32>) outs(%[[B]] : tensor<4x40xf32>)
// CHECK:         %[[E:.*]] = tensor.expand_shape %[[P]] {{.*}} : tensor<4x40xf32> into tensor<4x2x4x5xf32>
// CHECK:         %y = linalg.transpose ins(%[[E]]:tensor<4x2x4x5xf32>) outs(%{{.*}}:tensor<2x4x4x5xf32>) permutation = [1, 0, 2, 3]
func.func @conv(%x: tensor<2x3x7x8xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x5xf32> {
  %y = cortex.conv2d %x, %w, %b {pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  func.return %y : tensor<2x4x4x5xf32>
}

// A constant filter is reshaped at compile time; dilations scale the window dims.
// CHECK-LABEL: func.func @conv_const
// CHECK:         affine_map<(d0, d1, d2, d3, d4, d5) -> (d3, d0, (d4 + (d1 * 2)), (d5 + (d2 * 2)))>
// CHECK:         %[[W:.*]] = arith.constant {cortex.origin = "y"} dense<5.000000e-01> : tensor<3x18xf32>
// CHECK:         linalg.matmul {cortex.origin = "y"} ins(%[[W]], %{{.*}} : tensor<3x18xf32>, tensor<18x4xf32>)
// CHECK:         %y = tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [1, 3, 2, 2] {{.*}} : tensor<3x4xf32> into tensor<1x3x2x2xf32>
// CHECK-NEXT:    func.return %y
// FOLD-LABEL: func.func @conv_const
// FOLD:         arith.constant {cortex.origin = "y"} dense<{{\[}}[1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00], [2.000000e+00, {{.*}}]]> : tensor<3x4xf32>
// FOLD-NOT:     linalg.broadcast
func.func @conv_const(%x: tensor<1x2x6x6xf32>) -> tensor<1x3x2x2xf32> {
  %w = cortex.constant dense<0.5> : tensor<3x2x3x3xf32>
  %b = cortex.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %y = cortex.conv2d %x, %w, %b {dilations = array<i64: 2, 2>} : (tensor<1x2x6x6xf32>, tensor<3x2x3x3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  func.return %y : tensor<1x3x2x2xf32>
}
