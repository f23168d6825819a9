"""The NumPy emitter and runtime on hand-written lowered IR, checked against NumPy directly.

Each snippet is upstream linalg/arith/math/tensor/scf/func as the lowering
produces it; the generated Python is run and compared with the same
computation written in plain NumPy. The source text is checked too: no
Python loop per element, constants built once, the provenance comments and
profiling sections where they belong. Errors are one-line CortexErrors,
raised when the pipeline is compiled rather than on some later frame.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, REORDERED, assert_f32_close

import cortex
from cortex.backends.numpy.codegen import EmitError
from cortex.backends.numpy.emitter import emit, emit_numpy, load
from cortex.driver import compile_loaded
from cortex.errors import CortexError
from cortex.ir import parse_module
from cortex.runtime import numpy_support

RNG = np.random.default_rng(7)


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def build(src: str, profile: bool = False):
    """(generated source, namespace) of a lowered module written by hand."""
    emitted = emit(parse_module(src), profile)
    return emitted.source, load(emitted, "<test>")


def run(src: str, fn: str, *args):
    """Call function `fn` of the generated module: (source, tuple of results)."""
    source, ns = build(src)
    return source, ns[fn](*args)


def no_element_loops(source: str) -> bool:
    return all(k not in source for k in ("for ", "while ", "np.vectorize", "np.nditer", "np.ndindex"))


# ---------------------------------------------------------------- linalg.generic, parallel

ELEMENTWISE = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#none = affine_map<(d0, d1) -> ()>
func.func @f(%a: tensor<4x5xf32>, %r: tensor<5xf32>, %c: tensor<4xf32>, %t: tensor<5x4xf32>,
             %z: tensor<f32>, %s: f32) -> tensor<4x5xf32> {
  %e = tensor.empty() : tensor<4x5xf32>
  %o = linalg.generic {indexing_maps = [#id, #row, #col, #tr, #none, #none, #id],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %r, %c, %t, %z, %s : tensor<4x5xf32>, tensor<5xf32>, tensor<4xf32>, tensor<5x4xf32>, tensor<f32>, f32)
      outs(%e : tensor<4x5xf32>) attrs = {cortex.origin = "blend"} {
  ^bb0(%x: f32, %y: f32, %u: f32, %v: f32, %w: f32, %k: f32, %out: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.subf %0, %u : f32
    %2 = arith.maximumf %1, %v : f32
    %3 = arith.mulf %2, %k : f32
    %4 = arith.addf %3, %w : f32
    %5 = math.tanh %4 : f32
    linalg.yield %5 : f32
  } -> tensor<4x5xf32>
  func.return %o : tensor<4x5xf32>
}
"""


def test_elementwise_generic_with_broadcasting_maps():
    a, r, c, t, z = f32(4, 5), f32(5), f32(4), f32(5, 4), f32()
    source, (out,) = run(ELEMENTWISE, "f", a, r, c, t, z, np.float32(0.75))
    expected = np.tanh(np.maximum(a * r - c[:, None], t.T) * np.float32(0.75) + z)
    assert_f32_close(out, expected, ulps=REORDERED)
    assert out.dtype == np.float32 and out.shape == (4, 5)
    assert no_element_loops(source)
    assert "# blend: linalg.generic" in source  # provenance on every statement
    assert "out=" in source  # dying temporaries are reused, not reallocated


def test_no_statement_without_provenance_comment():
    source, _ = build(ELEMENTWISE)
    body = source.split("def f(", 1)[1].splitlines()[2:]
    assert body and all("  # " in line for line in body if line.strip())


UNSIGNED = """
#in = affine_map<(d0, d1) -> (d0, d1, 2)>
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @red(%frame: tensor<2x3x3xi8> {cortex.unsigned}) -> tensor<2x3xf32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %o = linalg.generic {indexing_maps = [#in, #id], iterator_types = ["parallel", "parallel"]}
      ins(%frame : tensor<2x3x3xi8>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%p: i8, %out: f32):
    %0 = arith.uitofp %p : i8 to f32
    linalg.yield %0 : f32
  } -> tensor<2x3xf32>
  func.return %o : tensor<2x3xf32>
}
"""


