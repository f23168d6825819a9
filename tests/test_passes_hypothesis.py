"""Hypothesis: random small tensor graphs keep their meaning through the graph passes.

Graphs are random DAGs over two inputs of cortex elementwise ops, matmul,
transpose, reshape and relu, with constants drawn from {0, 1, 2, ...}
(splat or not, rank 0 or full, on either side), repeated subexpressions
(for CSE), chains that the identities collapse (relu∘relu, transpose∘
transpose, reshape∘reshape), and dead ends. Properties:

- `canonicalize,cse,dce` leaves the reference interpreter's results
  unchanged (to a tight tolerance; NaN where NaN) and the output verifies;
- forgetting every inferable result shape and running
  `cortex-shape-inference` gives back the very same module.

Division is only by non-zero constants: every rewrite here is exact up to
the sign of a zero (x + 0 → x keeps −0 where x + 0 is +0), and dividing by
a signed zero is the one place that sign would show.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.numerics import REORDERED, assert_f32_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.rewriter import Rewriter

import cortex
from cortex.dialects import shapes
from cortex.dialects.base import CortexOp
from cortex.dialects.tensor_ops import ConstantOp, ReshapeOp
from cortex.driver import run_passes
from cortex.ir import parse_module, to_text

INPUT_SHAPE = (2, 3)
CONSTANTS = (0.0, 1.0, 2.0, -1.0, 0.5, 3.0)
NONZERO = (1.0, 2.0, -1.0, 0.5, 4.0)
EXPONENTS = (1.0, 2.0, 3.0, 0.5)
UNARY = ("neg", "exp", "log", "sqrt", "abs", "relu", "sigmoid", "tanh")
BINARY = ("add", "sub", "mul")
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def ttype(shape) -> str:
    return f"tensor<{'x'.join(map(str, shape))}{'x' if shape else ''}f32>"


def reshapes(shape) -> list[tuple[int, ...]]:
    """Other shapes with the same element count (rank 1 to 3)."""
    n = math.prod(shape)
    out = [(n,)]
    out += [(a, n // a) for a in range(1, n + 1) if n % a == 0]
    out += [(1, a, n // a) for a in range(2, n) if n % a == 0]
    return [s for s in out if s != tuple(shape)]


class Graph:
    """A function body under construction: SSA names with their shapes."""

    def __init__(self):
        self.values: list[tuple[str, tuple[int, ...]]] = [("%x", INPUT_SHAPE), ("%y", INPUT_SHAPE)]
        self.lines: list[str] = []
        self.ops: list[str] = []  # non-constant op lines, for duplication

    def add(self, shape, rhs: str) -> str:
        name = f"%{'c' if rhs.startswith('cortex.constant') else 'v'}{len(self.lines)}"
        self.lines.append(f"  {name} = {rhs}")
        self.values.append((name, tuple(shape)))
        return name

    def constant(self, draw, shape) -> str:
        n = math.prod(shape)
        if n > 1 and draw(st.booleans()):
            elems = draw(st.lists(st.sampled_from(CONSTANTS), min_size=n, max_size=n))
            body = "[" + ", ".join(map(repr, elems)) + "]" if len(shape) == 1 else None
            if body is None:
                array = np.array(elems, dtype=np.float32).reshape(shape)
                body = np.array2string(array, separator=", ").replace("\n", "")
        else:
            body = repr(draw(st.sampled_from(CONSTANTS)))
        return self.add(shape, f"cortex.constant dense<{body}> : {ttype(shape)}")

    def op(self, shape, text: str) -> str:
        name = self.add(shape, text)
        self.ops.append(self.lines[-1].split(" = ", 1)[1])
        return name


def value(draw, g: Graph, pred=lambda s: True):
    """Mostly one of the newest values (deep chains, few dead ends), sometimes any."""
    choices = [v for v in g.values if pred(v[1]) and not v[0].startswith("%c")]
    if not choices:
        return None
    if draw(st.booleans()):
        return choices[-1]
    return draw(st.sampled_from(choices))


def step(draw, g: Graph) -> None:
    kind = draw(
        st.sampled_from(
            ["identity", "identity", "unary", "binary", "binary-const", "div", "pow"]
            + ["matmul", "transpose", "transposes", "reshape", "repeat", "chain"]
        )
    )
    if kind == "identity":
        # x op c with c one of the values the identities look for, on either side
        a, sa = value(draw, g)
        op, units = draw(st.sampled_from([("mul", (1.0, 0.0, 2.0)), ("add", (0.0, 1.0)), ("sub", (0.0, 1.0)), ("div", (1.0, 2.0)), ("pow", (2.0, 1.0))]))
        sc = draw(st.sampled_from([(), sa, sa[-1:]]))
        unit = draw(st.sampled_from(units))
        if math.prod(sc) > 1 and draw(st.booleans()):
            elems = ", ".join([repr(unit)] * math.prod(sc))
            body = f"[{elems}]" if len(sc) == 1 else np.array2string(np.full(sc, unit, np.float32), separator=", ").replace("\n", "")
        else:
            body = repr(unit)
        c = g.add(sc, f"cortex.constant dense<{body}> : {ttype(sc)}")
        operands = [(a, sa), (c, sc)]
        if op in ("mul", "add") and draw(st.booleans()):
            operands.reverse()
        (l, sl), (r, sr) = operands
        s = shapes.broadcast(sl, sr)
        g.op(s, f"cortex.{op} {l}, {r} : ({ttype(sl)}, {ttype(sr)}) -> {ttype(s)}")
    elif kind == "unary":
        v, s = value(draw, g)
        op = draw(st.sampled_from(UNARY))
        g.op(s, f"cortex.{op} {v} : {ttype(s)} -> {ttype(s)}")
    elif kind in ("binary", "binary-const"):
        a, sa = value(draw, g)
        if kind == "binary":
            b, sb = value(draw, g, lambda s: _broadcasts(sa, s))
        else:
            sb = draw(st.sampled_from([(), sa, sa[-1:]]))
            b = g.constant(draw, sb)
        if draw(st.booleans()):
            (a, sa), (b, sb) = (b, sb), (a, sa)
        s = shapes.broadcast(sa, sb)
        op = draw(st.sampled_from(BINARY))
        g.op(s, f"cortex.{op} {a}, {b} : ({ttype(sa)}, {ttype(sb)}) -> {ttype(s)}")
    elif kind in ("div", "pow"):
        a, sa = value(draw, g)
        c = g.add((), f"cortex.constant dense<{draw(st.sampled_from(NONZERO if kind == 'div' else EXPONENTS))!r}> : tensor<f32>")
        g.op(sa, f"cortex.{kind} {a}, {c} : ({ttype(sa)}, tensor<f32>) -> {ttype(sa)}")
    elif kind == "matmul":
        a, sa = value(draw, g, lambda s: len(s) == 2)
        found = value(draw, g, lambda s: len(s) == 2 and s[0] == sa[1])
        b, sb = found if found and draw(st.booleans()) else (g.constant(draw, (sa[1], 2)), (sa[1], 2))
        s = (sa[0], sb[1])
        g.op(s, f'"cortex.matmul"({a}, {b}) : ({ttype(sa)}, {ttype(sb)}) -> {ttype(s)}')
    elif kind == "transpose":
        a, sa = value(draw, g, lambda s: len(s) >= 2)
        perm = draw(st.permutations(range(len(sa))))
        s = tuple(sa[p] for p in perm)
        g.op(s, f"cortex.transpose {a} {{perm = array<i64: {', '.join(map(str, perm))}>}} : {ttype(sa)} -> {ttype(s)}")
    elif kind == "transposes":
        # two transposes in a row, on a rank-3 view when possible (2-D perms all commute)
        a, sa = value(draw, g, lambda s: len(s) >= 2)
        if len(sa) == 2 and min(sa) > 1:
            a = g.op((sa[0], 1, sa[1]), f"cortex.reshape {a} : {ttype(sa)} -> {ttype((sa[0], 1, sa[1]))}")
            sa = (sa[0], 1, sa[1])
        for _ in range(2):
            perm = draw(st.permutations(range(len(sa))))
            s = tuple(sa[p] for p in perm)
            perm_text = ", ".join(map(str, perm))
            a = g.op(s, f"cortex.transpose {a} {{perm = array<i64: {perm_text}>}} : {ttype(sa)} -> {ttype(s)}")
            sa = s
    elif kind == "reshape":
        a, sa = value(draw, g, lambda s: len(s) >= 1)
        s = draw(st.sampled_from(reshapes(sa)))
        g.op(s, f"cortex.reshape {a} : {ttype(sa)} -> {ttype(s)}")
    elif kind == "repeat" and g.ops:
        text = draw(st.sampled_from(g.ops))
        g.op(_result_shape(g, text), text)
    elif kind == "chain":
        a, sa = value(draw, g)
        op = draw(st.sampled_from(["relu", "neg", "abs"]))
        for _ in range(draw(st.integers(2, 3))):
            a = g.op(sa, f"cortex.{op} {a} : {ttype(sa)} -> {ttype(sa)}")


def _broadcasts(a, b) -> bool:
    try:
        shapes.broadcast(a, b)
        return True
    except shapes.ShapeError:
        return False


def _result_shape(g: Graph, text: str) -> tuple[int, ...]:
    for line, (_, shape) in zip(g.lines, g.values[2:]):
        if line.split(" = ", 1)[1] == text:
            return shape
    raise AssertionError(text)


@st.composite
def graphs(draw) -> str:
    g = Graph()
    for _ in range(draw(st.integers(1, 14))):
        step(draw, g)
    computed = g.values[2:] or g.values
    # the last value (the deepest chain, most rewrites to check) and maybe one more
    outputs = [computed[-1]] + draw(st.lists(st.sampled_from(computed[:-1] or computed), max_size=1))
    outputs = list(dict.fromkeys(outputs))
    names = ", ".join(n for n, _ in outputs)
    types = ", ".join(ttype(s) for _, s in outputs)
    arg = ttype(INPUT_SHAPE)
    body = "\n".join(g.lines)
    return f"func.func @g(%x: {arg}, %y: {arg}) -> ({types}) {{\n{body}\n  func.return {names} : {types}\n}}\n"


def run(module, inputs):
    return cortex.reference(module, entry="g", mode=None)(*inputs)


@pytest.mark.slow
@SETTINGS
@given(text=graphs(), seed=st.integers(0, 2**16))
def test_canonicalize_cse_dce_keep_the_results(text, seed):
    rng = np.random.default_rng(seed)
    inputs = [(rng.normal(size=INPUT_SHAPE) * 2).astype(np.float32) for _ in range(2)]
    before = parse_module(text)
    after = run_passes(parse_module(text), "canonicalize,cse,dce")
    after.verify()
    parse_module(to_text(after))  # the output also round-trips through the text form
    for want, got in zip(run(before, inputs), run(after, inputs), strict=True):
        assert_f32_close(got, want, ulps=REORDERED, err_msg=text)


def forget_shapes(module):
    """Every inferable result made fully dynamic; the function returns what it now returns."""
    for op in list(module.walk()):
        if isinstance(op, CortexOp) and not isinstance(op, (ConstantOp, ReshapeOp)):
            for result in op.results:
                Rewriter.replace_value_with_new_type(result, dynamic(result.type))
        if isinstance(op, func.ReturnOp):
            fn = op.parent_op()
            outputs = [v.type for v in op.arguments]
            fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), outputs)
    return module


def dynamic(t):
    return TensorType(t.element_type, [shapes.DYNAMIC] * t.get_num_dims())


@pytest.mark.slow
@SETTINGS
@given(text=graphs())
def test_shape_inference_restores_forgotten_shapes(text):
    module = forget_shapes(parse_module(text))
    module.verify()  # `?` agrees with anything
    inferred = run_passes(module, "cortex-shape-inference")
    assert to_text(inferred) == to_text(parse_module(text))
