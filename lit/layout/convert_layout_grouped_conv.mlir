// cortex-convert-layout leaves a grouped (here depthwise) conv2d in NCHW: cortex.conv2d_nhwc has no
// group, and dropping it would change the result. The plain conv2d beside it goes channels-last.
// RUN: cortex-opt %s -p cortex-convert-layout | filecheck %s

// CHECK-LABEL: func.func @grouped_stays
// CHECK:         cortex.conv2d_nhwc
// CHECK:         %y = cortex.conv2d %{{.*}}, %dw {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
func.func @grouped_stays(%x: tensor<1x2x6x6xf32>, %w: tensor<4x2x1x1xf32>, %dw: tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32> {
  %c = cortex.conv2d %x, %w : (tensor<1x2x6x6xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x6x6xf32>
  %y = cortex.conv2d %c, %dw {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return %y : tensor<1x4x6x6xf32>
}