def test_constant_index_map_and_unsigned_pixels():
    frame = RNG.integers(0, 256, (2, 3, 3), dtype=np.uint8)
    frame[0, 0, 2] = 200  # above 127: wrong if read as signed
    source, (out,) = run(UNSIGNED, "red", frame.view(np.int8))
    np.testing.assert_array_equal(out, frame[:, :, 2].astype(np.float32))
    assert ".view(np.uint8)" in source


SELECT = """
#id = affine_map<(d0) -> (d0)>
func.func @relu_count(%x: tensor<6xf32>, %i: tensor<6xi32>, %j: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xi32>, tensor<6xi64>) {
  %e = tensor.empty() : tensor<6xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<6xf32>) outs(%e : tensor<6xf32>) {
  ^bb0(%v: f32, %out: f32):
    %zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %v, %zero : f32
    %s = arith.select %pos, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<6xf32>
  %q = arith.divsi %i, %j : tensor<6xi32>
  %e2 = tensor.empty() : tensor<6xi64>
  %idx = linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]} outs(%e2 : tensor<6xi64>) {
  ^bb0(%out: i64):
    %k = linalg.index 0 : index
    %c = arith.index_cast %k : index to i64
    %ten = arith.constant 10 : i64
    %m = arith.muli %c, %ten : i64
    linalg.yield %m : i64
  } -> tensor<6xi64>
  func.return %r, %q, %idx : tensor<6xf32>, tensor<6xi32>, tensor<6xi64>
}
"""


def test_compare_select_signed_division_and_index():
    x = np.array([-1.5, 0.0, 2.0, -0.25, 3.0, 1e-3], np.float32)
    i = np.array([7, -7, 7, -7, 0, 9], np.int32)
    j = np.array([2, 2, -2, -2, 3, -4], np.int32)
    _, (relu, q, idx) = run(SELECT, "relu_count", x, i, j)
    np.testing.assert_array_equal(relu, np.maximum(x, 0))
    np.testing.assert_array_equal(q, np.array([3, -3, -3, 3, 0, -2], np.int32))  # rounds toward zero
    assert q.dtype == np.int32
    np.testing.assert_array_equal(idx, np.arange(6) * 10)


# ---------------------------------------------------------------- reductions

REDUCTIONS = """
#in = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#out = affine_map<(d0, d1, d2) -> (d2, d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reds(%x: tensor<3x4x5xf32>, %acc: tensor<3xf32>) -> (tensor<5x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %sum = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<3x4x5xf32>) outs(%z : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %o, %sq : f32
    linalg.yield %s : f32
  } -> tensor<5x3xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %max = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : tensor<3x4x5xf32>) outs(%m0 : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.maximumf %v, %o : f32
    linalg.yield %m : f32
  } -> tensor<5x3xf32>
  %e1 = tensor.empty() : tensor<3xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e1 : tensor<3xf32>) -> tensor<3xf32>
  %y = tensor.collapse_shape %x [[0], [1, 2]] : tensor<3x4x5xf32> into tensor<3x20xf32>
  %seeded = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<3x20xf32>) outs(%ones : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  %accum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<3x20xf32>) outs(%acc : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %s = arith.addf %v, %o : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  func.return %sum, %max, %seeded, %accum : tensor<5x3xf32>, tensor<5x3xf32>, tensor<3xf32>, tensor<3xf32>
}
"""


