"""Quantising weights and biases of any magnitude: the int32 bias and accumulator never wrap.

A bias is quantised at x_scale·w_scale; tiny weights made that scale so small that the bias
saturated int32 and the accumulator wrapped ([1, -2, 0.5] came out as three equal values, and
all zeros at |w| ~ 1e-9, with "top-1 agreement 100 %"). Zero weights (a zero-range calibration)
rounded the bias away. Each case must give the float graph's numbers within int8's tolerance,
or a CortexError naming the op.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.ir import parse_module
from cortex.passes.quantize import Scheme
from cortex.reports.quant_report import ErrorStats
from cortex.semantics.quant_kernels import qlinear

BIAS = [1.0, -2.0, 0.5]


def linear(weights: np.ndarray, bias: list[float] | None):
    """@f(x: 2xK) = x @ weights.T (+ bias), weights N×K."""
    n, k = weights.shape
    w_text = ", ".join("[" + ", ".join(repr(float(v)) for v in row) + "]" for row in weights)
    lines = [f"func.func @f(%x: tensor<2x{k}xf32>) -> tensor<2x{n}xf32> {{",
             f"  %w = cortex.constant dense<[{w_text}]> : tensor<{n}x{k}xf32>"]
    if bias is None:
        lines.append(f"  %y = cortex.linear %x, %w : (tensor<2x{k}xf32>, tensor<{n}x{k}xf32>) -> tensor<2x{n}xf32>")
    else:
        lines.append(f"  %b = cortex.constant dense<[{', '.join(repr(float(v)) for v in bias)}]> : tensor<{n}xf32>")
        lines.append(f"  %y = cortex.linear %x, %w, %b : (tensor<2x{k}xf32>, tensor<{n}x{k}xf32>, tensor<{n}xf32>)"
                     f" -> tensor<2x{n}xf32>")
    lines += [f"  func.return %y : tensor<2x{n}xf32>", "}"]
    return parse_module("\n".join(lines))


def alternating(scale: float, n: int = 3, k: int = 4) -> np.ndarray:
    w = np.full((n, k), scale, np.float32)
    w[:, ::2] *= -1
    return w


def samples(k: int = 4, count: int = 4, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((2, k)).astype(np.float32),) for _ in range(count)]


def float_and_quantised(module, calibration, **options):
    qmodule, report = cortex.quantize(module, calibration, entry="f", **options)
    run_f = cortex.reference(module, entry="f", mode=None)
    run_q = cortex.reference(qmodule, entry="f", mode=None)
    pairs = [(run_f(*s)[0], run_q(*s)[0]) for s in calibration]
    return pairs, report


@pytest.mark.parametrize("scale", [0.5, 1e-6, 1e-9])
def test_small_weights_keep_the_bias(scale):
    pairs, _ = float_and_quantised(linear(alternating(scale), BIAS), samples())
    for f, q in pairs:
        np.testing.assert_allclose(q, f, atol=0.03 * 2.0 + 0.02 * 4 * scale * 3)


@pytest.mark.parametrize("schema", ["symmetric", "asymmetric"])
def test_zero_weights_keep_the_bias(schema):
    """Zero weights on an all-zero calibration: the output is the bias, which must survive."""
    calibration = [(np.zeros((2, 4), np.float32),)] * 2
    pairs, _ = float_and_quantised(linear(np.zeros((3, 4), np.float32), BIAS), calibration, schema=schema)
    for f, q in pairs:
        np.testing.assert_allclose(q, f, atol=2.0 / 127)


def test_the_report_does_not_claim_agreement_on_a_constant_output():
    stats = ErrorStats("result #0", "(graph output)")
    stats.add(np.array([[1.0, -2.0, 0.5]]), np.zeros((1, 3), np.float32), top1=True)
    assert stats.top1_defined == 0
    rendered = "\n".join(line for line in _render(stats))
    assert "100" not in rendered and "undefined" in rendered and "constant" in rendered


def _render(stats: ErrorStats) -> list[str]:
    from cortex.reports.quant_report import SetReport

    return SetReport("calibration", [], [stats]).render()


def test_the_report_still_counts_agreement_on_varying_outputs():
    stats = ErrorStats("result #0", "(graph output)")
    stats.add(np.array([[1.0, -2.0, 0.5]]), np.array([[0.9, -2.0, 0.4]]), top1=True)
    stats.add(np.array([[1.0, -2.0, 0.5]]), np.array([[0.0, -2.0, 0.4]]), top1=True)
    assert stats.top1 == pytest.approx(0.5) and stats.top1_defined == 2


def test_the_accumulator_cannot_wrap_silently():
    """int32 accumulation that would overflow is an error naming the op, not a wrapped value."""
    k = 140_000  # 140000 · 128 · 127 > 2**31
    x = np.full((1, k), -128, np.int8)
    w = np.full((1, k), 127, np.int8)
    with pytest.raises(CortexError, match="cortex.qlinear.*overflow"):
        qlinear(x, w, x_scale=1.0, w_scales=[1.0], out_scale=1.0)


@pytest.mark.slow
def test_a_quantisation_that_could_overflow_is_refused_naming_the_op():
    k = 140_000
    module = linear(np.full((1, k), 0.5, np.float32), None)
    calibration = [(np.ones((2, k), np.float32),)]
    with pytest.raises(CortexError, match=r"y \(cortex.linear\).*overflow"):
        cortex.quantize(module, calibration, entry="f")


def test_weight_scales_cover_the_bias():
    """The weight scale grows until x_scale·w_scale puts the bias inside the accumulator's headroom."""
    w = alternating(1e-9)
    q, scales = Scheme().weights(w, 0, minimum=np.array([1e-3, 2e-3, 5e-4]))
    assert scales.dtype == np.float32 and float(scales[0]) >= 2e-3
    assert np.all(q == 0)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(
    weight_exp=st.floats(-30, 30),
    bias_exp=st.one_of(st.none(), st.floats(-30, 30)),
    k=st.integers(1, 8),
    schema=st.sampled_from(["symmetric", "asymmetric"]),
    granularity=st.sampled_from(["tensor", "channel"]),
    seed=st.integers(0, 2**16),
)
def test_any_weight_scale_is_close_to_float_or_refused(weight_exp, bias_exp, k, schema, granularity, seed):
    rng = np.random.default_rng(seed)
    w = (rng.uniform(-1, 1, (3, k)) * 10.0**weight_exp).astype(np.float32)
    bias = None if bias_exp is None else [float(v) for v in rng.uniform(-1, 1, 3) * 10.0**bias_exp]
    calibration = samples(k, 3, seed)
    try:
        pairs, report = float_and_quantised(linear(w, bias), calibration, schema=schema, granularity=granularity)
    except CortexError as e:
        assert "(cortex.linear)" in str(e)
        return
    x_peak = max(float(np.abs(s[0]).max()) for s in calibration)
    size = k * float(np.abs(w).max()) * x_peak + (max(abs(v) for v in bias) if bias else 0.0)
    for f, q in pairs:
        assert np.all(np.isfinite(q))
        assert float(np.abs(q - f).max()) <= 0.03 * size + 1e-30
    assert "100.0%" not in str(report) or any(np.ptp(q, axis=-1).min() > 0 for _, q in pairs)


def _refused_at(k: int, calibration_value: float, schema: str) -> None:
    module = linear(np.full((1, k), 0.5, np.float32), None)
    with pytest.raises(CortexError, match=r"y \(cortex.linear\).*overflow"):
        cortex.quantize(module, [(np.full((2, k), calibration_value, np.float32),)], entry="f", schema=schema)


@pytest.mark.slow
def test_the_accumulator_bound_counts_the_input_zero_point_of_minus_128():
    """A symmetric input reaches -128 (zero point 0): K·128·127 products, past int32 at K = 132 500, where
    K·127·127 would still fit; a quantisation that lets such a sum wrap is refused naming the op."""
    assert 132_500 * 127 * 127 < 2**31 - 1 < 132_500 * 128 * 127
    _refused_at(132_500, -1.0, "symmetric")


@pytest.mark.slow
def test_the_accumulator_bound_counts_an_asymmetric_inputs_whole_span():
    """An input calibrated on [0, hi] has zero point -128: q − zp spans 255, so 70 000 products of 255·127
    overflow int32 although 70 000·127·127 fits; refused naming the op."""
    assert 70_000 * 127 * 127 < 2**31 - 1 < 70_000 * 255 * 127
    _refused_at(70_000, 1.0, "asymmetric")
