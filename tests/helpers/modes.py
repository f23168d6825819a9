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
