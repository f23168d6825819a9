// cortex-convert-layout{layout=nhwc}: a conv-relu-pool-batch_norm-add chain runs
// channels-last with one transpose at the input and one where the chain meets an
// NCHW user (the function result); the weight is transposed to HWIO at compile time;
// a per-channel constant added in the chain is transposed at compile time too.
// RUN: cortex-opt %s -p 'cortex-convert-layout{layout=nhwc},canonicalize' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REPORT < %t.err
// RUN: cortex-opt %s -p 'cortex-convert-layout{layout=nhwc}' --print-op-generic 2>/dev/null | filecheck %s --check-prefix=GENERIC

// REPORT: [convert-layout] to NHWC: 1 conv2d, 1 max_pool, 1 batch_norm; transposes 0 -> 2

// CHECK-LABEL: func.func @chain(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<1x2x4x4xf32>
// CHECK:         %[[XT:.*]] = cortex.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<1x2x4x4xf32> -> tensor<1x4x4x2xf32>
// CHECK:         %[[C:.*]] = cortex.conv2d_nhwc %[[XT]], %{{.*}} {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x4x4x2xf32>, tensor<3x3x2x3xf32>) -> tensor<1x4x4x3xf32>
// CHECK:         %[[R:.*]] = cortex.relu %[[C]] : tensor<1x4x4x3xf32> -> tensor<1x4x4x3xf32>
// CHECK:         %[[P:.*]] = cortex.max_pool_nhwc %[[R]] {{.*}} : tensor<1x4x4x3xf32> -> tensor<1x2x2x3xf32>
// CHECK:         %[[B:.*]] = cortex.batch_norm_nhwc %[[P]],
// CHECK:         %[[A:.*]] = cortex.add %[[B]], %{{.*}} : (tensor<1x2x2x3xf32>, tensor<1x1x1x3xf32>) -> tensor<1x2x2x3xf32>
// CHECK:         %[[Y:.*]] = cortex.transpose %[[A]] {perm = array<i64: 0, 3, 1, 2>} : tensor<1x2x2x3xf32> -> tensor<1x3x2x2xf32>
// CHECK-NEXT:    func.return %[[Y]]

// GENERIC: "cortex.conv2d_nhwc"(%{{.*}}, %{{.*}}) <{strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64}>
func.func @chain(%x: tensor<1x2x4x4xf32>) -> tensor<1x3x2x2xf32> {
  %w = cortex.constant dense<0.5> : tensor<3x2x3x3xf32>
  %c = cortex.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  %r = cortex.relu %c : tensor<1x3x4x4xf32> -> tensor<1x3x4x4xf32>
  %p = cortex.max_pool %r {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x3x4x4xf32> -> tensor<1x3x2x2xf32>
  %s = cortex.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %b = cortex.batch_norm %p, %s, %s, %s, %s : (tensor<1x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x2x2xf32>
  %k = cortex.constant dense<[[[1.0]], [[2.0]], [[3.0]]]> : tensor<3x1x1xf32>
  %a = cortex.add %b, %k : (tensor<1x3x2x2xf32>, tensor<3x1x1xf32>) -> tensor<1x3x2x2xf32>
  func.return %a : tensor<1x3x2x2xf32>
}
