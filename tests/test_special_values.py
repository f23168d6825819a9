"""Special float values through every backend: the reference, the NumPy backend and IREE agree.

A Hypothesis strategy draws ±0, ±inf, NaN, subnormals, the largest finite values, negative bases
with integral (odd and even) and fractional exponents, and ordinary floats; one program per element
type holds every elementwise op, so IREE compiles it once. IREE's one documented difference is
allowed explicitly and nowhere else: its CPU runtime flushes subnormals to zero (inputs read as ±0,
results below the smallest normal written as ±0; README, "IREE numerics"), so an IREE result
may instead match the reference on the inputs with their subnormals flushed, within the smallest
normal. Budgets are float32/float64 ULPs of the reference value (`ULPS`): 0 where both sides round
the exact result once, a few where a backend uses another approximation of a transcendental.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.ir import parse_module

N = 16
UNARY = ("exp", "log", "sqrt", "abs", "neg", "relu", "sigmoid", "tanh", "gelu", "gelu_tanh")
BINARY = ("pow", "add", "mul", "div")
OPS = BINARY + UNARY
DTYPES = {"f32": np.float32, "f64": np.float64}

ULPS = {"exp": 4, "log": 4, "tanh": 4, "sigmoid": 4, "pow": 2}
"""Budgets in ULPs of the reference value; every op not listed: 0 (a correctly rounded operation on both sides).
See `tolerance` for gelu (the compiled form's erfc fit), gelu_tanh and IREE's f64 pow (conditioning)."""

EPS32 = float(np.finfo(np.float32).eps)
GELU_RELATIVE = 16 * EPS32
"""The compiled exact gelu evaluates erfc by a fit of relative error < 1.2e-7 (`cortex.lowering.tensor_ops`):
float32-accurate in every element type (the erf it replaced was no better in f64)."""


def program() -> str:
    """@f(a32, b32, a64, b64): every op of `OPS` on the f32 pair, then on the f64 pair (one compile per backend)."""
    args, lines, names, types = [], [], [], []
    for element in DTYPES:
        t = f"tensor<{N}x{element}>"
        a, b = f"%a_{element}", f"%b_{element}"
        args += [f"{a}: {t}", f"{b}: {t}"]
        for op in OPS:
            name = f"%{op}_{element}"
            names.append(name)
            types.append(t)
            if op in BINARY:
                lines.append(f"  {name} = cortex.{op} {a}, {b} : ({t}, {t}) -> {t}")
            elif op == "gelu_tanh":
                lines.append(f'  {name} = cortex.gelu {a} {{approximate = "tanh"}} : {t} -> {t}')
            else:
                lines.append(f"  {name} = cortex.{op} {a} : {t} -> {t}")
    body = "\n".join(lines)
    return (f"func.func @f({', '.join(args)}) -> ({', '.join(types)}) {{\n{body}\n"
            f"  func.return {', '.join(names)} : {', '.join(types)}\n}}")


def special_floats(dtype) -> st.SearchStrategy[float]:
    """±0, ±inf, NaN, subnormals, the extremes, small integers (odd and even, as bases and exponents), halves."""
    info = np.finfo(dtype)
    fixed = [0.0, -0.0, math.inf, -math.inf, math.nan, float(info.smallest_subnormal), -float(info.smallest_subnormal),
             float(info.smallest_normal) / 3, float(info.max), -float(info.max), float(info.smallest_normal), 1.0, -1.0]
    width = 32 if dtype == np.float32 else 64
    return st.one_of(
        st.sampled_from(fixed),
        st.integers(-9, 9).map(float),
        st.integers(-9, 9).map(lambda k: k + 0.5),
        st.floats(width=width, allow_nan=True, allow_infinity=True, allow_subnormal=True),
        st.floats(-20, 20, width=width),
    )


def flushed(x: np.ndarray) -> np.ndarray:
    """`x` as IREE's CPU runtime reads it: subnormals as zeros of their sign."""
    tiny = np.finfo(x.dtype).smallest_normal
    return np.where(np.abs(x) < tiny, np.copysign(0.0, x), x).astype(x.dtype)


def tolerance(op: str, a: np.ndarray, b: np.ndarray, desired: np.ndarray) -> np.ndarray:
    """The allowed |actual - desired| per element (before the absolute floor)."""
    eps = float(np.finfo(desired.dtype).eps)
    with np.errstate(all="ignore"):
        a64, b64, d64 = (x.astype(np.float64) for x in (a, b, desired))
        if op == "gelu":
            return np.maximum(GELU_RELATIVE, 16 * eps) * np.abs(d64)
        ulps = np.full(desired.shape, float(ULPS.get(op, 0)))
        if op == "gelu_tanh":  # exp(-2u)'s argument rounds to ½ ULP of u, and that error is amplified |2u| times
            ulps = 8 + 2 * np.abs(2 * 0.7978845608 * (a64 + 0.044715 * a64**3))
        if op == "pow":  # IREE: exp(y·log|x|) in f64; in f64 the rounding of the product is amplified |y·log|x|| times
            ulps = ulps + np.nan_to_num(2 * np.abs(b64 * np.log(np.abs(a64))), nan=0, posinf=0)
        return ulps * eps * np.abs(d64)


def mismatches(op: str, a, b, actual, desired, atol: float) -> np.ndarray:
    """Where `actual` is not `desired`: NaN-ness, infinities, the sign of zero, then the ULP budget."""
    actual, desired = np.asarray(actual), np.asarray(desired)
    assert actual.dtype == desired.dtype, (op, actual.dtype, desired.dtype)
    nan_a, nan_d = np.isnan(actual), np.isnan(desired)
    with np.errstate(all="ignore"):
        diff = np.abs(actual.astype(np.float64) - desired.astype(np.float64))
        close = (diff <= tolerance(op, a, b, desired) + atol) | (actual == desired)
    zeros = (actual == 0) & (desired == 0)
    close &= ~zeros | (np.signbit(actual) == np.signbit(desired))
    close &= np.isinf(actual) == np.isinf(desired)
    return ~np.where(nan_a | nan_d, nan_a & nan_d, close)


@pytest.fixture(scope="module")
def runners(tmp_path_factory):
    """{backend: callable}: the program parsed and compiled once for the whole module."""
    text = program()
    out = {"reference": cortex.reference(parse_module(text), entry="f", mode=None),
           "numpy": cortex.compile(parse_module(text), entry="f", mode=None, split=False)}
    if HAVE_IREE:
        with pytest.MonkeyPatch.context() as mp:
            for name, value in EVERY_RUN_ON_IREE.items():
                mp.setenv(name, value)
            mp.setenv("CORTEX_IREE_CACHE", str(tmp_path_factory.mktemp("iree-cache")))
            out["iree"] = cortex.compile(parse_module(text), entry="f", mode=None, backend="iree", split=False)
    return out


try:
    import iree.compiler  # noqa: F401
    import iree.runtime  # noqa: F401

    HAVE_IREE = True
except ImportError:
    HAVE_IREE = False


def by_element(results) -> dict[str, dict[str, np.ndarray]]:
    """The program's results as {element: {op: array}}."""
    flat = iter(results)
    return {element: {op: next(flat) for op in OPS} for element in DTYPES}


def check_backends(runners, inputs: dict[str, tuple[np.ndarray, np.ndarray]]) -> None:
    """Every backend's every result against the reference's (see the module docstring for IREE's flushing)."""
    args = [x for pair in inputs.values() for x in pair]
    desired = by_element(runners["reference"](*args))
    failures = []
    for backend in [b for b in ("numpy", "iree") if b in runners]:
        got = by_element(runners[backend](*args))
        if backend == "iree":
            flush_desired = by_element(runners["reference"](*[flushed(x) for x in args]))
        for element, (a, b) in inputs.items():
            info = np.finfo(a.dtype)
            subnormal_atol = 16 * float(info.smallest_subnormal)  # a few roundings of intermediates, in spacings
            for op in OPS:
                g, d = got[element][op], desired[element][op]
                bad = mismatches(op, a, b, g, d, subnormal_atol)
                if backend == "iree":
                    tiny = float(info.smallest_normal)  # flushed results
                    bad &= (mismatches(op, a, b, g, d, tiny)
                            & mismatches(op, flushed(a), flushed(b), g, flush_desired[element][op], tiny))
                for k in np.flatnonzero(bad):
                    failures.append(f"{backend} {element} {op}({a[k]!r}, {b[k]!r}) = {g[k]!r}, reference {d[k]!r}")
    assert not failures, "\n".join(failures[:20])


def special_arrays(dtype) -> st.SearchStrategy[np.ndarray]:
    return st.lists(special_floats(dtype), min_size=N, max_size=N).map(lambda v: np.array(v, dtype))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(a32=special_arrays(np.float32), b32=special_arrays(np.float32),
       a64=special_arrays(np.float64), b64=special_arrays(np.float64))
def test_special_values_agree_on_every_backend(runners, a32, b32, a64, b64):
    check_backends(runners, {"f32": (a32, b32), "f64": (a64, b64)})
