// UnoptimizedModel, a graph with one chance for each classic graph rewrite,
// one op per line of its forward():
//   constant folding   %scale = 2.0 * 3.0
//   CSE                %b repeats %a
//   algebraic simpl.   %c = %a * 1.0
//   DCE                %d = exp(x) is never used
//   fusion             %e -> %f -> %g (mul, add, relu)
// Each Python literal is its own constant, as in the traced graph.
// Entry @unoptimized_model; NumPy: relu(x) + relu(6 * relu(x) + 1).
func.func @unoptimized_model(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = cortex.constant dense<2.0> : tensor<f32>
  %three = cortex.constant dense<3.0> : tensor<f32>
  %scale = cortex.mul %two, %three : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = cortex.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %b = cortex.relu %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %c = cortex.mul %a, %one : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %d = cortex.exp %x : tensor<4x8xf32> -> tensor<4x8xf32>
  %e = cortex.mul %b, %scale : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %one_0 = cortex.constant dense<1.0> : tensor<f32>
  %f = cortex.add %e, %one_0 : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %g = cortex.relu %f : tensor<4x8xf32> -> tensor<4x8xf32>
  %out = cortex.add %c, %g : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %out : tensor<4x8xf32>
}
