"""The NumPy runtime's per-call fast path: no conversions, yet wrong arrays rejected, outputs the caller's,
and the emitted buffers (calloc'd zero fills, in-place reshapes only when safe)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.graphs import both, one_function
from helpers.numerics import REORDERED, assert_f32_close
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

import cortex
from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx import f32_constant
from cortex.ir import CortexError


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