def test_reductions_sum_max_and_their_initial_values():
    x, acc = f32(3, 4, 5), f32(3)
    source, (s, m, seeded, accum) = run(REDUCTIONS, "reds", x, acc)
    assert_f32_close(s, (x * x).sum(axis=1).T, ulps=ACCUMULATED)
    np.testing.assert_array_equal(m, x.max(axis=1).T)
    assert_f32_close(seeded, x.reshape(3, 20).sum(axis=1) + 1.0, ulps=ACCUMULATED)
    assert_f32_close(accum, x.reshape(3, 20).sum(axis=1) + acc, ulps=ACCUMULATED)
    assert no_element_loops(source)
    assert "np.full((5, 3)" not in source and "np.zeros((5, 3)" not in source  # identity fills are never built
    assert "np.maximum.reduce(x, axis=1)" in source and "np.einsum('ijk,ijk->ki', x, x)" in source  # no BLAS form: einsum


LINALG_REDUCE = """
func.func @rowsum(%x: tensor<6x8x4xf32>) -> (tensor<6xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<6xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<6xf32>) -> tensor<6xf32>
  %r = linalg.reduce ins(%x : tensor<6x8x4xf32>) outs(%z : tensor<6xf32>) dimensions = [1, 2]
    (%a: f32, %b: f32) {
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    }
  %big = arith.constant -3.0 : f32
  %e2 = tensor.empty() : tensor<8xf32>
  %m0 = linalg.fill ins(%big : f32) outs(%e2 : tensor<8xf32>) -> tensor<8xf32>
  %m = linalg.reduce ins(%x : tensor<6x8x4xf32>) outs(%m0 : tensor<8xf32>) dimensions = [0, 2]
    (%a: f32, %b: f32) {
      %s = arith.maximumf %a, %b : f32
      linalg.yield %s : f32
    }
  func.return %r, %m : tensor<6xf32>, tensor<8xf32>
}
"""


def test_linalg_reduce():
    x = f32(6, 8, 4, lo=-5.0, hi=1.0)
    _, (r, m) = run(LINALG_REDUCE, "rowsum", x)
    assert_f32_close(r, x.sum(axis=(1, 2)), ulps=ACCUMULATED)
    np.testing.assert_array_equal(m, np.maximum(x.max(axis=(0, 2)), -3.0))


FULL_REDUCTIONS = """
#a = affine_map<(d0) -> (d0)>
#o = affine_map<(d0) -> ()>
func.func @dot(%x: tensor<5xf32>, %y: tensor<5xf32>) -> (tensor<f32>, tensor<f32>) {
  %init = arith.constant dense<1.5> : tensor<f32>
  %d = linalg.generic {indexing_maps = [#a, #a, #o], iterator_types = ["reduction"]}
      ins(%x, %y : tensor<5xf32>, tensor<5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%u: f32, %v: f32, %o: f32):
    %m = arith.mulf %u, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %m = linalg.generic {indexing_maps = [#a, #o], iterator_types = ["reduction"]}
      ins(%x : tensor<5xf32>) outs(%init : tensor<f32>) {
  ^bb0(%u: f32, %o: f32):
    %s = arith.maximumf %o, %u : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  func.return %d, %m : tensor<f32>, tensor<f32>
}
"""


def test_full_reductions_give_rank_0_arrays():
    """NumPy reduces to scalars; the runner hands rank-0 tensors back as 0-d arrays."""
    runner = compile_loaded(FULL_REDUCTIONS, entry="dot", mode=None)
    x, y = f32(5, lo=-1.0, hi=1.0), f32(5)
    d, m = runner(x, y)
    assert isinstance(d, np.ndarray) and d.shape == () and d.dtype == np.float32
    assert_f32_close(d, x @ y + 1.5, ulps=ACCUMULATED)
    assert m == max(x.max(), 1.5)


# ---------------------------------------------------------------- contractions

