"""Transposes, broadcasts and reductions of rank 3 and 4: reference vs NumPy backend vs mlir-runner.

Mutation testing found that emitting `linalg.transpose` with the inverse
permutation passed every test: the inverse equals the permutation for 2-D
and self-inverse permutations, and no test sent a 3-cycle or NCHW→NHWC
through the backend. Here every permutation of rank 3 and 4 runs through the
reference interpreter and the NumPy backend (results and shapes against
plain `np.transpose`), alone and feeding elementwise work (the aligned-view
path of `linalg.generic`); a seeded selection also through upstream
`mlir-runner`. Broadcasts over random size-1/missing axes and reductions
over random axis sets (negative axes, keepdims 0/1) get the same treatment.

The expected values are plain NumPy on the inputs, independent of the
dialect's kernels and shape rules.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from helpers.numerics import ALGORITHM, assert_f32_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.backends.mlir.upstream import mlir_runner_available, run_with_mlir
from cortex.driver import compile_lowered, lower
from cortex.ir import parse_module

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
needs_mlir_runner = pytest.mark.skipif(not mlir_runner_available(), reason="mlir-runner (mlir-22-tools) not installed")
SHAPES = {3: (2, 3, 4), 4: (2, 3, 4, 5)}


def ttype(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}f32>"


def data(shape, seed: int = 0) -> np.ndarray:
    """Distinct values, so a wrong permutation of equal extents cannot pass."""
    rng = np.random.default_rng(seed)
    return rng.permutation(int(np.prod(shape, dtype=int))).reshape(shape).astype(np.float32) - 7.0


def run_all(text: str, inputs, upstream: bool = False) -> list[list[np.ndarray]]:
    """Results of @main by the reference interpreter, the NumPy backend and (optionally) mlir-runner."""
    module = cortex.parse(text)
    results = [
        list(cortex.reference(module, entry="main", mode=None)(*inputs)),
        list(cortex.compile(module, entry="main", mode=None)(*inputs)),
    ]
    if upstream:
        results.append(list(run_with_mlir(lower(cortex.parse(text)), "main", inputs)))
    return results


def assert_all_equal(results, expected: list[np.ndarray], ulps: float = 0.0) -> None:
    """Layout ops only move data: exact (ulps=0) unless the op computes (reductions)."""
    for got in results:
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            g = np.asarray(g)
            assert g.shape == e.shape, f"shape {g.shape}, expected {e.shape}"
            if ulps:
                assert_f32_close(g, e, ulps=ulps)
            else:
                np.testing.assert_array_equal(g, e)


# ---------------------------------------------------------------- transpose


def transpose_module(shape, perm, then_add: bool) -> str:
    out = tuple(shape[p] for p in perm)
    ops = f'  %t = "cortex.transpose"(%x) <{{perm = array<i64: {", ".join(map(str, perm))}>}}> : ({ttype(shape)}) -> {ttype(out)}\n'
    result = "%t"
    if then_add:  # the transposed view feeds an elementwise generic (aligned access), plus a row vector
        ops += f"  %s = cortex.add %t, %b : ({ttype(out)}, {ttype(out[-1:])}) -> {ttype(out)}\n"
        result = "%s"
    return (
        f"func.func @main(%x: {ttype(shape)}, %b: {ttype(out[-1:])}) -> {ttype(out)} {{\n"
        f"{ops}  func.return {result} : {ttype(out)}\n}}\n"
    )


def check_transpose(perm, then_add: bool, upstream: bool = False) -> None:
    shape = SHAPES[len(perm)]
    x = data(shape)
    b = data((shape[perm[-1]],), seed=1)
    expected = np.transpose(x, perm) + (b if then_add else 0)
    assert_all_equal(run_all(transpose_module(shape, perm, then_add), [x, b], upstream), [expected])


ALL_PERMS = [p for r in (3, 4) for p in itertools.permutations(range(r))]


@pytest.mark.parametrize("then_add", [False, True], ids=["alone", "then-add"])
@pytest.mark.parametrize("perm", ALL_PERMS, ids=lambda p: "".join(map(str, p)))
def test_every_rank3_and_rank4_permutation(perm, then_add):
    check_transpose(perm, then_add)


UPSTREAM_PERMS = [(1, 2, 0), (2, 0, 1), (0, 2, 3, 1), (0, 3, 1, 2), (3, 1, 0, 2)]  # 3-cycles, NCHW↔NHWC, another


@needs_mlir_runner
@pytest.mark.parametrize("perm", UPSTREAM_PERMS, ids=lambda p: "".join(map(str, p)))
def test_non_involutive_permutations_upstream(perm):
    check_transpose(perm, then_add=True, upstream=True)


def test_inverse_permutation_is_not_the_permutation():
    """The cases above can tell a permutation from its inverse (the mutant they exist for)."""
    inverse_differs = [p for p in ALL_PERMS if tuple(np.argsort(p)) != p]
    assert (1, 2, 0) in inverse_differs and (0, 2, 3, 1) in inverse_differs


# ---------------------------------------------------------------- permuted indexing maps of linalg.generic

LOOPS = "ijkl"


def permuted_generic(perm, on_output: bool) -> tuple[str, tuple[int, ...], tuple[int, ...]]:
    """`linalg.generic` computing x + 1 with a permutation indexing map on its input or its output.

    This is the emitter's aligned-view path (an operand's axes put in loop
    order), which a `linalg.transpose` alone never reaches.
    """
    rank = len(perm)
    loops = SHAPES[rank]
    permuted = tuple(loops[p] for p in perm)
    ident = ", ".join(f"d{d}" for d in range(rank))
    mapped = ", ".join(f"d{p}" for p in perm)
    dims = ", ".join(f"d{d}" for d in range(rank))
    in_map, out_map = (ident, mapped) if on_output else (mapped, ident)
    in_shape, out_shape = (loops, permuted) if on_output else (permuted, loops)
    iterators = ", ".join(['"parallel"'] * rank)
    text = (
        f"func.func @main(%x: {ttype(in_shape)}) -> {ttype(out_shape)} {{\n"
        f"  %one = arith.constant 1.0 : f32\n"
        f"  %e = tensor.empty() : {ttype(out_shape)}\n"
        f"  %r = linalg.generic {{indexing_maps = [affine_map<({dims}) -> ({in_map})>, affine_map<({dims}) -> ({out_map})>], "
        f"iterator_types = [{iterators}]}} ins(%x : {ttype(in_shape)}) outs(%e : {ttype(out_shape)}) {{\n"
        f"  ^bb0(%v: f32, %o: f32):\n    %s = arith.addf %v, %one : f32\n    linalg.yield %s : f32\n"
        f"  }} -> {ttype(out_shape)}\n"
        f"  func.return %r : {ttype(out_shape)}\n}}\n"
    )
    return text, in_shape, out_shape


def check_permuted_generic(perm, on_output: bool, upstream: bool = False) -> None:
    text, in_shape, _ = permuted_generic(perm, on_output)
    x = data(in_shape)
    loops = LOOPS[: len(perm)]
    mapped = "".join(loops[p] for p in perm)
    spec = f"{loops}->{mapped}" if on_output else f"{mapped}->{loops}"
    expected = np.einsum(spec, x) + 1  # out[loops] = x[map(loops)] (+ 1), or out[map(loops)] = x[loops] + 1
    results = [list(compile_lowered(parse_module(text), "main")(x))]
    if upstream:
        results.append(list(run_with_mlir(parse_module(text), "main", [x])))
    assert_all_equal(results, [expected])


@pytest.mark.parametrize("on_output", [False, True], ids=["input-map", "output-map"])
@pytest.mark.parametrize("perm", ALL_PERMS, ids=lambda p: "".join(map(str, p)))
def test_generic_with_permuted_map(perm, on_output):
    check_permuted_generic(perm, on_output)


@needs_mlir_runner
@pytest.mark.parametrize("on_output", [False, True], ids=["input-map", "output-map"])
@pytest.mark.parametrize("perm", UPSTREAM_PERMS, ids=lambda p: "".join(map(str, p)))
def test_generic_with_permuted_map_upstream(perm, on_output):
    check_permuted_generic(perm, on_output, upstream=True)


# ---------------------------------------------------------------- broadcast


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: rank 3/4, random axes of size 1 or missing (leading) on either side."""
    rank = draw(st.sampled_from([3, 4]))
    full = SHAPES[rank]
    a = [draw(st.sampled_from([d, 1])) for d in full]
    b = [d if a_d == 1 else draw(st.sampled_from([d, 1])) for d, a_d in zip(full, a)]
    b = b[draw(st.integers(0, rank - 1)):]  # drop leading axes: numpy broadcasting prepends them
    if draw(st.booleans()):
        a, b = b, a
    op = draw(st.sampled_from(["add", "sub", "mul"]))
    return op, tuple(a), tuple(b)


