"""Acceptance of the L2 pipeline: 60 synthetic 480×640 frames through the reference interpreter.

The run is shared (module fixture). What the pipeline returns (the JPEG and
the score) is checked against the video's ground truth; intermediate values
(scene_change, motion_map, text_roi) are observed with the reference kernels
on the same gray frames, and through the pipeline itself by choosing weights
that make the score equal to a single map.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.numerics import REORDERED, assert_f32_close

import cortex
from cortex.examples.l2_pipeline import BLUR_THRESHOLD, TERMS, WEIGHTS
from cortex.semantics.kernels import KERNELS
from cortex.semantics.modes import mode_weights
from cortex.video.synthetic import SyntheticVideo

N = 60
PIPELINE = Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir"
ALPHA, RESET = 0.6, 0.5  # cortex.temporal_smooth's defaults, as the pipeline uses them


def kernel(name: str):
    return KERNELS[f"cortex.{name}"]


@dataclass
class Run:
    video: SyntheticVideo
    frames: list[np.ndarray]
    grays: list[np.ndarray]
    encoded: list[np.ndarray]
    scores: list[np.ndarray]

    def sharp(self, i: int) -> bool:
        return not self.video.is_blurred(i)


@pytest.fixture(scope="module")
def run() -> Run:
    video = SyntheticVideo(480, 640)
    frames = list(video.frames(N))
    runner = cortex.reference(cortex.parse(str(PIPELINE)), entry="l2_frame", mode="balanced")
    encoded, scores = zip(*(runner(f) for f in frames))
    grays = [kernel("gray")(f) for f in frames]
    return Run(video, frames, grays, list(encoded), list(scores))


def prev_gray(run: Run, i: int) -> np.ndarray:
    """What the pipeline's prev_gray state holds at frame i (zeros before the first frame)."""
    return run.grays[i - 1] if i > 0 else np.zeros_like(run.grays[0])


def scene_change(run: Run, i: int) -> float:
    return kernel("scene_change")(run.grays[i], prev_gray(run, i))


def fused(run: Run, i: int, weights: dict[str, float]) -> np.ndarray:
    g = run.grays[i]
    maps = [kernel("center_crop")(g), kernel("text_roi")(g), kernel("saliency_dft")(g), kernel("motion_map")(g, prev_gray(run, i))]
    return kernel("score_fusion")(maps, [weights[w] for w in WEIGHTS], terms=TERMS)


def plain_blocks(video: SyntheticVideo, i: int) -> np.ndarray:
    """Cells holding neither text nor a moving shape: background only."""
    return ~video.text_blocks(i, 32) & ~video.shape_blocks(i, 32)


@pytest.mark.slow
def test_every_frame_gives_a_score_map_and_a_jpeg(run):
    assert len(run.scores) == N
    for i, (encoded, score) in enumerate(zip(run.encoded, run.scores)):
        assert score.shape == (15, 20) and score.dtype == np.float32 and np.isfinite(score).all()
        assert encoded.dtype == np.uint8 and encoded.ndim == 1
        image = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
        assert image is not None and image.shape == (480, 640, 3), f"frame {i}: not a 480x640 JPEG"


@pytest.mark.slow
def test_blur_gate_fires_exactly_on_blurred_frames(run):
    for i, g in enumerate(run.grays):
        sharpness = kernel("blur_detector")(g)
        assert (sharpness < BLUR_THRESHOLD) == run.video.is_blurred(i), (i, sharpness)


def test_blurred_frames_keep_prev_score(run):
    blurred = [i for i in range(1, N) if run.video.is_blurred(i)]
    assert any(i - 1 in blurred for i in blurred), "the video should blur two frames in a row"
    for i in blurred:
        assert np.array_equal(run.scores[i], run.scores[i - 1]), f"blurred frame {i} changed the score"
    for i in range(1, N):
        if run.sharp(i):
            assert not np.array_equal(run.scores[i], run.scores[i - 1]), f"sharp frame {i} kept the score"


