// cortex-convert-layout converts grouped and depthwise conv2d to channels-last like a plain one: the
// group stays a property of cortex.conv2d_nhwc, the constant OIHW weight (O × C/g × kH × kW) becomes
// HWIO (kH × kW × C/g × O) at compile time, and a pointwise-depthwise-relu chain keeps one transpose
// at its input and one at its result.
// RUN: cortex-opt %s -p 'cortex-convert-layout{layout=nhwc},canonicalize' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REPORT < %t.err

// REPORT: [convert-layout] to NHWC: 3 conv2d; transposes 0 -> 5

// CHECK-LABEL: func.func @pointwise_depthwise(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<1x4x6x6xf32>
// CHECK:         %[[XT:.*]] = cortex.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x6x6xf32> -> tensor<1x6x6x4xf32>
// CHECK:         %[[P:.*]] = cortex.conv2d_nhwc %[[XT]], %{{.*}} : (tensor<1x6x6x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x6x6x4xf32>
// CHECK:         %[[DW:.*]] = cortex.constant dense<{{.*}}> : tensor<3x3x1x4xf32>
// CHECK:         %[[D:.*]] = cortex.conv2d_nhwc %[[P]], %[[DW]], %{{.*}} {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, group = 4 : i64} : (tensor<1x6x6x4xf32>, tensor<3x3x1x4xf32>, tensor<4xf32>) -> tensor<1x3x3x4xf32>
// CHECK:         %[[R:.*]] = cortex.relu %[[D]] : tensor<1x3x3x4xf32> -> tensor<1x3x3x4xf32>
// CHECK:         %[[Y:.*]] = cortex.transpose %[[R]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x3x3x4xf32> -> tensor<1x4x3x3xf32>
// CHECK-NEXT:    func.return %[[Y]]
// CHECK-NOT:     cortex.conv2d %
func.func @pointwise_depthwise(%x: tensor<1x4x6x6xf32>) -> tensor<1x4x3x3xf32> {
  %pw = cortex.constant dense<0.25> : tensor<4x4x1x1xf32>
  %p = cortex.conv2d %x, %pw : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %dw = cortex.constant dense<[[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]], [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]], [[[0.5, 0.5, 0.5], [0.5, 0.5, 0.5], [0.5, 0.5, 0.5]]], [[[-1.0, 0.0, 1.0], [-2.0, 0.0, 2.0], [-1.0, 0.0, 1.0]]]]> : tensor<4x1x3x3xf32>
  %db = cortex.constant dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>
  %d = cortex.conv2d %p, %dw, %db {group = 4 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>, tensor<4xf32>) -> tensor<1x4x3x3xf32>
  %r = cortex.relu %d : tensor<1x4x3x3xf32> -> tensor<1x4x3x3xf32>
  func.return %r : tensor<1x4x3x3xf32>
}

// A grouped conv (2 groups of 2 channels, 3 filters each) on a weight known only at run time: the
// weight gets a transpose to HWIO, the conv keeps its group and dilations.
// CHECK-LABEL: func.func @grouped(
// CHECK:         %[[WT:.*]] = cortex.transpose %{{.*}} {perm = array<i64: 2, 3, 1, 0>} : tensor<6x2x3x3xf32> -> tensor<3x3x2x6xf32>
// CHECK:         cortex.conv2d_nhwc %{{.*}}, %[[WT]] {pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>, group = 2 : i64} : (tensor<1x5x5x4xf32>, tensor<3x3x2x6xf32>) -> tensor<1x5x5x6xf32>
func.func @grouped(%x: tensor<1x4x5x5xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32> {
  %y = cortex.conv2d %x, %w {group = 2 : i64, pads = array<i64: 2, 2, 2, 2>, dilations = array<i64: 2, 2>} : (tensor<1x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x5x5xf32>
  func.return %y : tensor<1x6x5x5xf32>
}
