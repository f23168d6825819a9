"""Pooling with asymmetric pads, NCHW and NHWC, against a loop over the windows written here.

The NHWC `avg_pool` lowering once counting its horizontal windows with the
*top* pad instead of the *left* one passed every test, because every test padded
symmetrically; the NCHW lowering had the same mistake caught only because a test
happened to use H ≠ W with a one-sided pad. Here random pads (each side its own),
kernels, strides and H ≠ W go through the reference interpreter, the NCHW
lowering, and `cortex-convert-layout{layout=nhwc}` (the NHWC ops and their
lowering), each against `naive_pool` (ONNX semantics: max over real cells,
average over real cells only, count_include_pad = 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects import layout as lay
from cortex.passes.convert_layout import convert_layout


def naive_pool(x: np.ndarray, kind: str, kernel, strides, pads) -> np.ndarray:
    top, left, bottom, right = pads
    n, c, h, w = x.shape
    oh = (h + top + bottom - kernel[0]) // strides[0] + 1
    ow = (w + left + right - kernel[1]) // strides[1] + 1
    out = np.empty((n, c, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            r0, c0 = i * strides[0] - top, j * strides[1] - left
            rows = [r for r in range(r0, r0 + kernel[0]) if 0 <= r < h]
            cols = [q for q in range(c0, c0 + kernel[1]) if 0 <= q < w]
            cells = x[:, :, rows][:, :, :, cols].reshape(n, c, -1)
            out[:, :, i, j] = cells.max(axis=2) if kind == "max" else cells.mean(axis=2)
    return out.astype(np.float32)


def pool_module(kind: str, shape, kernel, strides, pads, out) -> str:
    def t(s):
        return f"tensor<{'x'.join(map(str, s))}xf32>"

    attrs = (f"kernel_shape = array<i64: {kernel[0]}, {kernel[1]}>, strides = array<i64: {strides[0]}, {strides[1]}>, "
             f"pads = array<i64: {', '.join(map(str, pads))}>")
    return (f"func.func @f(%x: {t(shape)}) -> {t(out)} {{\n  %y = cortex.{kind}_pool %x {{{attrs}}} : {t(shape)} -> {t(out)}\n"
            f"  func.return %y : {t(out)}\n}}")


@st.composite
def pools(draw):
    kernel = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    pads = (draw(st.integers(0, kernel[0] - 1)), draw(st.integers(0, kernel[1] - 1)),
            draw(st.integers(0, kernel[0] - 1)), draw(st.integers(0, kernel[1] - 1)))
    return {
        "kind": draw(st.sampled_from(["avg", "max"])),
        "shape": (1, draw(st.integers(1, 2)), draw(st.integers(3, 7)), draw(st.integers(3, 7))),
        "kernel": kernel,
        "strides": (draw(st.integers(1, 2)), draw(st.integers(1, 2))),
        "pads": pads,
    }


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=pools(), seed=st.integers(0, 2**16))
def test_asymmetric_pads_nchw_and_nhwc_equal_the_windows(case, seed):
    x = np.random.default_rng(seed).standard_normal(case["shape"]).astype(np.float32)
    want = naive_pool(x, case["kind"], case["kernel"], case["strides"], case["pads"])
    module = cortex.parse(pool_module(case["kind"], case["shape"], case["kernel"], case["strides"], case["pads"], want.shape))
    nhwc = module.clone()
    convert_layout(nhwc)
    cortex.run_passes(nhwc, "canonicalize")
    assert any(isinstance(op, lay.AvgPoolNhwcOp | lay.MaxPoolNhwcOp) for op in nhwc.walk())
    for name, m in (("NCHW", module), ("NHWC", nhwc)):
        (ref,) = cortex.reference(m, entry="f", mode=None)(x)
        (got,) = cortex.compile(m, entry="f", mode=None)(x)
        np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} reference")
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{name} compiled")


def test_one_sided_pads_example():
    """The case that tells top from left: a pad on the left only, H ≠ W."""
    case = {"kind": "avg", "shape": (1, 1, 4, 6), "kernel": (2, 3), "strides": (1, 2), "pads": (0, 2, 1, 0)}
    x = np.arange(24, dtype=np.float32).reshape(case["shape"])
    want = naive_pool(x, **{k: v for k, v in case.items() if k != "shape"})
    np.testing.assert_allclose(want[0, 0, 0, :2], [(0 + 6) / 2, (0 + 1 + 2 + 6 + 7 + 8) / 6])
    test_asymmetric_pads_nchw_and_nhwc_equal_the_windows.hypothesis.inner_test(case=case, seed=0)
