// GELU (tanh approximation) written out as single ops, the GeluApprox module
// of a traced PyTorch model, in the order PyTorch evaluates
//   0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
// A pattern rewrite can recognise it and replace it with
// cortex.gelu {approximate = "tanh"}.
// Entry @gelu_tanh(x: 4x8) -> 4x8.
func.func @gelu_tanh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %half = cortex.constant dense<0.5> : tensor<f32>
  %x_half = cortex.mul %half, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %k = cortex.constant dense<0.044715> : tensor<f32>
  %kx = cortex.mul %k, %x : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx2 = cortex.mul %kx, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %kx3 = cortex.mul %kx2, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %inner = cortex.add %x, %kx3 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = cortex.constant dense<0.7978845608> : tensor<f32>
  %arg = cortex.mul %c, %inner : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %th = cortex.tanh %arg : tensor<4x8xf32> -> tensor<4x8xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %one_plus = cortex.add %one, %th : (tensor<f32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %out = cortex.mul %x_half, %one_plus : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %out : tensor<4x8xf32>
}
