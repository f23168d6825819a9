"""Quantisation parameters from ranges: asymmetric value ranges, and the percentile clip point.

Symmetric quantisation once taking its scale from the positive peak only
(`max(hi)` instead of `max(-lo, hi)`) passed every test — no test quantised a
tensor whose negative range is the larger — and the percentile clip point one
histogram bin lower passed too. Here random ranges (either side the larger) go
through `Scheme.activation` and the quantised kernels, one negative-heavy
linear layer goes through `cortex.quantize` against float, and the clip points
are checked against `np.percentile` of the same data.
"""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import cortex
from cortex.passes.calibrate import BINS, Range
from cortex.passes.quantize import PERCENTILE, Scheme
from cortex.semantics import quant_kernels as qk

Q_MAX = 127


@settings(max_examples=60, deadline=None)
@given(
    lo=st.floats(-100.0, -1e-3),
    hi=st.floats(1e-3, 100.0),
    schema=st.sampled_from(["symmetric", "asymmetric"]),
    seed=st.integers(0, 2**16),
)
def test_every_value_of_the_range_round_trips_within_half_a_step(lo, hi, schema, seed):
    """Nothing inside the calibrated range is clipped, whichever side is the larger; the step is no wider than needed."""
    scale, zero_point = Scheme(schema=schema).activation(Range(lo, hi, ()))
    peak = max(-lo, hi)
    if schema == "symmetric":
        assert zero_point == 0
        assert np.isclose(scale, peak / Q_MAX, rtol=1e-6)
    else:
        assert scale <= (hi - lo) / 255 * (1 + 1e-6)
    x = np.concatenate([[lo, hi], np.random.default_rng(seed).uniform(lo, hi, 64)]).astype(np.float32)
    back = qk.dequantize(qk.quantize(x, scale=scale, zero_point=zero_point), scale=scale, zero_point=zero_point)
    assert np.all(np.abs(back - x) <= scale * 0.5 * (1 + 1e-4) + 1e-6 * np.abs(x))


def test_a_negative_heavy_input_quantises_close_to_float():
    """A linear layer whose input lies in [-3, 1]: the symmetric int8 graph stays within a few steps of float."""
    module = cortex.parse(
        """
        func.func @lin(%x: tensor<8x6xf32>) -> tensor<8x4xf32> {
          %w = cortex.constant dense<[[0.5, -0.25, 0.75, -1.0, 0.25, 0.5], [-0.5, 1.0, 0.25, 0.5, -0.75, 0.25],
                                      [1.0, 0.5, -0.5, 0.25, 0.5, -1.0], [-0.25, -0.5, 1.0, 0.75, 0.25, 0.5]]> : tensor<4x6xf32>
          %y = cortex.linear %x, %w : (tensor<8x6xf32>, tensor<4x6xf32>) -> tensor<8x4xf32>
          func.return %y : tensor<8x4xf32>
        }
        """
    )
    rng = np.random.default_rng(3)
    samples = [rng.uniform(-3.0, 1.0, (8, 6)).astype(np.float32) for _ in range(8)]
    for schema in ("symmetric", "asymmetric"):
        qmodule, _ = cortex.quantize(module, samples, schema=schema, entry="lin")
        assert any(op.name == "cortex.qlinear" for op in qmodule.walk())
        for x in samples[:3]:
            (want,) = cortex.reference(module, entry="lin", mode=None)(x)
            (got,) = cortex.reference(qmodule, entry="lin", mode=None)(x)
            np.testing.assert_allclose(got, want, atol=0.1, err_msg=schema)


@settings(max_examples=50, deadline=None)
@given(
    n=st.integers(500, 4000),
    p=st.sampled_from([PERCENTILE, 99.9, 99.0, 95.0, 80.0]),
    skew=st.floats(0.2, 3.0),
    shift=st.floats(-5.0, 5.0),
    seed=st.integers(0, 2**16),
)
def test_percentile_clip_points_bracket_np_percentile(n, p, skew, shift, seed):
    """The clip points are the histogram edges around the true percentiles: the low one is the lower
    edge of the bin holding the (100 − p)/2 % point, the high one the upper edge of the bin holding
    the (100 + p)/2 % point (`np.percentile`, inverted CDF, of the same data)."""
    tail = (100.0 - p) / 200.0
    assume(abs(n * tail - round(n * tail)) > 1e-3 and abs(n * (1 - tail) - round(n * (1 - tail))) > 1e-3)
    values = (np.random.default_rng(seed).gamma(skew, size=n) + shift).astype(np.float32)
    r = Range.of([values])
    lo, hi = r.percentile(p)
    width = (r.max - r.min) / BINS
    q_lo = float(np.percentile(values, 100.0 * tail, method="inverted_cdf"))
    q_hi = float(np.percentile(values, 100.0 * (1 - tail), method="inverted_cdf"))
    slack = 1e-4 * width
    assert lo - slack <= q_lo <= lo + width + slack
    assert hi - width - slack <= q_hi <= hi + slack
    assert r.min <= lo <= hi <= r.max
