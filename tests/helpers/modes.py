"""What the multi-mode tests share: the modes, a small frame shape, frames of OpenCV's sample clip and the
motion-trail example pipeline, exact equality of outputs and states, and a `run_video(modes=...)` checked
against the sequential calls."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

import cortex

TRAIL = Path(cortex.__file__).resolve().parent / "examples" / "motion_trail.mlir"
CLIP = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")
MODES = ("balanced", "power_save", "motion")
SHAPE = (64, 96, 3)


def clip_frames(count: int) -> list[np.ndarray]:
    """`count` frames of OpenCV's sample clip, shrunk to 64x96 (random frames when it is not installed)."""
    if not CLIP.exists():
        rng = np.random.default_rng(7)
        return [rng.integers(0, 256, SHAPE, dtype=np.uint8) for _ in range(count)]
    capture, frames = cv2.VideoCapture(str(CLIP)), []
    while len(frames) < count:
        ok, frame = capture.read()
        assert ok, "vtest.avi has fewer frames than the test reads"
        frames.append(np.ascontiguousarray(cv2.resize(frame, (SHAPE[1], SHAPE[0]), interpolation=cv2.INTER_AREA)))
    capture.release()
    return frames


FRAMES = clip_frames(12)

OWN_DELAYED = """builtin.module {
  func.func @own_delayed(%frame: tensor<?x?x3xui8>) -> (tensor<?x?xf32>) {
    %gray = cortex.gray %frame : tensor<?x?x3xui8> -> tensor<?x?xf32>
    %prev = cortex.state "prev_mix" : tensor<?x?xf32>
    %text = cortex.text_roi %gray : tensor<?x?xf32> -> tensor<?x?xf32>
    %sal = cortex.saliency_dft %gray : tensor<?x?xf32> -> tensor<?x?xf32>
    %wa = cortex.weight "wa" : f32
    %wb = cortex.weight "wb" : f32
    %mix = cortex.score_fusion(%text, %sal) weights(%wa, %wb) {terms = ["text_roi", "saliency_dft"]} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
    %half = arith.constant 0.5 : f32
    %out = cortex.temporal_smooth %mix, %prev, %half : (tensor<?x?xf32>, tensor<?x?xf32>, f32) -> tensor<?x?xf32>
    cortex.update_state "prev_mix" = %mix : tensor<?x?xf32>
    func.return %out : tensor<?x?xf32>
  }
}
"""
"""A delayed input (`prev_mix`: this frame's fused map) that each mode computes with its own weights
(`OWN_DELAYED_WEIGHTS`): the value a frame reads is the one the frame before it computed in that frame's mode."""
OWN_DELAYED_WEIGHTS = {"calm": {"wa": 1.0, "wb": 0.0}, "sharp": {"wa": 0.2, "wb": 0.8}}


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b


def sequential(multi, modes, frames):
    multi.reset()
    outputs = [multi(f, mode=m) for f, m in zip(frames, modes)]
    return outputs, dict(multi.state), dict(multi.frames_per_mode)


def assert_run_equals_calls(multi, modes, frames, workers: int = 2, window: int | None = None,
                            engine: str = "threads", **options) -> None:
    expected, final, per_mode = sequential(multi, modes, frames)
    multi.reset()
    got = list(multi.run_video(frames, workers=workers, window=window, modes=modes, engine=engine, **options))
    assert len(got) == len(expected)
    for k, (a, b) in enumerate(zip(got, expected)):
        assert all(same(x, y) for x, y in zip(a, b)), f"frame {k} ({modes[k]}) differs"
    state = multi.state
    assert state.keys() == final.keys()
    for name, value in final.items():
        assert same(state[name], value), f"state '{name}' differs"
    assert dict(multi.frames_per_mode) == per_mode


def read_ahead(frames: list) -> tuple[list, Iterator]:
    """A source of `frames` and the list of those it has given so far (how far an engine has read ahead)."""
    read: list = []

    def source() -> Iterator:
        for frame in frames:
            read.append(frame)
            yield frame
    return read, source()
