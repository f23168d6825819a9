// The printed module runs on its own (constants embedded): here a sum
// pooling written as a windowed linalg.generic, checked against NumPy.
// RUN: cortex-opt %s -t numpy > %t.py
// RUN: %python -c "exec(open('%t.py').read()); import numpy as np; x = np.arange(48, dtype=np.float32).reshape(6, 8); (y,) = pool(x); w = np.arange(4, dtype=np.float32).reshape(2, 2); print(np.array_equal(y, (x.reshape(3, 2, 4, 2) * w[None, :, None, :]).sum(axis=(1, 3))))" | filecheck %s
// RUN: filecheck %s --check-prefix=SOURCE < %t.py

// CHECK: True
// SOURCE: _k_w = _rt.array([0.0, 1.0, 2.0, 3.0], 'float32', (2, 2))
// SOURCE: _rt.affine_view(x, (0, 0), (3, 4, 2, 2), ((2, 0), (0, 2), (1, 0), (0, 1)))
// SOURCE-NOT: for
#in = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3)>
#win = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#out = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @pool(%x: tensor<6x8xf32>) -> tensor<3x4xf32> {
  %w = arith.constant dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x4xf32>) -> tensor<3x4xf32>
  %y = linalg.generic {indexing_maps = [#in, #win, #out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%x, %w : tensor<6x8xf32>, tensor<2x2xf32>) outs(%z : tensor<3x4xf32>) {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
