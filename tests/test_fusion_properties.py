"""Property tests of the fusion passes over generated graphs: every spelling of a GELU chain (operand
order of each add/mul, the cube's grouping, where the 0.5 goes, x/√2 or x·√½) becomes one `cortex.gelu`,
a constant off by 1e-3 or an intermediate with another use leaves the chain alone; a batch norm after a
constant-weight linear or conv2d of any size folds unless the producer has another use. Either way the
reference interpreter gives the same results before and after."""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.driver import run_passes
from cortex.ir import parse_module
from cortex.semantics import defaults as D

T = "tensor<2x3xf32>"
S = "tensor<f32>"
OFF = 1e-3  # far outside the matcher's 1e-6: another function


class Chain:
    """A function body written op by op; each add/mul takes its operands in the order `swaps` says."""

    def __init__(self, swaps: list[bool]):
        self.lines: list[str] = []
        self.types: dict[str, str] = {"x": T}
        self.swaps = iter(swaps)

    def const(self, name: str, value: float) -> str:
        self.lines.append(f"%{name} = cortex.constant dense<{value!r}> : {S}")
        self.types[name] = S
        return name

    def unary(self, op: str, name: str, a: str) -> str:
        self.lines.append(f"%{name} = cortex.{op} %{a} : {T} -> {T}")
        self.types[name] = T
        return name

    def binary(self, op: str, name: str, a: str, b: str, commutes: bool = True) -> str:
        if commutes and next(self.swaps):
            a, b = b, a
        self.lines.append(f"%{name} = cortex.{op} %{a}, %{b} : ({self.types[a]}, {self.types[b]}) -> {T}")
        self.types[name] = T
        return name

    def function(self, results: list[str]) -> str:
        body = "\n  ".join(self.lines)
        types = ", ".join(T for _ in results)
        returned = ", ".join(f"%{r}" for r in results)
        return f"func.func @f(%x: {T}) -> ({types}) {{\n  {body}\n  func.return {returned} : {types}\n}}\n"


def gelu_text(kind: str, cube: int, half: int, swaps: list[bool], off: int, leak: bool) -> str:
    """A GELU chain; constant number `off` (1-based, 0 for none) moved by OFF; `leak` returns the
    tanh/erf result too (an intermediate with a second use)."""
    c = Chain(swaps)
    values = {"one": 1.0, "half": 0.5}
    if kind == "tanh":
        values |= {"k": D.GELU_TANH_K, "c": D.GELU_TANH_C}
    else:
        values |= {"r": math.sqrt(2.0) if cube == 0 else math.sqrt(0.5)}  # x / √2, or x · √½
    for i, (name, value) in enumerate(values.items(), start=1):
        c.const(name, value + (OFF if i == off else 0.0))
    if kind == "tanh":
        if cube == 0:  # ((k·x)·x)·x, as traced PyTorch writes it
            kx3 = c.binary("mul", "kx3", c.binary("mul", "kx2", c.binary("mul", "kx", "k", "x"), "x"), "x")
        else:  # k·((x·x)·x)
            kx3 = c.binary("mul", "kx3", "k", c.binary("mul", "x3", c.binary("mul", "x2", "x", "x"), "x"))
        arg = c.binary("mul", "arg", "c", c.binary("add", "inner", "x", kx3))
        f = c.unary("tanh", "f", arg)
    else:
        scaled = c.binary("div", "s", "x", "r", commutes=False) if cube == 0 else c.binary("mul", "s", "x", "r")
        f = c.unary("erf", "f", scaled)
    one_plus = c.binary("add", "p", "one", f)
    if half == 0:  # (0.5·x)·(1 + f)
        out = c.binary("mul", "out", c.binary("mul", "hx", "half", "x"), one_plus)
    elif half == 1:  # x·(0.5·(1 + f))
        out = c.binary("mul", "out", "x", c.binary("mul", "hp", "half", one_plus))
    else:  # 0.5·(x·(1 + f))
        out = c.binary("mul", "out", "half", c.binary("mul", "xp", "x", one_plus))
    return c.function([out, f] if leak else [out])


def cortex_ops(module) -> Counter:
    return Counter(op.name for op in module.walk() if op.name.startswith("cortex."))


