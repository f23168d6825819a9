"""cortex-convert-layout keeps pooling dilations (by leaving such a pool alone), and
`cortex.run_passes` verifies after each pass and is all or nothing.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects import layout as lay
from cortex.errors import CortexError
from cortex.ir import parse, to_text
from cortex.passes import convert_layout


def pool_graph(kind: str, kernel: int, dilation: int, stride: int, size: int) -> str:
    out = (size - dilation * (kernel - 1) - 1) // stride + 1
    return f"""func.func @main(%x: tensor<1x2x{size}x{size}xf32>) -> tensor<1x2x{out}x{out}xf32> {{
  %p = cortex.{kind} %x {{kernel_shape = array<i64: {kernel}, {kernel}>, strides = array<i64: {stride}, {stride}>, dilations = array<i64: {dilation}, {dilation}>}} : tensor<1x2x{size}x{size}xf32> -> tensor<1x2x{out}x{out}xf32>
  %r = cortex.relu %p : tensor<1x2x{out}x{out}xf32> -> tensor<1x2x{out}x{out}xf32>
  func.return %r : tensor<1x2x{out}x{out}xf32>
}}"""


@settings(max_examples=25, deadline=None)
@given(
    kind=st.sampled_from(["avg_pool", "max_pool"]),
    kernel=st.integers(1, 3),
    dilation=st.integers(1, 3),
    stride=st.integers(1, 2),
    seed=st.integers(0, 2**16),
)
def test_convert_layout_keeps_every_pool_result(kind, kernel, dilation, stride, seed):
    size = 7
    module = parse(pool_graph(kind, kernel, dilation, stride, size))
    converted = module.clone()
    cortex.run_passes(converted, "cortex-convert-layout{layout=nhwc}")  # verifies after the pass
    nhwc = [op for op in converted.walk() if isinstance(op, (lay.MaxPoolNhwcOp, lay.AvgPoolNhwcOp))]
    assert bool(nhwc) == (dilation == 1)  # a dilated pool stays NCHW
    x = np.random.default_rng(seed).uniform(-3, 3, (1, 2, size, size)).astype(np.float32)
    (want,) = cortex.reference(module, entry="main", mode=None)(x)
    (got,) = cortex.reference(converted, entry="main", mode=None)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_the_issue_example_avg_pool_keeps_its_numbers():
    module = parse(pool_graph("avg_pool", 3, 2, 1, 7))
    converted = module.clone()
    cortex.run_passes(converted, "cortex-convert-layout{layout=nhwc},canonicalize")
    x = np.arange(98, dtype=np.float32).reshape(1, 2, 7, 7)
    (want,) = cortex.reference(module, entry="main", mode=None)(x)
    np.testing.assert_array_equal(cortex.compile(converted, entry="main", mode=None)(x)[0], want)


def test_run_passes_refuses_a_pass_that_breaks_the_ir_and_keeps_the_module(monkeypatch):
    # The old conversion (dilations dropped): the max_pool's result type no longer verifies.
    monkeypatch.setattr(convert_layout, "lost_properties", lambda op, nhwc: [], raising=False)
    module = parse(pool_graph("max_pool", 2, 2, 1, 5))
    before = to_text(module)
    with pytest.raises(CortexError, match="pass 'cortex-convert-layout' produced IR that does not verify"):
        cortex.run_passes(module, "canonicalize,cortex-convert-layout{layout=nhwc},canonicalize")
    assert to_text(module) == before
