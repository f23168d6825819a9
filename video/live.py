"""Live video input: raw frames on a pipe, and streams or devices that OpenCV's FFmpeg opens.

A live source is read once, as it comes: no seeking, no frame count known
ahead, no reading afresh for a second pass (`LiveSource.__iter__` refuses
one). Two kinds:

- `RawPipeSource`: the bytes `ffmpeg -f rawvideo -pix_fmt bgr24 -` writes, on
  a binary stream (cortex-run's standard input, `-`): frame after frame of
  exactly H×W×channels bytes, `bgr24`, `rgb24` or `gray`; the frame size and
  rate come from the caller (`--size`, `--fps`), a pipe carries neither. A
  stream that ends inside a frame keeps the whole frames before it, and
  `warnings` says how many bytes the partial one had.
- `CaptureSource`: a URL (`http://…`, `rtsp://…`, `udp://…`) or a capture
  device (`/dev/video0`), opened once with `cv2.VideoCapture`; its first
  frame is read when it is opened (the size), and delivered first.

Frames come out as `VideoSource`'s do: uint8 H×W×3 BGR at the source's own
size (a pipeline pads them to its block grid itself, `cortex.pad_frame`). A
live source does not keep each frame's number (`VideoSource.numbers` grows
with the video; a stream has no end): whoever runs it passes the number
along with the frame (`numbered`). A reader that may drop frames takes them
as read (`arrivals`) and converts only those it keeps (`prepare`).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from typing import BinaryIO

import cv2
import numpy as np

from cortex.errors import CortexError
from cortex.video.source import Seconds, VideoSource, in_frames

PIX_FMTS: dict[str, tuple[int, int | None]] = {
    "bgr24": (3, None),
    "rgb24": (3, cv2.COLOR_RGB2BGR),
    "gray": (1, cv2.COLOR_GRAY2BGR),
}
"""--pix-fmt, as ffmpeg names it → (bytes per pixel, the OpenCV conversion to BGR, None when it is BGR)."""

STDIN = "-"
"""The name that means "raw frames on standard input"."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")


def is_live(name: str | os.PathLike | None) -> bool:
    """Whether `name` is read as live: `-` (standard input), a URL other than file://, or a character device."""
    if name is None:
        return False
    text = os.fspath(name)
    if text == STDIN:
        return True
    if _URL.match(text):
        return not text.lower().startswith("file://")
    try:
        return stat.S_ISCHR(os.stat(text).st_mode)
    except OSError:
        return False


class LiveSource(VideoSource):
    """A source read once, as the frames come (see the module's docstring)."""

    live = True

    def __init__(self, size: tuple[int, int], fps: float, name: str,
                 frames: int | Seconds | None = None, start: int | Seconds = 0):
        super().__init__(size, fps, None, name)
        self.start = in_frames(start, fps, first=True) or 0
        self.limit = in_frames(frames, fps, first=False)
        self.read_count = 0  # frames read from the source, those skipped by --start included
        self.iterated = False

    def read_frame(self) -> np.ndarray | None:
        """The next frame as the source gives it (raw bytes shaped, not converted), or None at its end."""
        raise NotImplementedError

    def to_bgr(self, frame: np.ndarray) -> np.ndarray:
        """A frame `read_frame` gave, as uint8 H×W×3 BGR."""
        return cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR) if frame.ndim == 2 else frame

    def prepare(self, number: int, frame: np.ndarray) -> np.ndarray:
        """Source frame `number` as `arrivals` gave it, as BGR (and checked to be the stream's size)."""
        frame = self.to_bgr(frame)
        if frame.shape[:2] != self.size:
            raise CortexError(
                f"{self.name}: frame {number} is {frame.shape[0]}x{frame.shape[1]}, "
                f"the stream started at {self.size[0]}x{self.size[1]}"
            )
        return frame

    def arrivals(self) -> Iterator[tuple[int, np.ndarray]]:
        """(source frame number, the frame as read), once: a second call is an error (the stream has moved on).

        The frame is not converted yet (`prepare` does that): a frame dropped at arrival costs its read alone.
        """
        if self.iterated:
            raise CortexError(f"{self.name}: a live source is read once; it cannot be run again")
        self.iterated = True
        self.delivered = 0
        try:
            while self.limit is None or self.delivered < self.limit:
                frame = self.read_frame()
                if frame is None:
                    return
                number = self.read_count
                self.read_count += 1
                if number < self.start:
                    continue
                self.delivered += 1
                yield number, frame
        finally:
            self.close()

    def numbered(self) -> Iterator[tuple[int, np.ndarray]]:
        """(source frame number, BGR frame), once."""
        return ((number, self.prepare(number, frame)) for number, frame in self.arrivals())

    def __iter__(self) -> Iterator[np.ndarray]:
        return (frame for _, frame in self.numbered())

    def frame_number(self, index: int) -> int:
        return self.start + index  # without drops; a live run passes each frame's own number

    def close(self) -> None:
        """Release what the source holds (idempotent)."""

    def warnings(self) -> list[str]:
        if self.read_count <= self.start and self.start:
            return [f"{self.name} ended after {self.read_count} frames: starting at frame {self.start} leaves none"]
        return []