UFUNC = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def broadcast_module(op: str, a, b) -> str:
    out = np.broadcast_shapes(a, b)
    return (
        f"func.func @main(%a: {ttype(a)}, %b: {ttype(b)}) -> {ttype(out)} {{\n"
        f"  %r = cortex.{op} %a, %b : ({ttype(a)}, {ttype(b)}) -> {ttype(out)}\n"
        f"  func.return %r : {ttype(out)}\n}}\n"
    )


def check_broadcast(op, a, b, upstream: bool = False) -> None:
    x, y = data(a), data(b, seed=2)
    assert_all_equal(run_all(broadcast_module(op, a, b), [x, y], upstream), [UFUNC[op](x, y)])


@pytest.mark.slow
@SETTINGS
@given(broadcast_pair())
def test_random_broadcasts(case):
    check_broadcast(*case)


@needs_mlir_runner
@pytest.mark.parametrize(
    "case",
    [("sub", (2, 1, 4), (3, 1)), ("mul", (1, 3, 1, 5), (2, 1, 4, 1)), ("add", (5,), (2, 3, 4, 5)), ("sub", (4, 1), (2, 1, 1, 5))],
    ids=str,
)
def test_broadcasts_upstream(case):
    check_broadcast(*case, upstream=True)


# ---------------------------------------------------------------- reductions