CONTRACTIONS = """
#at = affine_map<(d0, d1, d2) -> (d2, d0)>
#b = affine_map<(d0, d1, d2) -> (d2, d1)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>
#ba = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#bb = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
#bc = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @mm(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>, %at: tensor<4x3xf32>,
              %ba: tensor<2x3x4xf32>, %bb: tensor<2x4x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %p = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%z : tensor<3x5xf32>) -> tensor<3x5xf32>
  %acc = linalg.matmul ins(%a, %b : tensor<3x4xf32>, tensor<4x5xf32>) outs(%c : tensor<3x5xf32>) -> tensor<3x5xf32>
  %t = linalg.generic {indexing_maps = [#at, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%at, %b : tensor<4x3xf32>, tensor<4x5xf32>) outs(%z : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %e3 = tensor.empty() : tensor<2x3x5xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x3x5xf32>) -> tensor<2x3x5xf32>
  %bm = linalg.generic {indexing_maps = [#ba, #bb, #bc], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%ba, %bb : tensor<2x3x4xf32>, tensor<2x4x5xf32>) outs(%z3 : tensor<2x3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %m, %o : f32
    linalg.yield %s : f32
  } -> tensor<2x3x5xf32>
  func.return %p, %acc, %t, %bm : tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<2x3x5xf32>
}
"""


def test_matmul_accumulate_transposed_and_batched_contractions():
    a, b, c, ba, bb = f32(3, 4), f32(4, 5), f32(3, 5), f32(2, 3, 4), f32(2, 4, 5)
    at = np.ascontiguousarray(a.T)
    source, (p, acc, t, bm) = run(CONTRACTIONS, "mm", a, b, c, at, ba, bb)
    assert_f32_close(p, a @ b, ulps=ACCUMULATED)
    assert_f32_close(acc, c + a @ b, ulps=ACCUMULATED)
    assert_f32_close(t, a @ b, ulps=ACCUMULATED)
    assert_f32_close(bm, ba @ bb, ulps=ACCUMULATED)
    assert "a @ b" in source and "at.T @ b" in source and "ba @ bb" in source
    assert no_element_loops(source)


CONV_POOL = """
#win_in = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3)>
#win = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#win_out = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
func.func @cp(%x: tensor<1x2x9x9xf32>, %w: tensor<3x2x3x3xf32>, %img: tensor<8x10xf32>, %p: tensor<1x2x8x8xf32>)
    -> (tensor<1x3x4x4xf32>, tensor<4x5xf32>, tensor<1x2x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x3x4x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%x, %w : tensor<1x2x9x9xf32>, tensor<3x2x3x3xf32>) outs(%z : tensor<1x3x4x4xf32>) -> tensor<1x3x4x4xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %e2 = tensor.empty() : tensor<4x5xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x5xf32>) -> tensor<4x5xf32>
  %pool = linalg.generic {indexing_maps = [#win_in, #win, #win_out], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%img, %window : tensor<8x10xf32>, tensor<2x2xf32>) outs(%z2 : tensor<4x5xf32>) {
  ^bb0(%v: f32, %unused: f32, %o: f32):
    %s = arith.addf %o, %v : f32
    linalg.yield %s : f32
  } -> tensor<4x5xf32>
  %ninf = arith.constant 0xFF800000 : f32
  %e3 = tensor.empty() : tensor<1x2x4x4xf32>
  %m0 = linalg.fill ins(%ninf : f32) outs(%e3 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %max = linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>}
      ins(%p, %window : tensor<1x2x8x8xf32>, tensor<2x2xf32>) outs(%m0 : tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  func.return %conv, %pool, %max : tensor<1x3x4x4xf32>, tensor<4x5xf32>, tensor<1x2x4x4xf32>
}
"""