@pytest.mark.slow
def test_scene_change_jumps_at_cuts(run):
    """Over the frames where the pipeline computes it, scene_change peaks at the cuts."""
    values = {i: scene_change(run, i) for i in range(1, N) if run.sharp(i)}
    cuts = [i for i in values if run.video.is_cut(i)]
    assert cuts == [20, 40]
    others = [v for i, v in values.items() if i not in cuts]
    for c in cuts:
        assert values[c] > RESET, f"cut at {c}: scene_change {values[c]:.3f} would not reset smoothing"
        assert values[c] > 1.5 * max(others), (c, values[c], max(others))


@pytest.mark.slow
@pytest.mark.parametrize("i", [20, 40, 21, 9, 30, 15])  # cuts, after a cut, after blurred frames, static
def test_score_is_fused_maps_smoothed(run, i):
    """The pipeline's score is score_fusion of the four maps through temporal_smooth:
    a reset (the fused maps alone) at a cut, a blend with the previous score elsewhere."""
    want = fused(run, i, mode_weights("balanced"))
    if run.video.is_cut(i):
        assert_f32_close(run.scores[i], want, ulps=REORDERED)
    else:
        assert scene_change(run, i) <= RESET
        blend = ALPHA * run.scores[i - 1] + (1 - ALPHA) * want
        assert_f32_close(run.scores[i], blend, ulps=REORDERED)
        assert not np.allclose(run.scores[i], want, rtol=1e-3), "smoothing should blend with prev_score"


def test_motion_map_is_zero_for_identical_frames(run):
    static = [i for i in range(1, N) if run.video.is_static(i)]
    assert static
    for i in static:
        assert np.array_equal(run.frames[i], run.frames[i - 1])
        assert not kernel("motion_map")(run.grays[i], run.grays[i - 1]).any(), f"frame {i}"
    moving = [i for i in range(1, N) if run.sharp(i) and run.sharp(i - 1) and i not in static]
    for i in moving:
        assert kernel("motion_map")(run.grays[i], run.grays[i - 1]).max() > 0, f"frame {i} shows no motion"


def test_pipeline_sees_no_motion_on_a_static_frame(run):
    """With only the motion weight, a static frame's score is alpha · the previous score."""
    s = next(i for i in range(2, N) if run.video.is_static(i))
    weights = {w: 0.0 for w in WEIGHTS} | {"wm": 1.0}
    runner = cortex.reference(cortex.parse(str(PIPELINE)), mode=None, weights=weights)
    before, moving, still = (runner(run.frames[i])[1] for i in (s - 2, s - 1, s))
    assert moving.max() > 0
    assert_f32_close(still, ALPHA * moving, ulps=REORDERED)
    assert not np.allclose(moving, ALPHA * before, rtol=1e-3), "a moving frame adds motion"


@pytest.mark.slow
def test_text_blocks_score_higher_on_text_roi(run):
    for i in range(N):
        if not run.sharp(i):
            continue
        roi = kernel("text_roi")(run.grays[i])
        text, plain = run.video.text_blocks(i, 32), plain_blocks(run.video, i)
        assert text.any() and plain.sum() > 100
        assert roi[text].mean() > roi[plain].mean() + 0.1, (i, roi[text].mean(), roi[plain].mean())


def test_pipeline_score_follows_text_with_text_weight_only(run):
    """With only wt, the first frame (a reset: prev_gray is zeros) scores text_roi itself."""
    weights = {w: 0.0 for w in WEIGHTS} | {"wt": 1.0}
    runner = cortex.reference(cortex.parse(str(PIPELINE)), mode=None, weights=weights)
    _, score = runner(run.frames[0])
    np.testing.assert_array_equal(score, kernel("text_roi")(run.grays[0]))
    text, plain = run.video.text_blocks(0, 32), plain_blocks(run.video, 0)
    assert score[text].mean() > score[plain].mean() + 0.1
