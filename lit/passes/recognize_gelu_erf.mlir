// cortex-recognize-gelu on the exact GELU as ONNX exporters write it:
// x · 0.5 · (1 + erf(x / √2)) (PyTorch's nn.GELU()), and with x · (1/√2), becomes
// one cortex.gelu (approximate "none"); a constant that is not 1/√2 is another function.
// RUN: cortex-opt %s -p cortex-recognize-gelu | filecheck %s

// CHECK-LABEL: func.func @exported(
// CHECK-SAME:      %[[X:.*]]: tensor<2x8xf32>
// CHECK-NEXT:    %[[G:.*]] = cortex.gelu %[[X]] : tensor<2x8xf32> -> tensor<2x8xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @exported(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = cortex.constant dense<1.41421354> : tensor<f32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %half = cortex.constant dense<0.5> : tensor<f32>
  %s = cortex.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = cortex.erf %s : tensor<2x8xf32> -> tensor<2x8xf32>
  %p = cortex.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %xp = cortex.mul %x, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = cortex.mul %xp, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  func.return %y : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @scaled_first(
// CHECK-NEXT:    %[[G:.*]] = cortex.gelu %{{.*}} : tensor<4xf32> -> tensor<4xf32>
// CHECK-NEXT:    func.return %[[G]]
func.func @scaled_first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %r = cortex.constant dense<0.707106769> : tensor<f32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %half = cortex.constant dense<0.5> : tensor<f32>
  %hx = cortex.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %s = cortex.mul %r, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %e = cortex.erf %s : tensor<4xf32> -> tensor<4xf32>
  %p = cortex.add %one, %e : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %y = cortex.mul %hx, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}

// CHECK-LABEL: func.func @other_scale(
// CHECK-NOT:     cortex.gelu
// CHECK:         cortex.erf
func.func @other_scale(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = cortex.constant dense<2.0> : tensor<f32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %half = cortex.constant dense<0.5> : tensor<f32>
  %s = cortex.div %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %e = cortex.erf %s : tensor<4xf32> -> tensor<4xf32>
  %p = cortex.add %e, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %xp = cortex.mul %x, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = cortex.mul %xp, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