def same_results(text: str, after, inputs: list[np.ndarray]) -> None:
    expected = cortex.reference(parse_module(text), entry="f", mode=None)(*inputs)
    actual = cortex.reference(after, entry="f", mode=None)(*inputs)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        assert_f32_close(np.asarray(a), np.asarray(e), ulps=ACCUMULATED)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    kind=st.sampled_from(["tanh", "erf"]),
    cube=st.integers(0, 1),
    half=st.integers(0, 2),
    swaps=st.lists(st.booleans(), min_size=8, max_size=8),
    off=st.integers(0, 4),
    leak=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_every_spelling_of_gelu_is_recognised_and_nothing_else(kind, cube, half, swaps, off, leak, seed):
    text = gelu_text(kind, cube, half, swaps, off, leak)
    constants = 4 if kind == "tanh" else 3
    after = run_passes(parse_module(text), "cortex-recognize-gelu")
    after.verify()
    exact = off == 0 or off > constants
    if exact and not leak:
        assert cortex_ops(after) == Counter({"cortex.gelu": 1}), text
        (gelu,) = [op for op in after.walk() if op.name == "cortex.gelu"]
        assert gelu.approximate.data == ("tanh" if kind == "tanh" else "none")
    else:
        assert cortex_ops(after) == cortex_ops(parse_module(text)), text
    x = np.random.default_rng(seed).normal(0.0, 2.0, (2, 3)).astype(np.float32)
    same_results(text, after, [x])


def dense(array: np.ndarray) -> str:
    return f"dense<{json.dumps(array.astype(np.float32).tolist())}> : tensor<{'x'.join(map(str, array.shape))}xf32>"


def batch_norm_text(rng: np.random.Generator, conv: bool, channels: int, with_bias: bool, leak: bool) -> tuple[str, list[int]]:
    """batch_norm(linear or conv2d(x, W, b?)) with random constants; `leak` returns the producer too."""
    if conv:
        c_in, size, k = int(rng.integers(1, 3)), int(rng.integers(3, 6)), int(rng.integers(1, 4))
        x_shape, w_shape, y_shape = [1, c_in, size, size], [channels, c_in, k, k], [1, channels, size - k + 1, size - k + 1]
    else:
        n, features = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        x_shape, w_shape, y_shape = [n, features], [channels, features], [n, channels]
    tx, ty = (f"tensor<{'x'.join(map(str, s))}xf32>" for s in (x_shape, y_shape))
    tc = f"tensor<{channels}xf32>"
    params = {
        "w": rng.normal(0, 1, w_shape), "b": rng.normal(0, 1, channels), "scale": rng.normal(0, 1, channels),
        "shift": rng.normal(0, 1, channels), "mean": rng.normal(0, 1, channels), "var": rng.uniform(0, 2, channels),
    }
    lines = [f"%{name} = cortex.constant {dense(np.asarray(value))}" for name, value in params.items()]
    operands = "%x, %w, %b" if with_bias else "%x, %w"
    types = f"{tx}, tensor<{'x'.join(map(str, w_shape))}xf32>" + (f", {tc}" if with_bias else "")
    lines.append(f"%y = cortex.{'conv2d' if conv else 'linear'} {operands} : ({types}) -> {ty}")
    epsilon = float(rng.uniform(1e-5, 1.0))
    lines.append(
        f"%out = cortex.batch_norm %y, %scale, %shift, %mean, %var {{epsilon = {epsilon!r} : f32}} : "
        f"({ty}, {tc}, {tc}, {tc}, {tc}) -> {ty}"
    )
    results = ["out", "y"] if leak else ["out"]
    body = "\n  ".join(lines)
    signature = ", ".join(ty for _ in results)
    returned = ", ".join(f"%{r}" for r in results)
    text = f"func.func @f(%x: {tx}) -> ({signature}) {{\n  {body}\n  func.return {returned} : {signature}\n}}\n"
    return text, x_shape


@settings(max_examples=30, deadline=None, derandomize=True)
@given(
    conv=st.booleans(),
    channels=st.integers(1, 4),
    with_bias=st.booleans(),
    leak=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_batch_norm_folds_into_any_constant_producer_it_alone_reads(conv, channels, with_bias, leak, seed):
    rng = np.random.default_rng(seed)
    text, x_shape = batch_norm_text(rng, conv, channels, with_bias, leak)
    after = run_passes(parse_module(text), "cortex-fuse-batch-norm")
    after.verify()
    producer = "cortex.conv2d" if conv else "cortex.linear"
    if leak:
        assert cortex_ops(after) == cortex_ops(parse_module(text)), text
    else:
        ops = cortex_ops(after)
        assert ops[producer] == 1 and "cortex.batch_norm" not in ops, text
        (fused,) = [op for op in after.walk() if op.name == producer]
        assert fused.operands[1].name_hint == "fused_weight" and fused.operands[2].name_hint == "fused_bias"
    same_results(text, after, [rng.normal(0, 1, x_shape).astype(np.float32)])
