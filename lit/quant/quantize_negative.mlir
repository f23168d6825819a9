// What cortex-quantize leaves in f32: a linear whose weight is not a constant,
// and ops outside the quantisable set (exp); without calibration the pass fails.
// RUN: %python -c "import numpy as np; np.savez('%t.npz', arg0=np.random.default_rng(1).uniform(-1, 1, (4, 2, 3)).astype(np.float32))"
// RUN: cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize' | filecheck %s
// RUN: not cortex-opt %s -p 'cortex-quantize' 2>&1 | filecheck %s --check-prefix=NOCALIB
// RUN: not cortex-opt %s -p 'cortex-calibrate{inputs="%t.npz"},cortex-quantize{schema=affine}' 2>&1 | filecheck %s --check-prefix=SCHEMA
// RUN: not cortex-opt %s -p 'cortex-calibrate{inputs="%t.missing.npz"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cortex-opt %s -p 'cortex-calibrate' 2>&1 | filecheck %s --check-prefix=NOINPUTS

// CHECK-LABEL: func.func @not_quantised(
// CHECK-NOT:     cortex.quantize
// CHECK:         cortex.exp
// CHECK:         cortex.linear
// CHECK-NOT:     cortex.q
// CHECK:         func.return

// NOCALIB: error: pass 'cortex-quantize' failed: the module has no calibrated ranges: run cortex-calibrate first
// SCHEMA: error: pass 'cortex-quantize' failed: unknown schema 'affine' (known: symmetric, asymmetric)
// MISSING: error: pass 'cortex-calibrate' failed: cannot read calibration inputs '{{.*}}missing.npz'
// NOINPUTS: error: pass 'cortex-calibrate' failed: no calibration set given (use inputs="FILE.npz")
func.func @not_quantised(%x: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %w0 = cortex.constant dense<[[0.5, -0.25, 1.0], [-1.0, 0.75, 0.5]]> : tensor<2x3xf32>
  %w = cortex.exp %w0 : tensor<2x3xf32> -> tensor<2x3xf32>
  %y = cortex.linear %x, %w : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
