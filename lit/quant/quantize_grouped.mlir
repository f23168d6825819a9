// cortex-quantize leaves a grouped conv2d in f32 (cortex.qconv2d has no groups) and quantises the
// plain conv2d before it.
// RUN: %python -c "import numpy as np; np.savez('%t.npz', arg0=np.random.default_rng(1).uniform(-1, 1, (1, 2, 6, 6)).astype(np.float32))"
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize' | filecheck %s

// CHECK-LABEL: func.func @grouped
// CHECK:         cortex.qconv2d
// CHECK:         cortex.dequantize
// CHECK:         %y = cortex.conv2d %c, %dw {cortex.range = {{.*}}, group = 2 : i64} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
func.func @grouped(%x: tensor<1x2x6x6xf32>) -> tensor<1x2x4x4xf32> {
  %w = cortex.constant dense<0.5> : tensor<2x2x1x1xf32>
  %dw = cortex.constant dense<0.25> : tensor<2x1x3x3xf32>
  %c = cortex.conv2d %x, %w : (tensor<1x2x6x6xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x6x6xf32>
  %y = cortex.conv2d %c, %dw {group = 2 : i64} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x4xf32>
  func.return %y : tensor<1x2x4x4xf32>
}
