// A depthwise conv2d (group = channels) followed by batch_norm and Clip(0, 6) (max then min) folds and
// fuses as a plain conv does: cortex-fuse-batch-norm scales the depthwise filters per output channel and
// keeps the group, and after lowering the max and the min are one elementwise linalg.generic.
// RUN: cortex-opt %s -p cortex-fuse-batch-norm | filecheck %s --check-prefix=FOLD
// RUN: cortex-opt %s -p cortex-fuse-batch-norm,canonicalize,convert-cortex-to-linalg,cortex-fuse-linalg-elementwise | filecheck %s --check-prefix=FUSE

// FOLD-LABEL: func.func @dw_bn_relu6
// FOLD-NOT:     cortex.batch_norm
// FOLD:         %fused_weight = cortex.constant dense<{{\[\[\[\[}}0.816493869, 1.63298774, -0.816493869]
// FOLD:         %bn = cortex.conv2d %x, %fused_weight, %fused_bias {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>}
// FOLD-NEXT:    %m = cortex.max %bn, %lo
// FOLD-NEXT:    %y = cortex.min %m, %hi

// FUSE-LABEL: func.func @dw_bn_relu6
// FUSE:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]
// FUSE:         %bn = tensor.collapse_shape
// FUSE-NEXT:    tensor.empty
// FUSE-NEXT:    %y = linalg.generic {{.*}} attrs = {cortex.origin = "m+y"}
// FUSE-NEXT:    ^bb0
// FUSE-NEXT:      arith.maximumf
// FUSE-NEXT:      arith.minimumf
// FUSE-NEXT:      linalg.yield
func.func @dw_bn_relu6(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32> {
  %w = cortex.constant dense<[[[[0.5, 1.0, -0.5], [0.25, 2.0, 0.0], [1.0, -1.0, 0.5]]], [[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]]]> : tensor<2x1x3x3xf32>
  %scale = cortex.constant dense<[2.0, 0.5]> : tensor<2xf32>
  %bias = cortex.constant dense<[0.1, -0.2]> : tensor<2xf32>
  %mean = cortex.constant dense<[0.3, 0.4]> : tensor<2xf32>
  %var = cortex.constant dense<[1.5, 0.25]> : tensor<2xf32>
  %lo = cortex.constant dense<0.0> : tensor<f32>
  %hi = cortex.constant dense<6.0> : tensor<f32>
  %c = cortex.conv2d %x, %w {group = 2 : i64, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x6x6xf32>
  %bn = cortex.batch_norm %c, %scale, %bias, %mean, %var : (tensor<1x2x6x6xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  %m = cortex.max %bn, %lo : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  %y = cortex.min %m, %hi : (tensor<1x2x6x6xf32>, tensor<f32>) -> tensor<1x2x6x6xf32>
  func.return %y : tensor<1x2x6x6xf32>
}