@st.composite
def reduction(draw):
    rank = draw(st.sampled_from([3, 4]))
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True, max_size=rank))
    axes = [a - rank if draw(st.booleans()) else a for a in axes]  # negative spellings too
    return draw(st.sampled_from(["sum", "mean", "max"])), SHAPES[rank], tuple(axes), draw(st.booleans())


NP_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max}


def reduction_module(kind, shape, axes, keepdims) -> str:
    out = NP_REDUCE[kind](np.zeros(shape), axis=tuple(axes) or None, keepdims=keepdims).shape
    return (
        f"func.func @main(%x: {ttype(shape)}) -> {ttype(out)} {{\n"
        f"  %r = cortex.reduce_{kind} %x {{axes = array<i64{': ' if axes else ''}{', '.join(map(str, axes))}>, "
        f"keepdims = {int(keepdims)} : i64}} : {ttype(shape)} -> {ttype(out)}\n"
        f"  func.return %r : {ttype(out)}\n}}\n"
    )


def check_reduction(kind, shape, axes, keepdims, upstream: bool = False) -> None:
    x = data(shape) / 8
    expected = NP_REDUCE[kind](x.astype(np.float64), axis=tuple(axes) or None, keepdims=keepdims)
    expected = np.asarray(expected, np.float32)
    assert_all_equal(run_all(reduction_module(kind, shape, axes, keepdims), [x], upstream), [expected], ulps=ALGORITHM)


@pytest.mark.slow
@SETTINGS
@given(reduction())
def test_random_reductions(case):
    check_reduction(*case)


@needs_mlir_runner
@pytest.mark.parametrize(
    "case",
    [("sum", (2, 3, 4), (0, 2), False), ("mean", (2, 3, 4, 5), (-1, 1), True), ("max", (2, 3, 4, 5), (2,), False), ("sum", (2, 3, 4), (), True)],
    ids=str,
)
def test_reductions_upstream(case):
    check_reduction(*case, upstream=True)
