"""The compiled backend at its thresholds, against the reference interpreter.

Every comparison the pipeline makes is strict or not for a reason (docs/dialects/cortex.md):
- temporal_smooth resets when scene > reset_threshold (equal: smooth);
- the blur gate skips scoring when sharpness < threshold (equal: score);
- the encoder blurs a block when score < threshold · max(score) (equal: keep).
Mutation testing found that `ogt` → `oge` in temporal_smooth's lowering
passed every pytest test: nothing ran scene == threshold through the
compiled backend. Here each comparison runs exactly at its threshold (and
one f32 step either side), on a small graph and inside the L2 pipeline
whose thresholds are set to the exact value a frame produces. Each case
also checks that the threshold matters for that input, so it cannot pass by
never reaching the boundary.

A knife edge is built from the path under test: the reference interpreter and
the compiled backend compute a frame's scene value in different float32
orders (gray is a BLAS product in one, an elementwise sum in the other), so
each may land an ULP from the other, on either side depending on the CPU's
BLAS kernel. Each run therefore gets its threshold at its *own* value.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ALGORITHM, REORDERED, assert_f32_close
from xdsl.dialects.builtin import FloatAttr, f32

import cortex
from cortex.backends.mlir.upstream import mlir_runner_available, run_with_mlir
from cortex.dialects.vision import TemporalSmoothOp
from cortex.driver import lower
from cortex.semantics import vision_kernels
from cortex.video.synthetic import SyntheticVideo

F32 = np.float32
H, W, BLOCK = 96, 128, 32


def below(x: float) -> float:
    return float(np.nextafter(F32(x), F32(-np.inf)))


def above(x: float) -> float:
    return float(np.nextafter(F32(x), F32(np.inf)))


def both(module, entry: str, mode, *inputs):
    return cortex.reference(module, entry=entry, mode=mode)(*inputs), cortex.compile(module, entry=entry, mode=mode)(*inputs)


# ---------------------------------------------------------------- temporal_smooth


SMOOTH = """
func.func @main(%s: tensor<2x3xf32>, %p: tensor<2x3xf32>, %scene: f32) -> tensor<2x3xf32> {
  %r = cortex.temporal_smooth %s, %p, %scene {alpha = 0.25 : f32, reset_threshold = THRESHOLD : f32} : (tensor<2x3xf32>, tensor<2x3xf32>, f32) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}