def read_exactly(stream: BinaryIO, buffer: memoryview) -> int:
    """Fill `buffer` from `stream`; the bytes read (fewer only at the stream's end)."""
    got = 0
    while got < len(buffer):
        n = stream.readinto(buffer[got:])  # type: ignore[attr-defined]
        if not n:
            break
        got += n
    return got


class RawPipeSource(LiveSource):
    """Raw frames of `size` in `pix_fmt` on a binary stream (see the module's docstring)."""

    def __init__(self, stream: BinaryIO, size: tuple[int, int], pix_fmt: str, fps: float,
                 name: str = STDIN, frames: int | Seconds | None = None, start: int | Seconds = 0):
        if pix_fmt not in PIX_FMTS:
            raise CortexError(f"--pix-fmt must be one of {', '.join(PIX_FMTS)}, got '{pix_fmt}'")
        if not fps > 0:
            raise CortexError(f"--fps must be > 0, got {fps}")
        self.stream = stream
        self.pix_fmt = pix_fmt
        self.channels, self.conversion = PIX_FMTS[pix_fmt]
        self.frame_bytes = size[0] * size[1] * self.channels
        self.partial = 0  # bytes of a frame the stream ended inside
        super().__init__(size, fps, name, frames, start)

    def read_frame(self) -> np.ndarray | None:
        h, w = self.size
        buffer = bytearray(self.frame_bytes)  # a fresh one per frame: frames in flight keep theirs
        got = read_exactly(self.stream, memoryview(buffer))
        if got < self.frame_bytes:
            self.partial = got
            return None
        data = np.frombuffer(buffer, np.uint8)  # writable, no copy
        return data.reshape(h, w, self.channels) if self.channels > 1 else data.reshape(h, w)

    def to_bgr(self, frame: np.ndarray) -> np.ndarray:
        return frame if self.conversion is None else cv2.cvtColor(frame, self.conversion)

    def warnings(self) -> list[str]:
        notes = super().warnings()
        if self.partial:
            h, w = self.size
            notes.append(
                f"{self.name}: the stream ended inside frame {self.read_count}: {self.partial} of its "
                f"{self.frame_bytes} bytes ({h}x{w} {self.pix_fmt}); the {self.read_count} whole frames were kept, "
                "the partial one dropped (do --size and --pix-fmt match what the source writes?)"
            )
        return notes


class CaptureSource(LiveSource):
    """A stream or capture device opened once with OpenCV (see the module's docstring)."""

    def __init__(self, url: str, frames: int | Seconds | None = None, start: int | Seconds = 0,
                 fps: float | None = None):
        """`fps`: the rate the frames' timestamps count with, over what the stream says (25 when it says none)."""
        self.url = url
        device = not _URL.match(url)
        self.capture = cv2.VideoCapture(url) if device else cv2.VideoCapture(url, cv2.CAP_FFMPEG)
        if not self.capture.isOpened():
            self.capture.release()
            raise CortexError(f"{url}: OpenCV cannot open this {'device' if device else 'stream'}")
        ok, first = self.capture.read()
        if not ok or first is None:
            self.capture.release()
            raise CortexError(f"{url}: no frame could be read")
        self.first: np.ndarray | None = first
        fps = fps or self.capture.get(cv2.CAP_PROP_FPS)
        super().__init__(first.shape[:2], float(fps) if fps and fps > 0 else 25.0, url, frames, start)

    def read_frame(self) -> np.ndarray | None:
        if self.first is not None:
            frame, self.first = self.first, None
        else:
            ok, frame = self.capture.read()
            if not ok or frame is None:
                return None
        return frame

    def close(self) -> None:
        self.capture.release()


def open_live(name: str, *, size: tuple[int, int] | None = None, pix_fmt: str = "bgr24",
              fps: float | None = None, frames: int | Seconds | None = None, start: int | Seconds = 0,
              stream: BinaryIO | None = None) -> LiveSource:
    """The live source `name` names (`is_live`): `-` reads raw frames from `stream` (default: standard input)."""
    if name == STDIN:
        if size is None:
            raise CortexError("reading raw frames from standard input ('-') needs --size HxW (a pipe carries no size)")
        if stream is None:  # unbuffered: a reader blocked in it holds no lock the interpreter's exit needs
            if os.isatty(0):
                raise CortexError("'-' reads raw frames from standard input, which is a terminal: pipe frames in "
                                  "(ffmpeg -i clip.mp4 -f rawvideo -pix_fmt bgr24 - | cortex-run - --size HxW)")
            stream = open(0, "rb", buffering=0, closefd=False)  # noqa: SIM115 - read until the process ends
        return RawPipeSource(stream, size, pix_fmt, 25.0 if fps is None else fps, frames=frames, start=start)
    if size is not None:
        raise CortexError(f"--size goes with raw frames on standard input ('-'); {name} is run at its own size")
    return CaptureSource(name, frames, start, fps)


__all__ = ["PIX_FMTS", "STDIN", "CaptureSource", "LiveSource", "RawPipeSource", "is_live", "open_live", "read_exactly"]
