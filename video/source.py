"""Video input: frames of any size, as decoded.

`open_video(None)` is the embedded synthetic video; a path is read with
OpenCV. Either way the frames come out uint8 H×W×3 BGR at the video's own
size; a pipeline bound to that size pads them to its block grid itself
(`cortex.pad_frame`, inserted by `cortex-pad-frames`).

A file is read to its end unless `frames` caps it; `start` skips frames
first. What happened is kept for the caller to report (`VideoSource.warnings`):
a video that ends before the frame count its container declares or before
the requested count, frames that failed to decode in the middle (a read
fails, a later one succeeds: the failed ones are skipped and counted), and a
still image read as a video. FFmpeg's own log lines are silenced (`cortex.video`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

import cv2
import numpy as np

from cortex.errors import CortexError
from cortex.video.synthetic import FPS as SYNTHETIC_FPS
from cortex.video.synthetic import SCENE_LENGTH, SyntheticVideo

DEFAULT_SYNTHETIC_FRAMES = 3 * SCENE_LENGTH  # three scenes: two cuts, blurred and static frames


@dataclass(frozen=True)
class Seconds:
    """A position or a length in the video given as time (`--start 12.5s`), turned into frames by its fps."""

    value: float

    def first_frame(self, fps: float) -> int:
        """The first frame whose timestamp (frame / fps) is at or after this time."""
        return max(0, math.ceil(self.value * fps - 1e-6))

    def frame_count(self, fps: float) -> int:
        """Frames that fit in this much time (rounded to the nearest frame)."""
        return max(0, round(self.value * fps))

    def __str__(self) -> str:
        return f"{self.value:g}s"


_POSITION = re.compile(r"(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(?P<unit>s|ms)?")


def parse_position(text: str) -> int | Seconds:
    """`120` (frames) or `12.5s` / `800ms` (time): what --start and --frames accept; ValueError otherwise."""
    match = _POSITION.fullmatch(text.strip().lower())
    if not match:
        raise ValueError(f"expected a frame count (120) or a time (12.5s, 800ms), got '{text}'")
    number, unit = match["number"], match["unit"]
    if unit is None:
        if "." in number:
            raise ValueError(f"a frame count is a whole number; for a time write '{text}s'")
        return int(number)
    seconds = float(number) / (1000.0 if unit == "ms" else 1.0)
    if not math.isfinite(seconds):
        raise ValueError(f"'{text}' is not a finite time")
    return Seconds(seconds)


def in_frames(value: int | Seconds | None, fps: float, first: bool) -> int | None:
    """Frames for a --start (`first`) or --frames value at `fps`."""
    if value is None or isinstance(value, int):
        return value
    return value.first_frame(fps) if first else value.frame_count(fps)


class VideoSource:
    """An iterable of uint8 BGR frames; each iteration starts from the first frame."""

    start = 0  # the source frame number of the first frame delivered (after --start)

    def __init__(self, size: tuple[int, int], fps: float, frame_count: int | None, name: str):
        self.delivered = 0  # frames the last iteration yielded
        self.numbers: list[int] = []  # the source frame number of each frame the last iteration yielded
        self.decode_failures = 0  # frames skipped because they did not decode (files only)
        self.size = size
        self.fps = fps
        self.frame_count = frame_count
        self.name = name

    def raw_frames(self) -> Iterator[tuple[int, np.ndarray]]:
        """(source frame number, frame) from the start position on."""
        raise NotImplementedError

    def __iter__(self) -> Iterator[np.ndarray]:
        self.delivered = 0
        self.numbers = []
        for number, frame in self.raw_frames():
            self.delivered += 1
            self.numbers.append(number)
            yield frame

    def frame_number(self, index: int) -> int:
        """The source frame number (0 = the file's first frame) of the run's `index`-th frame."""
        return self.numbers[index] if index < len(self.numbers) else self.start + index

    def timestamp(self, number: int) -> float:
        """Seconds from the video's start to source frame `number`, by the container's frame rate."""
        return number / self.fps if self.fps > 0 else 0.0

    def warnings(self) -> list[str]:
        """What the last full iteration should tell the user (nothing for the synthetic video)."""
        return []

    def __repr__(self) -> str:
        h, w = self.size
        return f"<{type(self).__name__} {self.name} {h}x{w}, {self.frame_count} frames at {self.fps:g} fps>"


class SyntheticSource(VideoSource):
    def __init__(self, *, frames: int | Seconds | None, height: int, width: int, seed: int = 0,
                 start: int | Seconds = 0):
        try:
            self.video = SyntheticVideo(height, width, seed)
        except ValueError as e:
            raise CortexError(str(e)) from None
        count = DEFAULT_SYNTHETIC_FRAMES if frames is None else in_frames(frames, SYNTHETIC_FPS, first=False)
        self.start = in_frames(start, SYNTHETIC_FPS, first=True) or 0
        super().__init__((height, width), SYNTHETIC_FPS, count, "synthetic")

    def raw_frames(self) -> Iterator[tuple[int, np.ndarray]]:
        assert self.frame_count is not None  # a synthetic source always knows its length
        return enumerate(self.video.frames(self.frame_count, start=self.start), start=self.start)


RETRIES_AFTER_A_FAILED_READ = 5
"""Reads tried after one fails before the declared end: a later success means damaged frames, not the end."""


class FileSource(VideoSource):
    """A video file (or anything cv2.VideoCapture opens), read afresh per iteration."""

    def __init__(self, path: str, *, frames: int | Seconds | None, start: int | Seconds = 0):
        self.path = path
        capture = self.open()
        try:
            ok, first = capture.read()
            if not ok or first is None:
                raise CortexError(f"{path}: no frame could be decoded")
            fps = capture.get(cv2.CAP_PROP_FPS) or SYNTHETIC_FPS
            known = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        finally:
            capture.release()
        self.declared = known if known > 0 else None  # the container's frame count, when it has one
        # FFmpeg reads a still image as a video of one frame, whatever its suffix (an image named .avi)
        self.still_image = self.declared is None and os.path.isfile(path) and cv2.haveImageReader(path)
        self.start = start = in_frames(start, fps, first=True) or 0
        frames = in_frames(frames, fps, first=False)
        count = None if self.declared is None else max(self.declared - start, 0)
        if frames is not None:
            count = frames if count is None else min(count, frames)
        self.limit = frames
        self.skipped_at_start = 0
        super().__init__(first.shape[:2], float(fps), count, path)

    def open(self) -> cv2.VideoCapture:
        if not os.path.exists(self.path):
            raise CortexError(f"{self.path}: no such video file")
        capture = cv2.VideoCapture(self.path)
        if not capture.isOpened():
            capture.release()
            raise CortexError(f"{self.path}: OpenCV cannot open this video")
        return capture

    def read(self, capture: cv2.VideoCapture, position: int) -> tuple[np.ndarray | None, int]:
        """The next decodable frame and how many failed reads were skipped to get it (None at the end).

        A failed read before the container's declared end is retried a few
        times: if a later frame decodes, the failed ones count as decode
        failures; if none does, the video has ended (early, as `warnings` says).
        """
        ok, frame = capture.read()
        if ok:
            return frame, 0
        if self.declared is None or position + 1 >= self.declared:
            return None, 0
        for failed in range(1, RETRIES_AFTER_A_FAILED_READ + 1):
            ok, frame = capture.read()
            if ok:
                return frame, failed
        return None, 0

    def raw_frames(self) -> Iterator[tuple[int, np.ndarray]]:
        capture = self.open()
        self.decode_failures = 0
        try:
            position = 0  # frames consumed from the file, failed ones included
            self.skipped_at_start = 0
            while self.skipped_at_start < self.start:
                frame, failed = self.read(capture, position)
                if frame is None:
                    return
                position += 1 + failed
                self.decode_failures += failed
                self.skipped_at_start += 1
            index = 0
            while self.limit is None or index < self.limit:
                frame, failed = self.read(capture, position)
                if frame is None:
                    return
                number = position + failed  # the failed reads before it were frames of the file too
                position += 1 + failed
                self.decode_failures += failed
                if frame.ndim == 2:
                    frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
                if frame.shape[:2] != self.size:
                    raise CortexError(
                        f"{self.path}: frame {index} is {frame.shape[0]}x{frame.shape[1]}, "
                        f"the video started at {self.size[0]}x{self.size[1]}"
                    )
                yield number, frame
                index += 1
        finally:
            capture.release()

    def warnings(self) -> list[str]:
        notes = []
        read = self.skipped_at_start + self.delivered + self.decode_failures
        requested = self.limit is not None and self.delivered < self.limit
        if self.declared is not None and read < self.declared and (self.limit is None or requested):
            notes.append(
                f"{self.path} ended after {read} frames, but its container declares {self.declared}: "
                "the file is truncated or damaged"
            )
        elif requested:
            since = f" from frame {self.start}" if self.start else ""
            notes.append(
                f"{self.path} ended after {read} frames: {self.delivered} of the {self.limit} frames requested{since}"
            )
        if self.skipped_at_start < self.start:
            notes.append(f"{self.path} has only {self.skipped_at_start} frames: starting at frame {self.start} leaves none")
        if self.decode_failures:
            notes.append(f"{self.path}: {self.decode_failures} frame(s) failed to decode and were skipped")
        if self.still_image:
            notes.append(f"{self.path}: is a still image, not a video: read as a video of one frame")
        return notes


def open_video(
    path: str | os.PathLike | None,
    *,
    frames: int | Seconds | None = None,
    height: int = 480,
    width: int = 640,
    start: int | Seconds = 0,
) -> VideoSource:
    """Frames of `path` (or of the synthetic video when None), at the video's own size.

    `frames` caps the number of frames (a file runs to its end by default,
    the synthetic video has `DEFAULT_SYNTHETIC_FRAMES`); `start` skips that
    many first; either may be `Seconds` (converted with the video's frame
    rate); `height`/`width` size the synthetic video only. Raises
    CortexError for a file OpenCV cannot read.
    """
    if isinstance(frames, int) and frames < 0:
        raise CortexError(f"frames must be >= 0, got {frames}")
    if isinstance(start, int) and start < 0:
        raise CortexError(f"start must be >= 0, got {start}")
    if path is None:
        return SyntheticSource(frames=frames, height=height, width=width, start=start)
    return FileSource(os.fspath(path), frames=frames, start=start)


__all__ = [
    "DEFAULT_SYNTHETIC_FRAMES", "FileSource", "Seconds", "SyntheticSource", "VideoSource", "open_video",
    "parse_position",
]
