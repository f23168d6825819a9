"""The window ops and the adaptive blur gate built from them.

- the reference kernels against their definition (hypothesis);
- the lowering (convert-cortex-to-linalg → NumPy backend) equals the
  reference kernels, bit for bit, on windows with ties, zeros and negatives;
- the L2 pipeline's gate: the default inputs are the original fixed gate (docs/dialects/cortex.md), the
  threshold is a runtime input, and `auto` (BLUR_AUTO) gates exactly the
  synthetic video's blurred frames, on both backends.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.passes.expose_gate import expose_blur_gate
from cortex.semantics.modes import BLUR_AUTO
from cortex.semantics.window_kernels import window_median, window_push
from cortex.video.synthetic import SyntheticVideo

WINDOW_FN = """
func.func @f(%w: tensor<{n}xf32>, %x: f32) -> (tensor<{n}xf32>, f32, f32) {{
  %p = cortex.window_push %w, %x : tensor<{n}xf32>
  %m = cortex.window_median %w : tensor<{n}xf32>
  %q = cortex.window_median %p : tensor<{n}xf32>
  func.return %p, %m, %q : tensor<{n}xf32>, f32, f32
}}
"""

values = st.sampled_from([0.0, 0.0, -1.0, 1.0, 2.0, 2.0, 3.5, 100.0, 1e-3])


@settings(max_examples=200, deadline=None)
@given(st.lists(values, min_size=1, max_size=12), values)
def test_kernels_follow_their_definition(entries, x):
    w = np.array(entries, np.float32)
    pushed = window_push(w, x)
    assert pushed.dtype == np.float32 and pushed.shape == w.shape
    assert pushed[-1] == np.float32(x) and np.array_equal(pushed[:-1], w[1:])
    positive = sorted(v for v in entries if v > 0)
    expected = positive[(len(positive) - 1) // 2] if positive else 0.0
    assert window_median(w) == np.float32(expected)


@pytest.fixture(scope="module", params=[1, 2, 5, 25])
def window_runners(request):
    module = cortex.parse(WINDOW_FN.format(n=request.param))
    return request.param, cortex.compile(module, entry="f", mode=None, weights={}), cortex.reference(
        module, entry="f", mode=None, weights={}
    )


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_lowering_equals_the_reference(window_runners, data):
    n, compiled, reference = window_runners
    w = np.array(data.draw(st.lists(values, min_size=n, max_size=n)), np.float32)
    x = data.draw(values)
    got, want = compiled(w, x), reference(w, x)
    assert np.array_equal(got[0], want[0])
    assert got[1] == want[1] and got[2] == want[2]


# ---------------------------------------------------------------- the L2 gate

SIZE = (192, 256)
FRAMES = 60  # three scenes: blurred frames at 8, 28, 29 and 48


def gate_decisions(backend: str, weights: dict[str, float] | None) -> list[bool]:
    module = cortex.build_l2_pipeline(*SIZE)
    assert expose_blur_gate(module, "l2_frame")
    make = cortex.compile if backend == "numpy" else cortex.reference
    runner = make(module, mode="power_save", weights=weights)
    video = SyntheticVideo(*SIZE)
    return [bool(runner(video.frame(i))[3]) for i in range(FRAMES)]


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["numpy", "reference"])
def test_auto_gates_exactly_the_blurred_synthetic_frames(backend):
    video = SyntheticVideo(*SIZE)
    blurred = [video.is_blurred(i) for i in range(FRAMES)]
    assert sum(blurred) == 4
    assert gate_decisions(backend, dict(BLUR_AUTO)) == blurred
    assert gate_decisions(backend, None) == blurred  # the default fixed gate (100) agrees here


@pytest.mark.slow
def test_the_threshold_is_a_runtime_input():
    assert all(gate_decisions("numpy", {"blur_threshold": 1e12}))
    assert not any(gate_decisions("numpy", {"blur_threshold": 0.0}))


def test_a_baked_in_threshold_is_a_constant():
    module = cortex.build_l2_pipeline(*SIZE, blur_threshold=1e12)
    names = {op.state_name for op in module.walk() if op.name == "cortex.weight"}
    assert "blur_threshold" not in names and "blur_fraction" in names
