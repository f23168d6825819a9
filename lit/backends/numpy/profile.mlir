// `-t 'numpy{profile=true}'` groups consecutive statements of one cortex op
// under a timing section; without it there is no hook at all.
// RUN: cortex-opt %s -t 'numpy{profile=true}' | filecheck %s
// RUN: cortex-opt %s -t numpy | filecheck %s --check-prefix=PLAIN

// CHECK:      from cortex.runtime.profiling import Profiler
// CHECK:      _prof = Profiler()
// CHECK-NEXT: _p_scaled = _prof.section('scaled')
// CHECK-NEXT: _p_f = _prof.section('f')
// CHECK-LABEL: def f(x, s):
// CHECK-NEXT:      """@f(tensor<4x4xf32>, f32) -> (tensor<4x4xf32>)"""
// CHECK-NEXT:      with _p_scaled:
// CHECK-NEXT:          _t1 = x * s  # scaled: linalg.generic
// CHECK-NEXT:          scaled = np.exp(_t1, out=_t1)  # scaled: linalg.generic
// CHECK-NEXT:      with _p_f:
// CHECK-NEXT:          return (scaled,)  # f: func.return

// PLAIN-NOT:   _prof
// PLAIN-LABEL: def f(x, s):
// PLAIN-NOT:   with
// PLAIN:         _t1 = x * s  # scaled: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
#none = affine_map<(d0, d1) -> ()>
func.func @f(%x: tensor<4x4xf32>, %s: f32) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %scaled = linalg.generic {indexing_maps = [#id, #none, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %s : tensor<4x4xf32>, f32) outs(%e : tensor<4x4xf32>) attrs = {cortex.origin = "scaled"} {
  ^bb0(%v: f32, %k: f32, %o: f32):
    %m = arith.mulf %v, %k : f32
    %r = math.exp %m : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  func.return %scaled : tensor<4x4xf32>
}
