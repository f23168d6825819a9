"""The linalg-level rewrites the ONNX backend compiles with (im2col convolution, unrolled pooling,
folded constant layouts), against the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.graphs import REWRITES, both, one_function
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects import tensor_ops as ops
from cortex.driver import lower
from cortex.frontends.onnx import f32_constant
from cortex.linalg_opt.fold_constant_layouts import FoldConstantLayoutsPass
from cortex.linalg_opt.unroll_pooling import UnrollPoolingPass
from cortex.onnx_backend import COMPILE_PASSES


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


@pytest.mark.slow
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


@pytest.mark.slow
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
