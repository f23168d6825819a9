// The ops added for ONNX's MobileNet/ResNet/transformer operators round-trip in the custom and
// the generic form: max, min, erf, concat, pad, slice, and conv2d's group.
// RUN: cortex-opt %s > %t.custom
// RUN: filecheck %s --input-file %t.custom
// RUN: cortex-opt %t.custom | diff %t.custom -
// RUN: cortex-opt %s --print-op-generic > %t.generic
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic
// RUN: cortex-opt %t.generic | diff %t.custom -

// CHECK-LABEL: func.func @data_ops
// CHECK:       cortex.max %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:       cortex.min %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:       cortex.erf %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK:       cortex.concat %x, %x {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK:       cortex.pad %x {pads = array<i64: 1, 0, 0, 2>, value = -1.000000e+00 : f32} : tensor<2x3xf32> -> tensor<3x5xf32>
// CHECK:       cortex.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32> -> tensor<2x5xf32>
// CHECK:       cortex.slice %x {starts = array<i64: 0, 1>, sizes = array<i64: 2, 1>, steps = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK:       cortex.conv2d %img, %dw {group = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
// GENERIC:     "cortex.pad"(%{{.*}}) <{pads = array<i64: 0, 1, 0, 1>, value = 0.000000e+00 : f32}>
// GENERIC:     "cortex.conv2d"(%{{.*}}, %{{.*}}) <{{{.*}}group = 2 : i64
func.func @data_ops(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %img: tensor<1x2x8x8xf32>, %dw: tensor<2x1x3x3xf32>) -> tensor<2x3xf32> {
  %max = cortex.max %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %min = cortex.min %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %erf = cortex.erf %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %cat = cortex.concat %x, %x {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %pad = cortex.pad %x {pads = array<i64: 1, 0, 0, 2>, value = -1.0 : f32} : tensor<2x3xf32> -> tensor<3x5xf32>
  %pad0 = cortex.pad %x {pads = array<i64: 0, 1, 0, 1>} : tensor<2x3xf32> -> tensor<2x5xf32>
  %sl = cortex.slice %x {starts = array<i64: 0, 1>, sizes = array<i64: 2, 1>, steps = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<2x1xf32>
  %dwc = cortex.conv2d %img, %dw {group = 2 : i64} : (tensor<1x2x8x8xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %x : tensor<2x3xf32>
}
