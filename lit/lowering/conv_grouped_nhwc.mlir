// Lowering of grouped cortex.conv2d_nhwc: a depthwise conv (one channel per group) becomes the
// linalg.generic of upstream's linalg.depthwise_conv_2d_nhwc_hwc (with a channel multiplier:
// _hwcm) — mlir-opt's --linalg-specialize-generic-ops names it back — and any other grouped conv
// one linalg.conv_2d_nhwc_hwcf per group on channel slices, inserted into the group's columns.
// RUN: cortex-opt %s --split-input-file -p convert-cortex-to-linalg | filecheck %s --check-prefix=LOWER
// RUN: cortex-opt %s --split-input-file -p convert-cortex-to-linalg --print-op-generic | %mlir-opt --split-input-file --linalg-specialize-generic-ops | filecheck %s --check-prefix=NAMED
// REQUIRES: mlir-opt

// LOWER-LABEL: func.func @depthwise
// LOWER:         tensor.collapse_shape %{{.*}} {{\[}}[0 : i64], [1 : i64], [2 : i64, 3 : i64]] {{.*}} : tensor<3x3x1x4xf32> into tensor<3x3x4xf32>
// LOWER:         linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, ((d1 * 2) + d4), ((d2 * 2) + d5), d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// NAMED-LABEL: func.func @depthwise
// NAMED:         linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%{{.*}} : tensor<1x3x3x4xf32>)
func.func @depthwise(%x: tensor<1x6x6x4xf32>, %w: tensor<3x3x1x4xf32>, %b: tensor<4xf32>) -> tensor<1x3x3x4xf32> {
  %y = cortex.conv2d_nhwc %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x6x6x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
  func.return %y : tensor<1x3x3x4xf32>
}

// -----

// NAMED-LABEL: func.func @multiplier
// NAMED:         tensor.expand_shape %{{.*}} output_shape [3, 3, 2, 3] {{.*}}: tensor<3x3x6xf32> into tensor<3x3x2x3xf32>
// NAMED:         linalg.depthwise_conv_2d_nhwc_hwcm {dilations = dense<2> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>) outs(%{{.*}} : tensor<1x2x2x2x3xf32>)
// NAMED:         tensor.collapse_shape %{{.*}}: tensor<1x2x2x2x3xf32> into tensor<1x2x2x6xf32>
func.func @multiplier(%x: tensor<1x6x6x2xf32>, %w: tensor<3x3x1x6xf32>) -> tensor<1x2x2x6xf32> {
  %y = cortex.conv2d_nhwc %x, %w {dilations = array<i64: 2, 2>, group = 2 : i64} : (tensor<1x6x6x2xf32>, tensor<3x3x1x6xf32>) -> tensor<1x2x2x6xf32>
  func.return %y : tensor<1x2x2x6xf32>
}

// -----

// NAMED-LABEL: func.func @grouped
// NAMED:         %[[X0:.*]] = tensor.extract_slice %[[X:.*]][0, 0, 0, 0] [1, 6, 6, 2] [1, 1, 1, 1] {{.*}}: tensor<1x6x6x4xf32> to tensor<1x6x6x2xf32>
// NAMED:         %[[W0:.*]] = tensor.extract_slice %[[W:.*]][0, 0, 0, 0] [3, 3, 2, 3] [1, 1, 1, 1] {{.*}}: tensor<3x3x2x6xf32> to tensor<3x3x2x3xf32>
// NAMED:         %[[C0:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[X0]], %[[W0]] : tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>)
// NAMED:         %[[R0:.*]] = tensor.insert_slice %[[C0]] into %{{.*}}[0, 0, 0, 0] [1, 4, 4, 3] [1, 1, 1, 1]
// NAMED:         %[[X1:.*]] = tensor.extract_slice %[[X]][0, 0, 0, 2] [1, 6, 6, 2] [1, 1, 1, 1]
// NAMED:         %[[W1:.*]] = tensor.extract_slice %[[W]][0, 0, 0, 3] [3, 3, 2, 3] [1, 1, 1, 1]
// NAMED:         %[[C1:.*]] = linalg.conv_2d_nhwc_hwcf {{.*}} ins(%[[X1]], %[[W1]] : tensor<1x6x6x2xf32>, tensor<3x3x2x3xf32>)
// NAMED:         %[[R1:.*]] = tensor.insert_slice %[[C1]] into %[[R0]][0, 0, 0, 3] [1, 4, 4, 3] [1, 1, 1, 1]
// NAMED:         return %[[R1]]
func.func @grouped(%x: tensor<1x6x6x4xf32>, %w: tensor<3x3x2x6xf32>) -> tensor<1x4x4x6xf32> {
  %y = cortex.conv2d_nhwc %x, %w {group = 2 : i64} : (tensor<1x6x6x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x4x4x6xf32>
  func.return %y : tensor<1x4x4x6xf32>
}