"""


@pytest.mark.parametrize("threshold", [0.5, 0.1, 0.0, 1.0 / 3.0])
@pytest.mark.parametrize("where", ["equal", "below", "above"])
def test_temporal_smooth_at_reset_threshold(threshold, where):
    t = float(F32(threshold))  # the property is f32: the boundary is the f32 value
    scene = {"equal": t, "below": below(t), "above": above(t)}[where]
    module = cortex.parse(SMOOTH.replace("THRESHOLD", repr(t)))
    rng = np.random.default_rng(1)
    s, p = rng.uniform(0, 1, (2, 3)).astype(F32), rng.uniform(0, 1, (2, 3)).astype(F32)
    expected = s if scene > t else F32(0.25) * p + F32(0.75) * s
    results = both(module, "main", None, s, p, scene)
    if mlir_runner_available() and where == "equal":
        results += (run_with_mlir(lower(cortex.parse(SMOOTH.replace("THRESHOLD", repr(t)))), "main", [s, p, scene]),)
    for (got,) in results:
        assert_f32_close(got, expected, ulps=REORDERED)


# ---------------------------------------------------------------- in the L2 pipeline


@pytest.fixture(scope="module")
def frames():
    frames = list(SyntheticVideo(H, W).frames(3))
    grays = [vision_kernels.gray(f) for f in frames]
    return frames, grays


def run_l2(reference_module, compiled_module, frames):
    """The reference interpreter on one module and the compiled backend on another (each may carry a
    threshold built from its own path's value)."""
    ref = cortex.reference(reference_module, mode="balanced")
    comp = cortex.compile(compiled_module, mode="balanced")
    want = [ref(f) for f in frames]
    got = [comp(f) for f in frames]
    return want, got


def assert_runs_equal(want, got):
    for (bytes_a, score_a), (bytes_b, score_b) in zip(want, got):
        assert_f32_close(score_b, score_a, ulps=ALGORITHM, scale=1.0)
        np.testing.assert_array_equal(bytes_b, bytes_a)


PROBE = f"""
func.func @probe(%frame: tensor<{H}x{W}x3xui8>, %prev: tensor<{H}x{W}x3xui8>) -> (f32, f32) {{
  %gray = cortex.gray %frame : tensor<{H}x{W}x3xui8> -> tensor<{H}x{W}xf32>
  %prev_gray = cortex.gray %prev : tensor<{H}x{W}x3xui8> -> tensor<{H}x{W}xf32>
  %sharpness = cortex.blur_detector %gray : tensor<{H}x{W}xf32> -> f32
  %scene = cortex.scene_change %gray, %prev_gray : (tensor<{H}x{W}xf32>, tensor<{H}x{W}xf32>) -> f32
  func.return %sharpness, %scene : f32, f32
}}
"""


def probe_values(frames) -> dict[str, tuple[float, float]]:
    """Frame 1's sharpness and scene value as (reference interpreter, compiled backend), each computed
    through the same ops as in the L2 pipeline (gray of both frames, blur_detector, scene_change)."""
    probe = cortex.parse(PROBE)
    want = cortex.reference(probe, entry="probe", mode=None)(frames[1], frames[0])
    got = cortex.compile(probe, entry="probe", mode=None)(frames[1], frames[0])
    values = {name: (float(w), float(g)) for name, w, g in zip(("sharpness", "scene"), want, got)}
    for pair in values.values():
        for v in pair:
            assert v == float(F32(v)) and v > 0
    return values


def with_reset_threshold(module, value: float):
    (op,) = [op for op in module.walk() if isinstance(op, TemporalSmoothOp)]
    op.properties["reset_threshold"] = FloatAttr(value, f32)
    return module


@pytest.mark.slow
def test_l2_scene_equal_to_reset_threshold(frames):
    frames, _ = frames
    scene_ref, scene_comp = probe_values(frames)["scene"]

    def l2(threshold: float):
        return with_reset_threshold(cortex.build_l2_pipeline(H, W, BLOCK), threshold)

    at = run_l2(l2(scene_ref), l2(scene_comp), frames)
    assert_runs_equal(*at)
    reset = run_l2(l2(below(scene_ref)), l2(below(scene_comp)), frames)
    assert_runs_equal(*reset)
    # On each path the edge decides: at its threshold frame 1 smooths; one f32 step below it resets.
    for path in range(2):
        assert not np.allclose(at[path][1][1], reset[path][1][1]), ("reference", "compiled")[path]


@pytest.mark.slow
def test_l2_sharpness_equal_to_blur_threshold(frames):
    frames, _ = frames
    sharp_ref, sharp_comp = probe_values(frames)["sharpness"]

    def l2(threshold: float):
        return cortex.build_l2_pipeline(H, W, BLOCK, blur_threshold=threshold)

    at = run_l2(l2(sharp_ref), l2(sharp_comp), frames)
    assert_runs_equal(*at)
    gated = run_l2(l2(above(sharp_ref)), l2(above(sharp_comp)), frames)
    assert_runs_equal(*gated)
    # On each path: at its threshold frame 1 is scored (sharpness < threshold is false); one step up it
    # keeps frame 0's score.
    for path in range(2):
        np.testing.assert_array_equal(gated[path][1][1], gated[path][0][1])
        assert not np.array_equal(at[path][1][1], at[path][0][1])


# ---------------------------------------------------------------- the encoder's block test

ENCODER = """
func.func @main(%frame: tensor<96x128x3xui8>, %score: tensor<3x4xf32>) -> tensor<?xui8> {
  %e = cortex.encoder %frame, %score {threshold = THRESHOLD : f32} : (tensor<96x128x3xui8>, tensor<3x4xf32>) -> tensor<?xui8>
  func.return %e : tensor<?xui8>
}
"""


@pytest.mark.parametrize("threshold", [0.5, 0.3])
def test_encoder_score_equal_to_threshold_times_max(frames, threshold):
    frames, _ = frames
    t = float(F32(threshold))
    peak = F32(0.75)
    edge = F32(t) * peak  # a block exactly at threshold · max keeps its pixels
    score = np.full((3, 4), F32(0.05), F32)
    score[0, 0] = peak
    score[1, 1] = score[2, 3] = edge
    score[1, 2] = np.nextafter(edge, F32(-1))
    assert vision_kernels.low_score_mask(score, t)[1, 2] and not vision_kernels.low_score_mask(score, t)[1, 1]
    module = cortex.parse(ENCODER.replace("THRESHOLD", repr(t)))
    (want,), (got,) = both(module, "main", None, frames[1], score)
    np.testing.assert_array_equal(got, want)
    blurred = score.copy()
    blurred[1, 1] = blurred[2, 3] = np.nextafter(edge, F32(-1))
    (other,), _ = both(module, "main", None, frames[1], blurred)
    assert not np.array_equal(other, want)  # the boundary blocks decide the bytes
