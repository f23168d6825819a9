"""How close two float32 computations of one value must be: the tests' one home for tolerances.

Why a helper: the compiled backend, the reference interpreter, `mlir-runner`
and a pass's before/after are different computations of the same value.
Each float32 operation rounds to within half an ULP, but *which* roundings
happen depends on the order of the arithmetic, and that order is not ours:
BLAS picks a kernel per CPU (OpenBLAS' SkylakeX, Haswell, Zen, ... sum and
fuse differently), NumPy picks SIMD loops by CPU feature, threads split sums.
Two right answers therefore differ by a few ULPs *of the magnitude of the
values*. An absolute tolerance is wrong both ways: 1e-4 is below one ULP at
1024 (1.2e-4), and thousands of ULPs near 0.01.

So a tolerance here is a count of float32 ULPs at a scale: the elementwise
bound is ``ulps · eps32 · max(|desired_i|, scale)``, where `scale` defaults
to the largest magnitude in either array, and at least 1 — an error made
inside a sum is proportional to the terms summed, not to the (possibly
cancelled) result, and the tests draw their inputs at magnitude ≈ 1.

Exact equality stays exact where the code is the same: the engines of one
backend (sequential, threads, Ray), a rerun, a save/load round trip. Use
`np.testing.assert_array_equal` there, never these budgets.
"""

from __future__ import annotations

import numpy as np

EPS32 = float(np.finfo(np.float32).eps)  # one float32 ULP at 1.0 (2^-23)

# Budgets, in float32 ULPs at the values' scale. Each names the kind of difference it allows.
REORDERED = 16
"""The same formula with its float32 operations reordered or fused: BLAS vs elementwise sums of a
few terms (gray's 3-term weighted sum), a fused vs unfused body, a pass that reassociates. A few
roundings of ½ ULP each, with room for an FMA on one side."""

ACCUMULATED = 128
"""Long float32 sums in another order: convolutions, matrix products, pooled sums and means over
hundreds of terms (error grows with the number of terms, ~√n·ULP typically, n·ULP at worst)."""

ALGORITHM = 1024
"""A different algorithm for the same value: the DFT as float32 matrix products vs `np.fft` in
float64, block means pooled in float32 vs float64, a transcendental from another libm. ~1.2e-4 on
values of magnitude 1 (the score maps' scale)."""


def f32_tolerance(actual, desired, *, ulps: float, scale: float | None = None) -> np.ndarray:
    """The elementwise bound ``ulps · eps32 · max(|desired_i|, scale)`` (see the module docstring)."""
    a = np.asarray(actual, np.float64)
    d = np.asarray(desired, np.float64)
    if scale is None:
        finite = np.concatenate([np.abs(a[np.isfinite(a)]).ravel(), np.abs(d[np.isfinite(d)]).ravel()])
        scale = max(1.0, float(finite.max()) if finite.size else 0.0)
    return ulps * EPS32 * np.maximum(np.abs(d), scale)


def assert_f32_close(actual, desired, *, ulps: float = REORDERED, scale: float | None = None, err_msg: str = "") -> None:
    """`actual` equals `desired` up to float32 rounding (`ulps` at the values' scale); NaN and ±inf
    must sit at the same places. Shapes must match exactly (no broadcasting)."""
    a = np.asarray(actual)
    d = np.asarray(desired)
    assert a.shape == d.shape, f"shape {a.shape} != {d.shape} {err_msg}"
    a64, d64 = a.astype(np.float64), d.astype(np.float64)
    np.testing.assert_array_equal(np.isnan(a64), np.isnan(d64), err_msg=f"NaN positions differ {err_msg}")
    infinite = np.isinf(a64) | np.isinf(d64)
    np.testing.assert_array_equal(a64[infinite], d64[infinite], err_msg=f"infinities differ {err_msg}")
    finite = np.isfinite(a64) & np.isfinite(d64)
    bound = f32_tolerance(a64, d64, ulps=ulps, scale=scale)
    error = np.where(finite, np.abs(np.where(finite, a64, 0.0) - np.where(finite, d64, 0.0)), 0.0)
    bad = error > bound
    if bad.any():
        i = tuple(int(k) for k in np.argwhere(bad)[0])
        raise AssertionError(
            f"not equal within {ulps} float32 ULPs at scale: {int(bad.sum())} of {a.size} elements differ; "
            f"first at {i}: {a64[i]!r} vs {d64[i]!r} (|diff| {error[i]:.3g} > bound {bound[i]:.3g}) {err_msg}"
        )


def f32_close(actual, desired, *, ulps: float = REORDERED, scale: float | None = None) -> bool:
    """`assert_f32_close` as a predicate (for "this input must make a difference" checks)."""
    try:
        assert_f32_close(actual, desired, ulps=ulps, scale=scale)
    except AssertionError:
        return False
    return True
