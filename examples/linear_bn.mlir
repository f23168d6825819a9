// Linear (with bias) followed by BatchNorm, the classic fusion
// example: batch norm is affine, so it folds into
// the linear layer's weight and bias at inference time.
// Entry @linear_bn(x: 4x16) -> 4x8; NumPy:
//   y = x @ weight.T + bias
//   (y - bn_mean) / sqrt(bn_var + 1e-5) * bn_scale + bn_bias
// Constants: seeded (examples/tensor_graphs.py, params("linear_bn")).
func.func @linear_bn(%x: tensor<4x16xf32>) -> tensor<4x8xf32> {
  %weight = cortex.constant dense<
    [[-0.1875, 0.0625, -0.125, 0.25, 0.125, 0.0, 0.1875, -0.3125, -0.1875, -0.5, -0.5, 0.25, 0.0625, 0.1875, 0.125, -0.375],
     [0.0, -0.3125, -0.25, 0.375, -0.0625, -0.4375, 0.375, 0.4375, 0.0625, 0.4375, 0.1875, 0.0, 0.125, -0.5, -0.25, 0.3125],
     [-0.3125, -0.4375, -0.4375, 0.375, -0.25, -0.25, 0.0, 0.4375, -0.375, 0.375, 0.375, -0.5, -0.4375, 0.0, -0.4375, -0.125],
     [0.4375, 0.0625, -0.0625, -0.375, -0.125, -0.1875, 0.5, 0.3125, 0.5, 0.1875, -0.4375, -0.375, -0.4375, 0.5, 0.25, 0.5],
     [0.0625, -0.4375, -0.0625, -0.375, -0.1875, -0.375, -0.0625, -0.5, 0.0, -0.3125, -0.125, -0.3125, 0.4375, 0.4375, -0.25, 0.1875],
     [0.0, -0.125, -0.375, 0.375, -0.1875, 0.4375, -0.1875, 0.0, 0.0, -0.5, 0.4375, 0.25, 0.125, 0.0, 0.25, 0.0],
     [0.5, 0.1875, 0.125, 0.25, 0.3125, 0.25, -0.1875, 0.0625, -0.125, -0.5, -0.4375, -0.0625, -0.375, -0.3125, 0.25, 0.5],
     [-0.4375, -0.5, 0.4375, 0.0625, -0.25, -0.4375, 0.125, -0.25, 0.25, 0.125, -0.0625, -0.1875, -0.1875, 0.0625, 0.1875, 0.125]]> : tensor<8x16xf32>
  %bias = cortex.constant dense<[-0.1875, 0.75, 0.25, -0.25, -0.0625, -0.1875, -0.4375, -0.875]> : tensor<8xf32>
  %bn_scale = cortex.constant dense<[1.1875, 0.9375, 0.75, 1.5, 0.875, 0.8125, 1.0, 0.8125]> : tensor<8xf32>
  %bn_bias = cortex.constant dense<[-0.5, 0.3125, 0.5, -0.375, 0.25, 0.4375, -0.1875, -0.5]> : tensor<8xf32>
  %bn_mean = cortex.constant dense<[0.6875, -0.8125, -0.3125, -0.8125, 0.5625, -0.375, -0.75, 0.5]> : tensor<8xf32>
  %bn_var = cortex.constant dense<[0.8125, 0.75, 0.75, 1.25, 1.375, 1.8125, 1.75, 0.5625]> : tensor<8xf32>
  %y = cortex.linear %x, %weight, %bias : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %out = cortex.batch_norm %y, %bn_scale, %bn_bias, %bn_mean, %bn_var : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %out : tensor<4x8xf32>
}
