"""The per-call overhead cuts keep results: strided views built through the ndarray constructor,
the runtime's no-conversion fast path, and the linalg-level rewrites the ONNX backend compiles with."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.backends import numpy_support
from cortex.ir import CortexError


def naive_view(x: np.ndarray, offset, shape, coefs) -> np.ndarray:
    out = np.empty(shape, x.dtype)
    for d in itertools.product(*(range(n) for n in shape)):
        index = tuple(o + sum(coefs[k][a] * d[k] for k in range(len(shape))) for a, o in enumerate(offset))
        out[d] = x[index]
    return out


@settings(max_examples=60, deadline=None)
@given(
    dims=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3)),
    kernel=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    stride=st.integers(1, 2),
    start=st.tuples(st.integers(0, 1), st.integers(0, 1)),
    transposed=st.booleans(),
)
def test_affine_view_is_the_strided_window(dims, kernel, stride, start, transposed):
    """Windows x[c, oh*s + kh + o0, ow*s + kw + o1], on contiguous and on transposed (non-contiguous) arrays."""
    c, oh, ow = dims
    kh, kw = kernel
    h, w = (oh - 1) * stride + kh + start[0], (ow - 1) * stride + kw + start[1]
    x = np.arange(c * h * w, dtype=np.float32).reshape(c, h, w)
    if transposed:
        x = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
    coefs = ((1, 0, 0), (0, stride, 0), (0, 0, stride), (0, 1, 0), (0, 0, 1))
    shape = (c, oh, ow, kh, kw)
    for _ in range(2):  # the second call takes the cached layout
        view = numpy_support.affine_view(x, (0, *start), shape, coefs)
        np.testing.assert_array_equal(view, naive_view(x, (0, *start), shape, coefs))
        assert not view.flags.writeable


def test_affine_view_layout_depends_on_the_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = np.arange(24, dtype=np.float64).reshape(4, 6)  # same shape, other strides
    coefs = ((1, 0), (0, 2))
    np.testing.assert_array_equal(numpy_support.affine_view(a, (0, 1), (4, 2), coefs), a[:, 1::2][:, :2])
    np.testing.assert_array_equal(numpy_support.affine_view(b, (0, 1), (4, 2), coefs), b[:, 1::2][:, :2])


# ---------------------------------------------------------------- the linalg rewrites, against the reference interpreter

from xdsl.builder import ImplicitBuilder  # noqa: E402
from xdsl.dialects import func  # noqa: E402
from xdsl.dialects.builtin import ModuleOp, TensorType, f32  # noqa: E402
from xdsl.ir import Block, Region  # noqa: E402

import cortex  # noqa: E402
from cortex.dialects import tensor_ops as ops  # noqa: E402
from cortex.driver import lower  # noqa: E402
from cortex.frontends.onnx import f32_constant  # noqa: E402
from cortex.lowering.fold_constant_layouts import FoldConstantLayoutsPass  # noqa: E402
from cortex.lowering.unroll_pooling import UnrollPoolingPass  # noqa: E402
from cortex.onnx_backend import COMPILE_PASSES  # noqa: E402
from tests.helpers.numerics import ACCUMULATED, REORDERED, assert_f32_close  # noqa: E402

REWRITES = "cortex-conv-im2col,cortex-unroll-pooling,cortex-fold-constant-layouts"


def one_function(arg_shapes, build) -> ModuleOp:
    """@main(args) -> build(*args), built with the op classes (their shape rules give the types)."""
    block = Block(arg_types=[TensorType(f32, list(s)) for s in arg_shapes])
    with ImplicitBuilder(block):
        result = build(*block.args)
        func.ReturnOp(result)
    return ModuleOp([func.FuncOp("main", ([a.type for a in block.args], [result.type]), Region(block))])


def both(module: ModuleOp, *inputs: np.ndarray):
    want = cortex.reference(module, entry="main", mode=None)(*inputs)
    got = cortex.compile(module, entry="main", mode=None, post_passes=REWRITES)(*inputs)
    return got, want


def test_the_onnx_backend_compiles_with_these_rewrites():
    assert COMPILE_PASSES.startswith(REWRITES + ",")


CONVS = st.fixed_dictionaries(
    {
        "n": st.integers(1, 2),
        "c": st.integers(1, 3),
        "f": st.integers(1, 4),
        "hw": st.tuples(st.integers(3, 8), st.integers(3, 8)),
        "k": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "strides": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
        "pads": st.tuples(*[st.integers(0, 2)] * 4),
        "bias": st.sampled_from(["none", "constant", "argument"]),
        "constant_weight": st.booleans(),
    }
)


@settings(max_examples=30, deadline=None)
@given(case=CONVS, seed=st.integers(0, 2**16))
def test_im2col_conv_equals_the_reference(case, seed):
    rng = np.random.default_rng(seed)
    n, c, f = case["n"], case["c"], case["f"]
    (h, w), (kh, kw), dil = case["hw"], case["k"], case["dilations"]
    if h + case["pads"][0] + case["pads"][2] < (kh - 1) * dil[0] + 1 or w + case["pads"][1] + case["pads"][3] < (kw - 1) * dil[1] + 1:
        return
    x = rng.standard_normal((n, c, h, w)).astype(np.float32)
    weight = rng.standard_normal((f, c, kh, kw)).astype(np.float32)
    bias = rng.standard_normal((f,)).astype(np.float32)
    shapes = [x.shape] + ([] if case["constant_weight"] else [weight.shape]) + ([bias.shape] if case["bias"] == "argument" else [])

    def build(xv, *rest):
        """Ops made here are inserted by the ImplicitBuilder, constants included."""
        rest = list(rest)
        wv = f32_constant(weight).result if case["constant_weight"] else rest.pop(0)
        bv = None
        if case["bias"] == "argument":
            bv = rest.pop(0)
        elif case["bias"] == "constant":
            bv = f32_constant(bias).result
        return ops.Conv2dOp(xv, wv, bv, strides=case["strides"], pads=case["pads"], dilations=dil).result

    inputs = [x] + ([] if case["constant_weight"] else [weight]) + ([bias] if case["bias"] == "argument" else [])
    module = one_function(shapes, build)
    (got,), (want,) = both(module, *inputs)
    assert_f32_close(got, want, ulps=ACCUMULATED)
    lowered = lower(module, post_passes="cortex-conv-im2col")
    assert not any(op.name == "linalg.conv_2d_nchw_fchw" for op in lowered.walk())


POOLS = st.fixed_dictionaries(
    {
        "kind": st.sampled_from(["max", "avg"]),
        "hw": st.tuples(st.integers(2, 9), st.integers(2, 9)),
        "k": st.tuples(st.integers(1, 4), st.integers(1, 4)),
        "strides": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "pads": st.tuples(*[st.integers(0, 1)] * 4),
        "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
    }
)


@settings(max_examples=30, deadline=None)
@given(case=POOLS, seed=st.integers(0, 2**16))
def test_unrolled_pooling_equals_the_reference(case, seed):
    (h, w), (kh, kw) = case["hw"], case["k"]
    pads = tuple(min(p, k - 1) for p, k in zip(case["pads"], (kh, kw, kh, kw)))  # ONNX: a window never lies in the padding only
    dh, dw = case["dilations"]
    if h + pads[0] + pads[2] < (kh - 1) * dh + 1 or w + pads[1] + pads[3] < (kw - 1) * dw + 1:
        return
    x = np.random.default_rng(seed).standard_normal((2, 3, h, w)).astype(np.float32)
    op = ops.MaxPoolOp if case["kind"] == "max" else ops.AvgPoolOp
    module = one_function([x.shape], lambda xv: op(xv, (kh, kw), case["strides"], pads, (dh, dw)).result)
    (got,), (want,) = both(module, x)
    assert_f32_close(got, want, ulps=ACCUMULATED)


def test_windows_above_the_limit_keep_their_reduction():
    module = one_function([(1, 1, 8, 8)], lambda xv: ops.MaxPoolOp(xv, (5, 5)).result)
    lowered = lower(module)
    UnrollPoolingPass(max_window=16).apply(cortex.make_context(), lowered)
    generics = [op for op in lowered.walk() if op.name == "linalg.generic"]
    assert any("reduction" in str(g.iterator_types) for g in generics)


def test_constant_layouts_fold_and_keep_results():
    rng = np.random.default_rng(5)
    weight = rng.standard_normal((6, 4)).astype(np.float32)
    bias = rng.standard_normal((6,)).astype(np.float32)
    module = one_function([(3, 4)], lambda xv: ops.LinearOp(xv, f32_constant(weight).result, f32_constant(bias).result).result)
    lowered = lower(module)
    FoldConstantLayoutsPass().apply(cortex.make_context(), lowered)
    assert not any(op.name == "linalg.broadcast" for op in lowered.walk())
    x = rng.standard_normal((3, 4)).astype(np.float32)
    (got,), (want,) = both(module, x)
    assert_f32_close(got, want, ulps=ACCUMULATED)
    assert_f32_close(got, x @ weight.T + bias, ulps=ACCUMULATED)


def test_large_broadcasts_stay_broadcasts():
    bias = np.arange(4, dtype=np.float32)
    module = one_function([(1, 4, 64, 64)], lambda xv: ops.AddOp(xv, f32_constant(bias.reshape(1, 4, 1, 1)).result).result)
    lowered = lower(module, post_passes="cortex-conv-im2col")
    before = [op.name for op in lowered.walk()]
    FoldConstantLayoutsPass(max_elements=1000).apply(cortex.make_context(), lowered)
    assert [op.name for op in lowered.walk()] == before


# ---------------------------------------------------------------- the runtime's fast path


def test_fast_path_still_rejects_wrong_arrays_and_returns_writeable_outputs():
    constant = np.ones((2, 3), np.float32)
    module = one_function([(2, 3)], lambda xv: f32_constant(constant).result)
    compiled = cortex.compile(module, entry="main", mode=None)
    (out,) = compiled(np.zeros((2, 3), np.float32))
    out[0, 0] = 5.0  # the caller owns its outputs, even a constant's
    (again,) = compiled(np.zeros((2, 3), np.float32))
    assert again[0, 0] == 1.0
    for bad in (np.zeros((2, 3), np.float64), np.zeros((3, 2), np.float32), [[0.0] * 3] * 2):
        with pytest.raises(CortexError, match="argument #0"):
            compiled(bad)


def test_zero_fills_are_calloc_and_other_fills_stay_full():
    module = one_function([(1, 2, 3, 3)], lambda xv: ops.MaxPoolOp(ops.Conv2dOp(xv, f32_constant(np.ones((2, 2, 1, 1), np.float32)).result, pads=(1, 1, 1, 1)).result, (2, 2), pads=(1, 1, 1, 1)).result)
    source = cortex.compile(module, entry="main", mode=None).source
    assert "np.zeros((1, 2, 5, 5), np.float32)" in source  # the conv's zero padding
    assert "np.full((1, 2, 7, 7), -np.inf, np.float32)" in source  # the max pool's padding
    x = np.random.default_rng(0).standard_normal((1, 2, 3, 3)).astype(np.float32)
    (got,), (want,) = both(module, x)
    assert_f32_close(got, want, ulps=REORDERED)


def test_a_reshape_is_written_in_place_only_when_nothing_else_reads_its_source():
    one = np.ones((), np.float32)

    def build(xv):
        t = ops.AddOp(xv, f32_constant(one).result).result
        r = ops.ReshapeOp(t, (6,)).result
        return ops.ReluOp(r).result

    module = one_function([(2, 3)], build)
    source = cortex.compile(module, entry="main", mode=None).source
    assert re.search(r"np\.maximum\((\w+), 0\.0, out=\1\)", source)  # the relu after the reshape runs in place
    # Two readers of the sum: the relu must not overwrite it.
    blk = Block(arg_types=[TensorType(f32, [2, 3])])
    with ImplicitBuilder(blk):
        t = ops.AddOp(blk.args[0], f32_constant(one).result).result
        r = ops.ReluOp(ops.ReshapeOp(t, (6,)).result).result
        func.ReturnOp(r, t)
    shared = ModuleOp([func.FuncOp("main", ([blk.args[0].type], [r.type, t.type]), Region(blk))])
    x = np.array([[-3, -2, -1], [0, 1, 2]], np.float32)
    got, want = both(shared, x)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
