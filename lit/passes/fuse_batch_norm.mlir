// cortex-fuse-batch-norm folds batch_norm into a constant-weight linear or
// conv2d (bias present or absent) whose result has no other use.
// RUN: cortex-opt %s -p cortex-fuse-batch-norm | filecheck %s

// W = [[1, 2], [3, 4]], b = [1, -1]; scale = [2, 1], bias = [0.5, 0], mean = [1, 1],
// var = [3, 0], epsilon = 1: s = scale/√(var + ε) = [2/2, 1/1] = [1, 1],
// so W' = W and b' = (b − mean)·s + bias = [0.5, -2].
// CHECK-LABEL: func.func @linear_bias(
// CHECK-SAME:      %[[X:.*]]: tensor<3x2xf32>
// CHECK-DAG:     %[[W:.*]] = cortex.constant dense<{{\[\[}}1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG:     %[[B:.*]] = cortex.constant dense<[5.000000e-01, -2.000000e+00]> : tensor<2xf32>
// CHECK:         %[[Y:.*]] = cortex.linear %[[X]], %[[W]], %[[B]] :
// CHECK-NOT:     cortex.batch_norm
// CHECK:         func.return %[[Y]]
func.func @linear_bias(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = cortex.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %b = cortex.constant dense<[1.0, -1.0]> : tensor<2xf32>
  %scale = cortex.constant dense<[2.0, 1.0]> : tensor<2xf32>
  %bias = cortex.constant dense<[0.5, 0.0]> : tensor<2xf32>
  %mean = cortex.constant dense<[1.0, 1.0]> : tensor<2xf32>
  %var = cortex.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = cortex.linear %x, %w, %b : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %out = cortex.batch_norm %y, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %out : tensor<3x2xf32>
}

// No bias on the linear: b = 0. scale = [4, 1], var = [3, 0], eps = 1 → s = [2, 1];
// W' = [[2, 4], [3, 4]], b' = (0 − [1, 2])·s + [0, 1] = [-2, -1].
// CHECK-LABEL: func.func @linear_no_bias(
// CHECK-DAG:     %[[W:.*]] = cortex.constant dense<{{\[\[}}2.000000e+00, 4.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>
// CHECK-DAG:     %[[B:.*]] = cortex.constant dense<[-2.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK:         cortex.linear %{{.*}}, %[[W]], %[[B]] :
// CHECK-NOT:     cortex.batch_norm
func.func @linear_no_bias(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %w = cortex.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %scale = cortex.constant dense<[4.0, 1.0]> : tensor<2xf32>
  %bias = cortex.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %mean = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %var = cortex.constant dense<[3.0, 0.0]> : tensor<2xf32>
  %y = cortex.linear %x, %w : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %out = cortex.batch_norm %y, %scale, %bias, %mean, %var {epsilon = 1.0 : f32} : (tensor<3x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %out : tensor<3x2xf32>
}

// Conv2d: the filters scale along axis 0 (O of OIHW), attributes are kept.
// CHECK-LABEL: func.func @conv(
// CHECK-NOT:     cortex.batch_norm
// CHECK:         cortex.conv2d %{{.*}}, %{{.*}}, %{{.*}} {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NOT:     cortex.batch_norm
// CHECK:         func.return
func.func @conv(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = cortex.constant dense<1.0> : tensor<2x1x3x3xf32>
  %p = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = cortex.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x2x2xf32>
  %out = cortex.batch_norm %y, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %out : tensor<1x2x2x2xf32>
}

// Negative: batch norm parameters that are not constants → no rewrite.
// CHECK-LABEL: func.func @runtime_params(
// CHECK:         %[[Y:.*]] = cortex.conv2d
// CHECK:         cortex.batch_norm %[[Y]]
func.func @runtime_params(%x: tensor<1x1x4x4xf32>, %mean: tensor<2xf32>) -> tensor<1x2x4x4xf32> {
  %w = cortex.constant dense<1.0> : tensor<2x1x3x3xf32>
  %p = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = cortex.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %out = cortex.batch_norm %y, %p, %p, %mean, %p : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return %out : tensor<1x2x4x4xf32>
}

// Negative: the conv result has a second use → no rewrite (folding would keep both convs).
// CHECK-LABEL: func.func @second_use(
// CHECK:         %[[Y:.*]] = cortex.conv2d
// CHECK:         %[[BN:.*]] = cortex.batch_norm %[[Y]]
// CHECK:         cortex.add %[[BN]], %[[Y]]
func.func @second_use(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %w = cortex.constant dense<1.0> : tensor<2x1x3x3xf32>
  %p = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = cortex.conv2d %x, %w {pads = array<i64: 1, 1, 1, 1>} : (tensor<1x1x4x4xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  %out = cortex.batch_norm %y, %p, %p, %p, %p : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  %sum = cortex.add %out, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %sum : tensor<1x2x4x4xf32>
}

// Negative: a rank-3 linear (batch norm's axis 1 is not the feature axis) → no rewrite.
// CHECK-LABEL: func.func @linear_rank3(
// CHECK:         cortex.linear
// CHECK:         cortex.batch_norm
func.func @linear_rank3(%x: tensor<2x2x2xf32>) -> tensor<2x2x2xf32> {
  %w = cortex.constant dense<1.0> : tensor<2x2xf32>
  %p = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %y = cortex.linear %x, %w : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  %out = cortex.batch_norm %y, %p, %p, %p, %p : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2x2x2xf32>
  func.return %out : tensor<2x2x2xf32>
}
