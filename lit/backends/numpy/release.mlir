// Large arrays are released (`del`) where they die (backends/numpy/release.py): right after the
// statement that reads them last, inside a fused body too; a name read inside a branch goes after
// the `if`, never in it; names the `if` assigns, parameters, results and small arrays stay.
// A large result is written into a buffer of the program's pool (`_pool.take`), kept from call to call.
// RUN: cortex-opt %s -t numpy | filecheck %s
// RUN: cortex-opt %s -t numpy > %t.py
// RUN: %python -c "exec(open('%t.py').read()); import numpy as np; x = np.linspace(-1, 1, 65536, dtype=np.float32).reshape(256, 256); (g, q) = f(x, np.float32(-5)); b = x * x + x; print(np.array_equal(g, np.exp(((b + b) * x - x) + x * np.float32(2))), np.array_equal(q, x + x))" | filecheck %s --check-prefix=RUNS

// RUNS: True True

// CHECK:       _pool = _rt.BufferPool()
// CHECK-LABEL: def f(x, t):
// CHECK-NEXT:    """@f
// CHECK-NEXT:    a = np.multiply(x, x, out=_pool.take((256, 256), 'float32'))  # f: arith.mulf
// CHECK-NEXT:    q = np.add(x, x, out=_pool.take((256, 256), 'float32'))  # f: arith.addf
// CHECK-NEXT:    b = np.add(a, x, out=a)  # f: arith.addf
// CHECK-NEXT:    del a  # f: arith.addf
// CHECK:         if big:  # f: scf.if
// CHECK-NEXT:        d = np.add(b, b, out=_pool.take((256, 256), 'float32'))  # f: arith.addf
// CHECK-NEXT:        e = np.multiply(d, x, out=d)  # f: arith.mulf
// CHECK-NEXT:        del d  # f: arith.mulf
// CHECK-NEXT:        r = e  # f: scf.yield
// CHECK-NEXT:        del e  # f: scf.yield
// CHECK-NEXT:    else:  # f: scf.if
// CHECK-NEXT:        n = np.negative(b, out=_pool.take((256, 256), 'float32'))  # f: arith.negf
// CHECK-NEXT:        r = n  # f: scf.yield
// CHECK-NEXT:        del n  # f: scf.yield
// CHECK-NEXT:    del b  # f: scf.if
// CHECK-NEXT:    s = np.subtract(r, x, out=_pool.take((256, 256), 'float32'))  # f: arith.subf
// CHECK-NEXT:    _t1 = np.multiply(x, 2.0, out=_pool.take((256, 256), 'float32'))  # f: linalg.generic
// CHECK-NEXT:    np.add(s, _t1, out=s)  # f: linalg.generic
// CHECK-NEXT:    del _t1  # f: linalg.generic
// CHECK-NEXT:    g = np.exp(s, out=s)  # f: linalg.generic
// CHECK-NEXT:    del s  # f: linalg.generic
// CHECK-NEXT:    return (g, q)  # f: func.return
// CHECK-LABEL: def small(
// CHECK-NOT:     del
// CHECK:         return

!T = tensor<256x256xf32>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @f(%x: !T, %t: f32) -> (!T, !T) {
  %a = arith.mulf %x, %x : !T
  %q = arith.addf %x, %x : !T
  %b = arith.addf %a, %x : !T
  %c0 = arith.constant 0 : index
  %first = tensor.extract %x[%c0, %c0] : !T
  %big = arith.cmpf ogt, %first, %t : f32
  %r = scf.if %big -> (!T) {
    %d = arith.addf %b, %b : !T
    %e = arith.mulf %d, %x : !T
    scf.yield %e : !T
  } else {
    %n = arith.negf %b : !T
    scf.yield %n : !T
  }
  %s = arith.subf %r, %x : !T
  %two = arith.constant 2.0 : f32
  %e0 = tensor.empty() : !T
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s, %x : !T, !T) outs(%e0 : !T) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %0 = arith.mulf %w, %two : f32
    %1 = arith.addf %v, %0 : f32
    %2 = math.exp %1 : f32
    linalg.yield %2 : f32
  } -> !T
  func.return %g, %q : !T, !T
}
func.func @small(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %a = arith.mulf %x, %x : tensor<4x4xf32>
  %b = arith.addf %a, %x : tensor<4x4xf32>
  func.return %b : tensor<4x4xf32>
}
