"""Every code path that transposes, on non-involutive permutations (3-cycles and worse).

`cortex-fold-constant-layouts` once folding a transpose of a constant with the
*inverse* permutation passed every test — every permutation its tests used was its
own inverse — although the NumPy backend's own transpose had been pinned down against
exactly that mistake. The siblings, each against plain `np.transpose`:

- the NumPy backend's `linalg.transpose` of an argument (no post passes);
- `cortex-fold-constant-layouts`, a `linalg.transpose` of a constant folded at compile time;
- the cortex-level folding of `canonicalize`, a `cortex.transpose` of a constant;
- the reference interpreter.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

import cortex
from cortex.dialects import tensor_ops as ops
from cortex.driver import lower
from cortex.frontends.onnx import f32_constant


def module_of(c: np.ndarray | None, shape, perm) -> ModuleOp:
    """@main(x) = transpose(x) when `c` is None, else transpose(c) + x (the constant's transpose folds)."""
    out = [shape[p] for p in perm]
    block = Block(arg_types=[TensorType(f32, list(shape) if c is None else out)])
    with ImplicitBuilder(block):
        if c is None:
            result = ops.TransposeOp(block.args[0], list(perm)).result
        else:
            t = ops.TransposeOp(f32_constant(c).result, list(perm)).result
            result = ops.AddOp(t, block.args[0]).result
        func.ReturnOp(result)
    return ModuleOp([func.FuncOp("main", ([block.args[0].type], [result.type]), Region(block))])


def permutations(rank: int) -> st.SearchStrategy:
    return st.permutations(list(range(rank))).map(tuple)


@st.composite
def cases(draw):
    rank = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    return shape, draw(permutations(rank))


def check(shape, perm, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    x = rng.permutation(int(np.prod(shape))).reshape(shape).astype(np.float32)  # distinct values
    out = tuple(shape[p] for p in perm)
    y = rng.standard_normal(out).astype(np.float32)
    want_arg, want_const = np.transpose(x, perm), np.transpose(x, perm) + y
    arg, const = module_of(None, shape, perm), module_of(x, shape, perm)
    # the NumPy backend's transpose, and the reference interpreter
    for got in (cortex.compile(arg, entry="main", mode=None, post_passes=None)(x)[0],
                cortex.reference(arg, entry="main", mode=None)(x)[0]):
        assert got.shape == want_arg.shape
        np.testing.assert_array_equal(got, want_arg)
    # the linalg-level fold: no transpose left to run, and the folded constant is the transposed one
    lowered = lower(const, post_passes="cortex-fold-constant-layouts")
    assert not any(op.name == "linalg.transpose" for op in lowered.walk())
    got = cortex.compile(const, entry="main", mode=None, post_passes="cortex-fold-constant-layouts")(y)[0]
    np.testing.assert_array_equal(got, want_const)
    # the cortex-level fold (canonicalize), then the backend
    got = cortex.compile(const, entry="main", mode=None, passes="canonicalize", post_passes=None)(y)[0]
    np.testing.assert_array_equal(got, want_const)


NON_INVOLUTIVE = [p for r in (3, 4) for p in itertools.permutations(range(r)) if tuple(np.argsort(p)) != p]


@pytest.mark.parametrize("perm", [(1, 2, 0), (2, 0, 1), (0, 2, 3, 1), (3, 0, 1, 2)], ids=str)
def test_three_and_four_cycles(perm):
    assert perm in NON_INVOLUTIVE
    check(tuple(range(2, 2 + len(perm))), perm)


def test_cube_three_cycle_where_shapes_cannot_tell():
    """All extents equal: only the values tell a permutation from its inverse."""
    check((3, 3, 3), (1, 2, 0))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), seed=st.integers(0, 2**16))
def test_random_permutations_on_every_path(case, seed):
    shape, perm = case
    check(shape, perm, seed)
