// Pooling with dilations has no NHWC form: cortex-convert-layout leaves it
// alone (it used to drop the dilations: wrong averages, and a max_pool whose
// result no longer verified). Its undilated neighbour is still converted.
// RUN: cortex-opt %s -p 'cortex-convert-layout{layout=nhwc},canonicalize' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REPORT < %t.err

// REPORT: [convert-layout] to NHWC: 1 max_pool; transposes 0 -> 2

// CHECK-LABEL: func.func @dilated(
// CHECK:         cortex.avg_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
// CHECK:         cortex.max_pool %{{.*}} {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
// CHECK:         cortex.max_pool_nhwc
// CHECK-NOT:     cortex.avg_pool_nhwc
func.func @dilated(%x: tensor<1x2x5x5xf32>) -> (tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x4xf32>) {
  %a = cortex.avg_pool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %m = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x3x3xf32>
  %p = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>} : tensor<1x2x5x5xf32> -> tensor<1x2x4x4xf32>
  func.return %a, %m, %p : tensor<1x2x3x3xf32>, tensor<1x2x3x3xf32>, tensor<1x2x4x4xf32>
}
