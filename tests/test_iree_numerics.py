"""IREE's numerics at the edges: pow's special values, flushed subnormals, gelu's tail, f64 transcendentals.

One compiled program serves the edge-value tests (`edges`: IREE compiles take seconds on CI's 2 cores); the
rewrite of `math.powf` is also checked without IREE, run by the NumPy backend.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE
from onnx import TensorProto, helper
from xdsl.context import Context

import cortex
from cortex.backends.iree.expand_powf import ExpandPowFPass
from cortex.backends.numpy.emitter import emit, load
from cortex.driver import run_passes
from cortex.ir import parse_module

iree_compiler = pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

README = Path(__file__).resolve().parents[1] / "docs" / "numerics.md"  # its "IREE numerics" section

BASES = np.array([-3, -3, -2, -2, -0.5, -0.0, -0.0, -0.0, 0.0, 0.0, np.nan, np.inf, np.inf, -np.inf, -np.inf, -np.inf,
                  -1, -1, 1, 2, 10, -2.5, -8, 1e-3], np.float32)
EXPONENTS = np.array([3, 2, 0.5, -1, 3, -1, 3, 0.5, 0, -2, 0, 0, -1, 3, 0.5, -2,
                      np.inf, -np.inf, np.nan, 0.5, 10, 2, 1 / 3, -7], np.float32)
"""Negative bases with odd, even and fractional exponents, signed zeros, infinities, NaN, 1^NaN, (-1)^±inf."""


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CORTEX_IREE_CACHE", str(tmp_path_factory.mktemp("iree-cache")))
        yield


EDGES = """func.func @f(%a: tensor<6xf32>, %b: tensor<6xf32>, %x: tensor<24xf32>, %y: tensor<24xf32>, %d: tensor<4xf64>)
    -> (tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<24xf32>, tensor<4xf64>) {
  %log = cortex.log %a : tensor<6xf32> -> tensor<6xf32>
  %mul = cortex.mul %a, %b : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %gelu = cortex.gelu %b : tensor<6xf32> -> tensor<6xf32>
  %gelu_tanh = cortex.gelu %b {approximate = "tanh"} : tensor<6xf32> -> tensor<6xf32>
  %pow = cortex.pow %x, %y : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
  %tanh = cortex.tanh %d : tensor<4xf64> -> tensor<4xf64>
  func.return %log, %mul, %gelu, %gelu_tanh, %pow, %tanh : tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<6xf32>, tensor<24xf32>, tensor<4xf64>
}"""
A = np.array([1e-40, 1.4e-45, 2.0, 1.0, 1e-38, 3.0], np.float32)
B = np.array([-6.0, 1e38, -4.0, -10.0, 1e-3, -12.0], np.float32)
D = np.array([0.5, -3.0, 1e-300, 25.0])


@pytest.fixture(scope="module")
def edges(cache):
    """{backend: results of EDGES}: compiled once, every run on IREE (the cost rule off)."""
    with pytest.MonkeyPatch.context() as mp:
        for name, value in EVERY_RUN_ON_IREE.items():
            mp.setenv(name, value)
        iree = cortex.compile(parse_module(EDGES), entry="f", mode=None, backend="iree", split=False)
    numpy = cortex.compile(parse_module(EDGES), entry="f", mode=None, split=False)
    reference = cortex.reference(parse_module(EDGES), entry="f", mode=None)
    args = (A, B, BASES, EXPONENTS, D)
    return {"iree": iree(*args), "numpy": numpy(*args), "reference": reference(*args)}


def test_pow_special_values_on_iree(edges):
    """NaN for every negative base, x^0 = NaN for x in {0, inf, NaN} and (-0)^-1 = +inf, before the rewrite."""
    want = np.power(BASES, EXPONENTS)
    got = edges["iree"][4]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
    np.testing.assert_allclose(got, want, rtol=2 * np.finfo(np.float32).eps, atol=0)
    assert got[0] == -27.0 and got[5] == -np.inf and got[8] == 1.0 and got[10] == 1.0 and got[11] == 1.0


def test_iree_flushes_subnormals_as_documented(edges):
    """IREE's CPU runtime runs with FTZ/DAZ: subnormal inputs read as 0, subnormal results written as 0.

    No compiler flag turns it off (IREE 3.13). Should IREE stop flushing, this fails: then docs/numerics.md's
    "IREE numerics" section and tests/test_special_values.py's allowance are to be updated.
    """
    log, mul = edges["iree"][0], edges["iree"][1]
    assert log[0] == -np.inf and log[1] == -np.inf  # log(1e-40), log(1.4e-45): log(0)
    assert mul[1] == 0.0  # 1.4e-45 · 1e38 (1.4e-7 unflushed)
    assert mul[4] == 0.0  # 1e-38 · 1e-3: a subnormal result
    numpy_log, numpy_mul = edges["numpy"][0], edges["numpy"][1]
    assert numpy_log[0] == pytest.approx(-92.1034, rel=1e-6) and numpy_mul[1] == pytest.approx(1.4e-7, rel=0.01)
    section = re.search(r"### IREE numerics\n(.*?)(?:\n#|\Z)", README.read_text(), re.S)
    assert section is not None and "flush" in section.group(1) and "log(1e-40)" in section.group(1)


@pytest.mark.parametrize("backend", ["reference", "numpy", "iree"])
def test_gelu_tail_keeps_its_digits(edges, backend):
    """gelu(-6) = -5.9e-9 (was -0.0 compiled: 1 + erf(-4.24) cancels in float32), within 16 ULPs down to -12."""
    exact = np.array([v * 0.5 * math.erfc(-v / math.sqrt(2.0)) for v in B.astype(np.float64)])
    tanh_form = B.astype(np.float64)
    u = 0.7978845608028654 * (tanh_form + 0.044715 * tanh_form**3)
    approx = tanh_form / (1.0 + np.exp(-2.0 * u))
    gelu, gelu_tanh = edges[backend][2], edges[backend][3]
    eps = float(np.finfo(np.float32).eps)
    for got, want, ulps in ((gelu, exact, 16.0), (gelu_tanh, approx, 8 + 2 * np.abs(2 * u))):
        want32 = want.astype(np.float32)  # gelu_tanh(-12) = -1.6e-61 rounds to -0.0
        bound = ulps * eps * np.abs(want32.astype(np.float64))
        assert np.all(np.abs(got.astype(np.float64) - want32) <= bound), (backend, got, want32)
    assert gelu[0] == pytest.approx(-5.9195e-9, rel=1e-4)


def test_f64_tanh_runs_with_the_iree_backend(edges):
    """f64 math.tanh is a libm call IREE cannot link ("undefined symbol: tanh"): the host computes it."""
    np.testing.assert_allclose(edges["iree"][5], np.tanh(D), rtol=1e-15, atol=0)
    assert edges["iree"][5].dtype == np.float64


POW_AFTER_MATMUL = """func.func @f(%x: tensor<256x256xf32>, %w: tensor<256x256xf32>, %e: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %y = cortex.matmul %x, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %r = cortex.pow %y, %e : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  func.return %r : tensor<256x256xf32>
}"""


def test_pow_after_matmul_on_iree_with_the_default_cost_rule(cache):
    """Half the outputs were NaN (every negative product) when a matmul's result went through pow on IREE."""
    rng = np.random.default_rng(0)
    x, w = (rng.standard_normal((256, 256)).astype(np.float32) * 0.1 for _ in range(2))
    e = rng.integers(1, 4, (256, 256)).astype(np.float32)
    compiled = cortex.compile(parse_module(POW_AFTER_MATMUL), entry="f", mode=None, backend="iree", split=False)
    executables = compiled.program.executables
    assert any(exe.meta.get("segments") for exe in executables.values()), "the cost rule keeps matmul + pow on IREE"
    (got,) = compiled(x, w, e)
    want = np.power(x @ w, e)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.slow
