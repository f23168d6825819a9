// cortex-convert-layout reduces before a transpose: the global mean over H and W of a conv's NCHW result
// becomes a mean over axes 1 and 2 of the channels-last map (its kept axes N, C stay in order: no
// transpose left), and a reduction keeping its dims moves the transpose onto the smaller result.
// RUN: cortex-opt %s -p 'cortex-convert-layout{layout=nhwc},canonicalize' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REPORT < %t.err

// REPORT: [convert-layout] to NHWC: 2 conv2d; transposes 0 -> 5

// CHECK-LABEL: func.func @global_mean(
// CHECK:         %[[C:.*]] = cortex.conv2d_nhwc
// CHECK-NEXT:    %[[M:.*]] = cortex.reduce_mean %[[C]] {axes = array<i64: 1, 2>, keepdims = 0 : i64} : tensor<1x4x4x3xf32> -> tensor<1x3xf32>
// CHECK-NEXT:    func.return %[[M]]
func.func @global_mean(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3xf32> {
  %c = cortex.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %m = cortex.reduce_mean %c {axes = array<i64: 2, 3>, keepdims = 0 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3xf32>
  func.return %m : tensor<1x3xf32>
}

// CHECK-LABEL: func.func @kept_dims(
// CHECK:         %[[C:.*]] = cortex.conv2d_nhwc
// CHECK-NEXT:    %[[S:.*]] = cortex.reduce_max %[[C]] {axes = array<i64: 2>} : tensor<1x4x4x3xf32> -> tensor<1x4x1x3xf32>
// CHECK-NEXT:    %[[T:.*]] = cortex.transpose %[[S]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x4x1x3xf32> -> tensor<1x3x4x1xf32>
// CHECK-NEXT:    func.return %[[T]]
func.func @kept_dims(%x: tensor<1x2x4x4xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x4x1xf32> {
  %c = cortex.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x4x4xf32>
  %m = cortex.reduce_max %c {axes = array<i64: 3>, keepdims = 1 : i64} : tensor<1x3x4x4xf32> -> tensor<1x3x4x1xf32>
  func.return %m : tensor<1x3x4x1xf32>
}
