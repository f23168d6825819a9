// What cortex-convert-layout leaves alone: graphs without image ops, and
// elementwise ops whose other operand is a runtime NCHW tensor (the transpose
// stays where the chain meets it); an unknown layout is a one-line error.
// RUN: cortex-opt %s --split-input-file -p 'cortex-convert-layout{layout=nhwc},canonicalize' 2>%t.err | filecheck %s
// RUN: filecheck %s --check-prefix=REPORT < %t.err
// RUN: not cortex-opt %s -p 'cortex-convert-layout{layout=nchw8c}' 2>&1 | filecheck %s --check-prefix=BAD

// REPORT: [convert-layout] to NHWC: nothing; transposes 0 -> 0
// REPORT: [convert-layout] to NHWC: 1 max_pool; transposes 0 -> 2
// BAD: error: pass 'cortex-convert-layout' failed: unknown layout 'nchw8c' (known: nhwc)

// CHECK-LABEL: func.func @no_image_ops(
// CHECK-NOT:     cortex.transpose
// CHECK:         cortex.relu %{{.*}} : tensor<2x3xf32>
func.func @no_image_ops(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %r = cortex.relu %x : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @runtime_operand(
// CHECK:         cortex.max_pool_nhwc
// CHECK:         %[[T:.*]] = cortex.transpose %{{.*}} {perm = array<i64: 0, 3, 1, 2>}
// CHECK:         cortex.add %[[T]], %{{.*}} : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>)
func.func @runtime_operand(%x: tensor<1x2x4x4xf32>, %y: tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %p = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  %a = cortex.add %p, %y : (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  func.return %a : tensor<1x2x2x2xf32>
}
