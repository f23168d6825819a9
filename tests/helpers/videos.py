"""Small video files for the cortex-run tests: the synthetic video's frames written as MJPG."""

from __future__ import annotations

from pathlib import Path

import cv2

from cortex.video.synthetic import SyntheticVideo


def write_video(path: Path, frames: int = 4, size: tuple[int, int] = (96, 128)) -> Path:
    """`frames` synthetic frames of `size` (height, width) at 25 fps in `path`."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (size[1], size[0]))
    for frame in SyntheticVideo(*size).frames(frames):
        writer.write(frame)
    writer.release()
    return path