def conv_reference(x, w, stride):
    """Direct NCHW/FCHW cross-correlation, one filter tap at a time."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
    out = np.zeros((n, f, oh, ow), np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,fc->nfhw", patch, w[:, :, i, j])
    return out


def test_convolution_and_pooling_windows():
    x, w, img, p = f32(1, 2, 9, 9), f32(3, 2, 3, 3), f32(8, 10), f32(1, 2, 8, 8)
    source, (conv, pool, mx) = run(CONV_POOL, "cp", x, w, img, p)
    assert_f32_close(conv, conv_reference(x, w, 2), ulps=ACCUMULATED)
    assert_f32_close(pool, img.reshape(4, 2, 5, 2).sum(axis=(1, 3)), ulps=ACCUMULATED)
    np.testing.assert_array_equal(mx, p.reshape(1, 2, 4, 2, 4, 2).max(axis=(3, 5)))
    assert "_rt.affine_view(" in source and no_element_loops(source)


# ---------------------------------------------------------------- named data movement and tensor ops

MOVEMENT = """
func.func @mv(%x: tensor<2x3xf32>, %v: tensor<3xf32>, %s: f32) -> (tensor<3x2xf32>, tensor<2x4x3xf32>, tensor<6xf32>,
                                                                 tensor<4x5xf32>, tensor<2x1x3xf32>, f32, tensor<3xf32>) {
  %e = tensor.empty() : tensor<3x2xf32>
  %t = linalg.transpose ins(%x : tensor<2x3xf32>) outs(%e : tensor<3x2xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<2x4x3xf32>
  %b = linalg.broadcast ins(%x : tensor<2x3xf32>) outs(%e2 : tensor<2x4x3xf32>) dimensions = [1]
  %flat = tensor.collapse_shape %x [[0, 1]] : tensor<2x3xf32> into tensor<6xf32>
  %zero = arith.constant 0.0 : f32
  %pad = tensor.pad %x low[1, 1] high[1, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %zero : f32
  } : tensor<2x3xf32> to tensor<4x5xf32>
  %exp = tensor.expand_shape %x [[0, 1], [2]] output_shape [2, 1, 3] : tensor<2x3xf32> into tensor<2x1x3xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %elt = tensor.extract %x[%c1, %c2] : tensor<2x3xf32>
  %row = tensor.extract_slice %x[1, 0] [1, 3] [1, 1] : tensor<2x3xf32> to tensor<3xf32>
  %fe = tensor.from_elements %s, %elt, %s : tensor<3xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %sum = linalg.add ins(%row, %fe : tensor<3xf32>, tensor<3xf32>) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %ins = tensor.insert_slice %sum into %pad[0, 1] [1, 3] [1, 1] : tensor<3xf32> into tensor<4x5xf32>
  func.return %t, %b, %flat, %ins, %exp, %elt, %v : tensor<3x2xf32>, tensor<2x4x3xf32>, tensor<6xf32>, tensor<4x5xf32>, tensor<2x1x3xf32>, f32, tensor<3xf32>
}
"""


def test_transpose_broadcast_reshape_pad_slices():
    x, v = f32(2, 3), f32(3)
    _, (t, b, flat, ins, exp, elt, vv) = run(MOVEMENT, "mv", x, v, np.float32(0.5))
    np.testing.assert_array_equal(t, x.T)
    np.testing.assert_array_equal(b, np.broadcast_to(x[:, None, :], (2, 4, 3)))
    np.testing.assert_array_equal(flat, x.reshape(6))
    padded = np.pad(x, 1)
    padded[0, 1:4] = x[1] + np.array([0.5, x[1, 2], 0.5], np.float32)
    np.testing.assert_array_equal(ins, padded)
    np.testing.assert_array_equal(exp, x[:, None, :])
    assert elt == x[1, 2] and vv is v


# ---------------------------------------------------------------- control flow and calls

CONTROL = """
func.func @pick(%x: tensor<4xf32>, %t: f32) -> (tensor<4xf32>, f32) {
  %c0 = arith.constant 0 : index
  %first = tensor.extract %x[%c0] : tensor<4xf32>
  %big = arith.cmpf ogt, %first, %t : f32
  %r = scf.if %big -> (tensor<4xf32>) {
    %d = arith.addf %x, %x : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    %n = arith.negf %x : tensor<4xf32>
    scf.yield %n : tensor<4xf32>
  }
  %lo = arith.constant 0 : index
  %hi = arith.constant 4 : index
  %one = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %total = scf.for %i = %lo to %hi step %one iter_args(%acc = %zero) -> (f32) {
    %v = tensor.extract %x[%i] : tensor<4xf32>
    %s = arith.addf %acc, %v : f32
    scf.yield %s : f32
  }
  %res:2 = func.call @twice(%r, %total) : (tensor<4xf32>, f32) -> (tensor<4xf32>, f32)
  func.return %res#0, %res#1 : tensor<4xf32>, f32
}
func.func @twice(%x: tensor<4xf32>, %s: f32) -> (tensor<4xf32>, f32) {
  %d = arith.addf %x, %x : tensor<4xf32>
  %m = arith.mulf %s, %s : f32
  func.return %d, %m : tensor<4xf32>, f32
}
"""


@pytest.mark.parametrize("threshold", [0.0, 10.0])
def test_scf_if_for_and_internal_calls(threshold):
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    source, (r, total) = run(CONTROL, "pick", x, np.float32(threshold))
    branch = x + x if x[0] > threshold else -x
    np.testing.assert_array_equal(r, branch + branch)
    assert total == pytest.approx(float(x.sum()) ** 2)
    assert "if " in source and "else:" in source and "twice(" in source


EXTERN = """
func.func private @softmax_rows(tensor<2x3xf32>) -> tensor<2x3xf32> attributes {cortex.extern = "cortex.softmax", cortex.props = {axis = 1 : i64}}
func.func @g(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = func.call @softmax_rows(%x) {cortex.origin = "probs"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def test_extern_call_goes_through_the_kernel_table():
    x = f32(2, 3)
    source, (y,) = run(EXTERN, "g", x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert_f32_close(y, e / e.sum(axis=1, keepdims=True), ulps=ACCUMULATED)
    assert "_extern('cortex.softmax', {'axis': 1})" in source
    assert "# probs: func.call" in source


# ---------------------------------------------------------------- constants, profiling, the target

CONSTANT = """
func.func @k(%x: tensor<64xf32>) -> tensor<64xf32> {
  %c = arith.constant dense<[VALUES]> : tensor<64xf32>
  %e = tensor.empty() : tensor<64xf32>
  %y = linalg.add ins(%x, %c : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) -> tensor<64xf32>
  func.return %y : tensor<64xf32>
}
""".replace("VALUES", ", ".join(f"{i * 0.5}" for i in range(64)))


def test_constants_are_hoisted_and_built_once(monkeypatch):
    emitted = emit(parse_module(CONSTANT))
    source = emitted.source
    calls = []
    original = numpy_support.const
    monkeypatch.setattr(numpy_support, "const", lambda *a: calls.append(a) or original(*a))
    ns = load(emitted, "<test>")
    assert len(calls) == 1  # at load
    x = f32(64)
    for _ in range(20):
        np.testing.assert_array_equal(ns["k"](x)[0], x + np.arange(64, dtype=np.float32) * 0.5)
    assert len(calls) == 1  # never per call
    assert "_BLOBS" in source and "_rt.const(" in source.split("def k(")[0]
    standalone = emit_numpy(parse_module(CONSTANT))  # what `cortex-opt -t numpy` prints: runs on its own
    namespace: dict = {}
    exec(compile(standalone, "<standalone>", "exec"), namespace)
    np.testing.assert_array_equal(namespace["k"](x)[0], x + np.arange(64, dtype=np.float32) * 0.5)


PROFILED = """
#id = affine_map<(d0) -> (d0)>
func.func @p(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {cortex.origin = "first"} {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%a, %x : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {cortex.origin = "second"} {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = arith.mulf %v, %w : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %b : tensor<8xf32>
}
"""


def test_profiling_sections_only_in_the_profiled_module():
    plain, _ = build(PROFILED)
    assert "_prof" not in plain and "with " not in plain
    runner = compile_loaded(PROFILED, entry="p", mode=None)
    assert runner.profile() == {} and not runner.profiling
    runner.profiling = True
    x = f32(8)
    for _ in range(3):
        assert_f32_close(runner(x)[0], np.exp(x) * x, ulps=REORDERED)
    report = runner.profile()
    assert {"first", "second"} <= set(report) and report.frames == 3
    assert all(seconds > 0 for seconds in report.values())
    assert "first" in report.table()
    runner.profiling = False
    runner(x)
    assert runner.profile().frames == 3


DEAD = """
#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %unused = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %r = scf.if %c -> (tensor<4xf32>) {
    %d = arith.addf %x, %x : tensor<4xf32>
    scf.yield %d : tensor<4xf32>
  } else {
    scf.yield %unused : tensor<4xf32>
  }
  func.return %x : tensor<4xf32>
}
"""


def test_unread_values_are_not_computed():
    """xDSL's dce keeps unused linalg ops (no effect traits); the emitter drops them."""
    source, ns = build(DEAD)
    body = source.split("def f(", 1)[1]
    assert "np.exp" not in body and "np.empty" not in body and "if " not in body
    x = f32(4)
    assert ns["f"](x, True)[0] is x


# ---------------------------------------------------------------- errors


def test_bad_inputs_are_rejected_with_one_line():
    runner = compile_loaded(UNSIGNED, entry="red", mode=None)
    good = np.zeros((2, 3, 3), np.uint8)
    assert runner(good)[0].shape == (2, 3)
    with pytest.raises(CortexError, match=r"argument #0 \(%frame\) of @red: expected a uint8 array of shape \(2, 3, 3\), got a float32"):
        runner(good.astype(np.float32))
    with pytest.raises(CortexError, match=r"expected a uint8 array of shape \(2, 3, 3\), got a uint8 array of shape \(3, 3, 3\)"):
        runner(np.zeros((3, 3, 3), np.uint8))
    with pytest.raises(CortexError, match="takes 1 argument"):
        runner(good, good)


def test_unknown_extern_fails_at_compile_time():
    bad = EXTERN.replace('"cortex.softmax"', '"cortex.sofmtax"')
    with pytest.raises(CortexError, match="unknown extern 'cortex.sofmtax'"):
        compile_loaded(bad, entry="g", mode=None)
    with pytest.raises(CortexError, match="does not accept its properties"):
        compile_loaded(EXTERN.replace("axis = 1", "axes = 1"), entry="g", mode=None)
    undeclared = EXTERN.replace(' attributes {cortex.extern = "cortex.softmax", cortex.props = {axis = 1 : i64}}', "")
    with pytest.raises(EmitError, match="@softmax_rows is a declaration without a 'cortex.extern'"):
        compile_loaded(undeclared, entry="g", mode=None)


def test_compile_errors_name_what_is_wrong():
    with pytest.raises(CortexError, match="no function '@nope'"):
        compile_loaded(ELEMENTWISE, entry="nope", mode=None)
    with pytest.raises(CortexError, match="unknown pass 'nope'"):
        compile_loaded(ELEMENTWISE, entry="f", mode=None, passes="nope")
    with pytest.raises(CortexError, match="<string>:1:15"):
        compile_loaded("func.func @f( {", entry="f", mode=None)
    with pytest.raises(EmitError, match="still contains 'cortex.gray'"):
        emit(cortex.parse(str(cortex.__path__[0] + "/examples/l2_pipeline.mlir")))
    weird = REDUCTIONS.replace("%s = arith.addf %o, %sq : f32", "%o2 = arith.mulf %o, %o : f32\n    %s = arith.addf %o2, %sq : f32")
    with pytest.raises(EmitError, match="cannot vectorise"):
        build(weird)


def test_missing_weight_and_unknown_mode_fail_before_the_first_frame():
    module = cortex.build_l2_pipeline(64, 64, 32)
    with pytest.raises(CortexError, match="weight 'wc' has no value"):
        compile_loaded(module, mode=None)
    with pytest.raises(CortexError, match="unknown mode 'eco'"):
        compile_loaded(module, mode="eco")
