"""What the multi-mode tests share: the modes, a small frame shape, frames of OpenCV's sample clip and the
motion-trail example pipeline, and exact equality of outputs and states."""

from __future__ import annotations

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


def same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.asarray(a).dtype == np.asarray(b).dtype and np.array_equal(a, b)
    return a == b
