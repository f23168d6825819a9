"""cortex-convert-layout reduces before a transpose: r(T(x), axes) = [T'](r(x, perm[axes])).

Hypothesis draws the permutation (rank 2 to 4), the axes (negative too, or none: all), keepdims and the
reduction; the reference interpreter gives the same values before and after the pass (up to the order
of the sums), the NumPy backend too, and the rewritten module reduces the untransposed value.
"""

from __future__ import annotations

import numpy as np
from helpers.numerics import assert_f32_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects import tensor_ops as ops
from cortex.passes.convert_layout import convert_layout

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SHAPE = (2, 3, 4, 5)
KINDS = {"reduce_sum": ops.ReduceSumOp, "reduce_mean": ops.ReduceMeanOp, "reduce_max": ops.ReduceMaxOp}


def i64_array(values) -> str:
    return f"array<i64: {', '.join(map(str, values))}>" if values else "array<i64>"


def ttype(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}f32>"


@st.composite
def reductions(draw):
    rank = draw(st.integers(2, 4))
    perm = draw(st.permutations(range(rank)))
    axes = draw(st.lists(st.integers(-rank, rank - 1), max_size=rank, unique_by=lambda a: a % rank))
    return SHAPE[:rank], tuple(perm), axes, draw(st.booleans()), draw(st.sampled_from(sorted(KINDS)))


def module_text(shape, perm, axes, keep, kind) -> str:
    moved = tuple(shape[p] for p in perm)
    reduced = sorted({a % len(shape) for a in axes}) or range(len(shape))
    out = tuple(1 if i in reduced else d for i, d in enumerate(moved) if keep or i not in reduced)
    return (
        f"func.func @main(%x: {ttype(shape)}) -> {ttype(out)} {{\n"
        f'  %t = "cortex.transpose"(%x) <{{perm = array<i64: {", ".join(map(str, perm))}>}}> : ({ttype(shape)}) -> {ttype(moved)}\n'
        f'  %r = "cortex.{kind}"(%t) <{{axes = {i64_array(axes)}, keepdims = {int(keep)} : i64}}>'
        f" : ({ttype(moved)}) -> {ttype(out)}\n"
        f"  func.return %r : {ttype(out)}\n}}\n"
    )


@SETTINGS
@given(reductions())
def test_reduction_moves_before_the_transpose_with_the_same_values(case):
    shape, perm, axes, keep, kind = case
    text = module_text(shape, perm, axes, keep, kind)
    before, after = cortex.parse(text), cortex.parse(text)
    convert_layout(after)
    (reduce,) = [op for op in after.walk() if isinstance(op, KINDS[kind])]
    assert not isinstance(reduce.x.owner, ops.TransposeOp)  # it reduces %x itself
    x = np.random.default_rng(len(axes)).standard_normal(shape).astype(np.float32)
    (want,) = cortex.reference(before, entry="main", mode=None)(x)
    for got in (cortex.reference(after, entry="main", mode=None)(x)[0], cortex.compile(after, entry="main", mode=None)(x)[0]):
        assert np.shape(got) == np.shape(want)
        assert_f32_close(got, want, ulps=16)
