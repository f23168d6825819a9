"""The reference interpreter computes every op in its declared element type.

The reference is the semantic ground truth, and canonicalize folds constants
with the same kernels: a kernel that rounded an f64 operand to float32 made
the ground truth, and every folded constant, float32-accurate only (an f64
`log(1.0000000001)` folded to 0.0 while the unfolded program computed 1e-10).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import cortex
from cortex.driver import run_passes
from cortex.ir import parse_module
from cortex.semantics.kernels import KERNELS

X = np.array([1.0000000001, 0.3, 2.5, 1e-300], np.float64)
"""Values whose float32 rounding changes every result below (1.0000000001 rounds to 1.0)."""

UNARY = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "neg": np.negative,
    "relu": lambda x: np.maximum(x, 0.0), "sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)), "tanh": np.tanh,
    "gelu": lambda x: x * 0.5 * np.array([math.erfc(-v / math.sqrt(2.0)) for v in x]),
}


def unary_program(op: str, element: str = "f64") -> str:
    t = f"tensor<4x{element}>"
    return f"""func.func @f(%x: {t}) -> {t} {{
  %r = cortex.{op} %x : {t} -> {t}
  func.return %r : {t}
}}"""


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_f64_is_computed_in_f64(op):
    (got,) = cortex.reference(parse_module(unary_program(op)), entry="f", mode=None)(X)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, UNARY[op](X), rtol=1e-14, atol=0)


@pytest.mark.parametrize("op", ["exp", "log", "tanh", "gelu", "sigmoid"])
def test_unary_f32_stays_f32(op):
    (got,) = cortex.reference(parse_module(unary_program(op, "f32")), entry="f", mode=None)(X.astype(np.float32))
    assert got.dtype == np.float32


def test_pow_f64():
    a, b = np.array([1.0000000001, -3.0, 2.0, 0.5]), np.array([1e9, 3.0, 0.5, -1.0])
    got = KERNELS["cortex.pow"](a, b)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.power(a, b), rtol=1e-14)
    assert got[0] != np.float32(1.0)  # float32 would give exactly 1


def test_layout_contraction_reduction_kernels_keep_f64():
    a = np.array([[1.0000000001, 2.0], [3.0, 1e-300]])
    cases = {
        "cortex.transpose": (KERNELS["cortex.transpose"](a, perm=(1, 0)), a.T),
        "cortex.matmul": (KERNELS["cortex.matmul"](a, a), a @ a),
        "cortex.reduce_sum": (KERNELS["cortex.reduce_sum"](a, axes=(1,), keepdims=0), a.sum(axis=1)),
        "cortex.reduce_max": (KERNELS["cortex.reduce_max"](a, axes=(0,), keepdims=0), a.max(axis=0)),
        "cortex.softmax": (KERNELS["cortex.softmax"](a, axis=-1), np.exp(a - a.max(-1, keepdims=True))
                           / np.exp(a - a.max(-1, keepdims=True)).sum(-1, keepdims=True)),
    }
    for name, (got, want) in cases.items():
        assert got.dtype == np.float64, name
        np.testing.assert_allclose(got, want, rtol=1e-15, atol=0, err_msg=name)


def test_f32_kernels_still_round_to_f32():
    a = np.array([[1.5, 2.0], [3.0, 4.0]], np.float32)
    for name, got in {
        "matmul": KERNELS["cortex.matmul"](a, a), "transpose": KERNELS["cortex.transpose"](a, perm=(1, 0)),
        "reduce_sum": KERNELS["cortex.reduce_sum"](a), "softmax": KERNELS["cortex.softmax"](a),
        "pow": KERNELS["cortex.pow"](a, a), "relu": KERNELS["cortex.relu"](a),
    }.items():
        assert got.dtype == np.float32, name


FOLDED_LOG = """func.func @f(%x: tensor<1xf64>) -> (tensor<1xf64>, tensor<1xf64>) {
  %c = cortex.constant dense<1.0000000001> : tensor<1xf64>
  %folded = cortex.log %c : tensor<1xf64> -> tensor<1xf64>
  %computed = cortex.log %x : tensor<1xf64> -> tensor<1xf64>
  func.return %folded, %computed : tensor<1xf64>, tensor<1xf64>
}"""


def test_canonicalize_folds_f64_as_the_program_computes():
    """One program, one value: the folded constant and the computed result agree (≈1e-10, not 0)."""
    module = run_passes(parse_module(FOLDED_LOG), "canonicalize")
    assert sum(op.name == "cortex.log" for op in module.walk()) == 1  # the constant one was folded
    folded, computed = cortex.reference(module, entry="f", mode=None)(np.array([1.0000000001]))
    assert computed[0] == pytest.approx(1.0000000001 - 1, rel=1e-6)
    assert folded[0] == computed[0]


def test_arithmetic_on_special_values_warns_nothing():
    """IEEE results without warnings (`FLOAT_ERRORS`): overflow to inf, inf - inf and inf · 0 = nan."""
    big = np.array([np.inf, -np.inf, 3e38, 1e-38, 0.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for op in ("add", "sub", "mul", "div"):
            KERNELS[f"cortex.{op}"](big, big[::-1].copy())
            KERNELS[f"cortex.{op}"](big, big)
