// cortex-calibrate then cortex-quantize: a linear-relu-linear MLP becomes one int8
// region (one quantize at the input, one dequantize at the output); the relu folds
// into the first linear's output range; weights are i8 constants, biases i32.
// RUN: %python -c "import numpy as np; np.savez('%t.npz', arg0=np.random.default_rng(0).uniform(-0.5, 1.5, (8, 2, 4)).astype(np.float32))"
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize' | filecheck %s
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize{schema=asymmetric granularity=channel}' | filecheck %s --check-prefix=ASYM
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize' --quant-report 2>&1 >/dev/null | filecheck %s --check-prefix=REPORT
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"}' | filecheck %s --check-prefix=CALIB
// RUN: %python -c "import numpy as np; np.savez('%t.held.npz', arg0=np.random.default_rng(9).uniform(-0.5, 1.5, (5, 2, 4)).astype(np.float32))"
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize' --quant-report=%t.held.npz 2>&1 >/dev/null | filecheck %s --check-prefix=HELD
// RUN: not cortex-opt %s -p 'cortex-quantize' --quant-report 2>&1 | filecheck %s --check-prefix=NOCAL
// RUN: not cortex-opt %s -p 'canonicalize' --quant-report 2>&1 | filecheck %s --check-prefix=NOQUANT

// HELD: on the calibration set (8 inputs):
// HELD: on the held-out set (5 inputs):
// HELD: y {{ *}}qlinear
// NOCAL: error: pass 'cortex-quantize' failed: the module has no calibrated ranges
// NOQUANT: error: --quant-report needs a pipeline with cortex-calibrate{inputs=...}

// CALIB: builtin.module attributes {cortex.calibration_inputs = "{{.*}}.npz"}
// CALIB: func.func @mlp({{.*}} attributes {cortex.arg_ranges = [{min = {{.*}}, max = {{.*}}, histogram = array<i64:
// CALIB: cortex.linear {{.*}}cortex.range = {min =
// CALIB: cortex.relu {{.*}}cortex.range = {min = 0.000000e+00 : f32

// CHECK-LABEL: func.func @mlp(
// CHECK-SAME:      %[[X:[a-z0-9]+]]: tensor<2x4xf32>
// CHECK:         %[[Q:.*]] = cortex.quantize %[[X]] {scale = {{.*}}} : tensor<2x4xf32> -> tensor<2x4xi8>
// CHECK-DAG:     %[[W1:.*]] = cortex.constant dense<{{.*}}> : tensor<3x4xi8>
// CHECK-DAG:     %[[B1:.*]] = cortex.constant dense<{{.*}}> : tensor<3xi32>
// CHECK:         %[[H:.*]] = cortex.qlinear %[[Q]], %[[W1]], %[[B1]] {cortex.source = "h", cortex.range_from = "r", {{.*}}w_scales = array<f32: {{[^,]*}}>,
// CHECK:         %[[R:.*]] = cortex.qrelu %[[H]] {cortex.source = "r"}
// CHECK:         %[[Y:.*]] = cortex.qlinear %[[R]], %{{.*}} {cortex.source = "y"
// CHECK-NOT:     cortex.quantize
// CHECK-NOT:     cortex.requantize
// CHECK:         %[[D:.*]] = cortex.dequantize %[[Y]] {{.*}} : tensor<2x2xi8> -> tensor<2x2xf32>
// CHECK-NOT:     cortex.linear
// CHECK:         func.return %[[D]]

// Asymmetric: zero points appear; per channel: one weight scale per output row.
// ASYM: cortex.quantize %{{.*}} {scale = {{.*}}, zero_point = {{-?[0-9]+}} : i64}
// ASYM: cortex.qlinear {{.*}}w_scales = array<f32: {{[^,>]*}}, {{[^,>]*}}, {{[^,>]*}}>, out_scale = {{.*}}, out_zero_point = -128 : i64

// REPORT: [quantisation report] 3 quantised ops; conversions: 1 quantize, 1 dequantize, 0 requantize
// REPORT: on the calibration set (8 inputs):
// REPORT: h {{ *}}qlinear+relu
// REPORT: r {{ *}}qrelu
// REPORT: y {{ *}}qlinear
// REPORT: result #0 {{ *}}(graph output)
func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x2xf32> {
  %w1 = cortex.constant dense<[[0.5, -0.25, 1.0, 0.125], [-1.0, 0.75, 0.5, -0.5], [0.25, 0.25, -0.75, 1.0]]> : tensor<3x4xf32>
  %b1 = cortex.constant dense<[0.1, -0.2, 0.3]> : tensor<3xf32>
  %h = cortex.linear %x, %w1, %b1 : (tensor<2x4xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %r = cortex.relu %h : tensor<2x3xf32> -> tensor<2x3xf32>
  %w2 = cortex.constant dense<[[1.0, -0.5, 0.25], [-0.25, 0.5, 1.0]]> : tensor<2x3xf32>
  %y = cortex.linear %r, %w2 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