def test_onnx_pow_of_a_negative_base_on_iree(cache, monkeypatch):
    """ONNX Pow(-3, 3) = -27 (ONNX Runtime's value), not NaN."""
    from cortex.onnx_backend import IreeBackend

    for name, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(name, value)
    node = helper.make_node("Pow", ["X", "Y"], ["Z"])
    graph = helper.make_graph([node], "pow", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4]) for n in "XY"],
                              [helper.make_tensor_value_info("Z", TensorProto.FLOAT, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    (got,) = IreeBackend.prepare(model).run([np.array([-3, -2, -0.0, 0], np.float32), np.array([3, 2, -1, 0], np.float32)])
    np.testing.assert_array_equal(got, np.array([-27, 4, -np.inf, 1], np.float32))


def test_expand_powf_computes_numpys_power():
    """The rewrite itself, run by the NumPy backend (no IREE needed): np.power's value for every special case."""
    text = """func.func @f(%x: tensor<24xf32>, %y: tensor<24xf32>) -> tensor<24xf32> {
  %r = cortex.pow %x, %y : (tensor<24xf32>, tensor<24xf32>) -> tensor<24xf32>
  func.return %r : tensor<24xf32>
}"""
    module = run_passes(parse_module(text), "convert-cortex-to-linalg")
    ExpandPowFPass().apply(Context(allow_unregistered=True), module)
    assert not any(op.name == "math.powf" for op in module.walk())
    emitted = emit(module)
    with np.errstate(all="ignore"):
        (got,) = load(emitted, "<test>")[emitted.functions["f"]](BASES, EXPONENTS)
        want = np.power(BASES, EXPONENTS)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    number = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
    np.testing.assert_allclose(got, want, rtol=np.finfo(np.float32).eps, atol=0)
