"""cortex-run's per-frame outputs: scores as JSONL, overlay pictures (PNGs or a video), encoded JPEGs.

Every file is written atomically (`cortex.tools.atomic`): a JPEG or PNG
appears whole, the JSONL and an overlay video appear when the run has
finished (renamed from a temporary sibling), and a failed write raises
`OutputError` naming the file, leaving nothing half-written behind. An
overlay video is read back after writing: if OpenCV cannot read every
frame that was written, that is a failed write too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from cortex.semantics.vision_kernels import low_score_mask
from cortex.tools.atomic import (
    AtomicFile,
    OutputError,
    check_distinct,
    commit_file,
    identity,
    remove_quietly,
    temporary_path,
    write_bytes_atomic,
)
from cortex.video.overlay import FrameInfo, overlay_picture

VIDEO_CODECS = {".mp4": "mp4v", ".avi": "MJPG", ".mkv": "mp4v"}
"""Overlay container → FourCC: MPEG-4 Part 2 in .mp4/.mkv (what OpenCV's FFmpeg writes everywhere,
~5 ms and ~16 kB a 576×768 frame), Motion-JPEG in .avi (every player reads it)."""

JSONL_FIELDS = {
    "index": "frame number in this run (0 = the first frame processed, after --start)",
    "frame": "the source frame number (0 = the video's first frame; counts frames skipped by --start)",
    "time": "the frame's timestamp in seconds from the video's start (frame / the container's frames per second)",
    "blurred": "true when the blur gate skipped scoring (the score is the previous frame's); null without a gate",
    "sharpness": "variance of the Laplacian of the gray frame (higher = sharper); null without a gate",
    "threshold": "the gate's threshold this frame: blurred = sharpness < threshold; null without a gate",
    "encoded_bytes": "size of the encoder's JPEG of the frame, in bytes",
    "score": "the score map: rows x columns of blocks (block row r covers pixel rows r*block .. r*block+block-1), "
    "each in [0, 1]",
}
"""The fields of a --scores-jsonl record (one JSON object per line, one line per frame)."""


def overlay_kind(dest: str | Path) -> str:
    """'video' for .mp4/.avi/.mkv, 'directory' for an existing directory or a name without a suffix."""
    path = Path(dest)
    if path.suffix.lower() in VIDEO_CODECS:
        return "video"
    if path.is_dir() or not path.suffix:
        return "directory"
    raise OutputError(
        f"--overlay {dest}: '{path.suffix}' is not a video container cortex-run writes "
        f"(use {', '.join(VIDEO_CODECS)}, or a directory for PNGs)"
    )


class OverlayWriter:
    """Overlay pictures into a directory of PNGs, or one video whose container the suffix names."""

    def __init__(self, dest: str | Path, fps: float = 25.0, block: int | None = None, mode: str = "",
                 side_by_side: bool = False, scale: str = "absolute"):
        self.dest = Path(dest)
        self.kind = overlay_kind(self.dest)
        self.block, self.mode, self.side_by_side, self.scale = block, mode, side_by_side, scale
        self.fps = fps if fps and fps > 0 else 25.0
        self.video: cv2.VideoWriter | None = None
        self.temporary: Path | None = None  # created with the video writer, in the real target's folder
        self.protected: set[tuple] = set()  # the inputs' identities: a frame file never replaces one
        self.size: tuple[int, int] | None = None
        self.count = 0
        make_directory(self.dest.parent if self.kind == "video" else self.dest)

    def write(self, frame: np.ndarray, score: np.ndarray, info: FrameInfo, encoded: np.ndarray | None = None,
              kept: np.ndarray | None = None) -> None:
        """One picture; PNGs are named by the source frame number (`info.index`)."""
        self.write_picture(
            overlay_picture(frame, score, info, self.block, encoded, self.side_by_side, self.scale, kept), info
        )

    def write_picture(self, image: np.ndarray, info: FrameInfo) -> None:
        if self.kind == "directory":
            path = self.dest / f"frame_{info.index:05d}.png"
            ok, png = cv2.imencode(".png", image)
            if not ok:
                raise OutputError(f"cannot write {path}: PNG encoding failed")
            write_frame_file(path, png, self.protected)
        else:
            if self.video is None:
                h, w = image.shape[:2]
                self.size = (h, w)
                # OpenCV's type stubs omit the module-level VideoWriter_fourcc (the tests replace VideoWriter itself)
                fourcc = cv2.VideoWriter_fourcc(*VIDEO_CODECS[self.dest.suffix.lower()])  # type: ignore[attr-defined]
                self.temporary = temporary_path(self.dest)
                self.video = cv2.VideoWriter(str(self.temporary), fourcc, self.fps, (w, h))
                if not self.video.isOpened():
                    self.discard()
                    raise OutputError(f"cannot write {self.dest}: OpenCV cannot open a video writer for it")
            self.video.write(image)
        self.count += 1

    def close(self) -> None:
        """Finish the video, check it reads back whole, and rename it into place."""
        if self.video is None or self.temporary is None:
            return
        self.video.release()
        self.video = None
        readable = count_readable_frames(self.temporary, self.size)
        if readable != self.count:
            remove_quietly(self.temporary)
            raise OutputError(
                f"cannot write {self.dest}: the video written reads back {readable} of {self.count} frames "
                "(disk full?)"
            )
        commit_file(self.temporary, self.dest)

    def discard(self) -> None:
        if self.video is not None:
            self.video.release()
            self.video = None
        if self.temporary is not None:
            remove_quietly(self.temporary)


def make_directory(path: Path) -> None:
    """`path` is a directory afterwards (made with its parents), or an OutputError says why not."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"cannot write {path}: it exists and is not a directory (PNGs and JPEGs go into a directory)")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None


def write_frame_file(path: Path, data: bytes | np.ndarray, protected: set[tuple]) -> None:
    """One frame's PNG or JPEG, atomically, unless that file is one of the run's inputs."""
    if protected and identity(path) in protected:
        raise OutputError(f"cannot write {path}: it is an input of this run; refusing to overwrite it")
    write_bytes_atomic(path, data if isinstance(data, bytes) else np.asarray(data, np.uint8).tobytes())


def count_readable_frames(path: Path, size: tuple[int, int] | None) -> int:
    """Frames OpenCV decodes from `path` at `size` (H, W); 0 when it cannot open it."""
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            return 0
        count = 0
        while True:
            ok, image = capture.read()
            if not ok:
                return count
            if size is not None and image.shape[:2] != size:
                return count
            count += 1
    finally:
        capture.release()


class Outputs:
    """The optional per-frame outputs of one run: JSONL scores, overlays, encoded JPEGs.

    `close()` commits what was written; `discard()` (after a failure or an
    interrupt) removes the temporary files, so no partial output appears.
    `inputs` are (name, path) pairs of the files the run reads (the video, the
    pipeline): no output may be one of them, nor the same file as another output.
    """

    def __init__(self, scores_jsonl: str | None = None, overlay: str | None = None, encoded: str | None = None,
                 fps: float = 25.0, block: int | None = None, mode: str = "", side_by_side: bool = False,
                 scale: str = "absolute", keep_ratio: float | None = None,
                 inputs: tuple[tuple[str, str | None], ...] = (), others: tuple[tuple[str, str | None], ...] = ()):
        """`keep_ratio`: the pipeline's encoder threshold (blocks scoring >= it x the frame's max stay sharp);
        the overlay outlines those blocks and marks the cut on the colour bar. None: no encoder, no outline.
        `inputs`: (name, path) of the files the run reads; no output may be one of them (see the class doc);
        `others`: the run's other outputs (--summary-json, --report), checked against all of these too."""
        check_distinct(
            [("--scores-jsonl", scores_jsonl), ("--overlay", overlay), ("--encoded", encoded), *others], inputs
        )
        self.protected = {identity(path) for _, path in inputs if path}
        self.jsonl = AtomicFile(scores_jsonl) if scores_jsonl else None
        self.overlay = None
        self.encoded = Path(encoded) if encoded else None
        self.keep_ratio = keep_ratio
        self.block, self.mode, self.side_by_side, self.scale = block, mode, side_by_side, scale
        self.recorders: list[Callable[..., object]] = []
        """Called per frame with (index, info, score, results, render): `render()` gives the overlay picture
        (drawn once per frame, shared with --overlay), e.g. `cortex.tools.report_html.ReportRecorder`."""
        self.frame_number: Callable[[int], int] | None = None
        """The source's frame number of the run's frame `index` (`VideoSource.frame_number`); None: the index."""
        self.on_frame: Callable[[int], object] | None = None
        """Called with the run's index of each frame written (e.g. to sample the threads while frames run)."""
        self.fps = fps if fps and fps > 0 else 25.0
        try:
            self.overlay = OverlayWriter(overlay, fps, block, mode, side_by_side, scale) if overlay else None
            if self.overlay:
                self.overlay.protected = self.protected
            if self.encoded:
                make_directory(self.encoded)
        except BaseException:
            self.discard()
            raise
        self.mode = mode

    def write(self, index: int, frame: np.ndarray, results: tuple, probed: bool, number: int | None = None) -> None:
        """Frame `index` of this run, source frame `number` (default: `index`)."""
        encoded, score = results[0], np.asarray(results[1])
        if number is None:
            number = self.frame_number(index) if self.frame_number is not None else index
        if self.on_frame is not None:
            self.on_frame(index)
        kept, keep = None, None
        if self.keep_ratio is not None and score.size:
            kept = ~low_score_mask(score, self.keep_ratio)  # the encoder's own rule
            keep = self.keep_ratio * float(np.max(score))
        info = FrameInfo(
            number,
            self.mode,
            blurred=bool(results[3]) if probed else None,
            sharpness=float(results[2]) if probed else None,
            threshold=float(results[4]) if probed else None,
            time=number / self.fps,
            keep=keep,
            keep_ratio=self.keep_ratio,
        )
        if self.jsonl:
            record = {
                "index": index,
                "frame": number,
                "time": round(number / self.fps, 6),
                "blurred": info.blurred,
                "sharpness": info.sharpness,
                "threshold": info.threshold,
                "encoded_bytes": int(encoded.size),
                "score": np.asarray(score, np.float32).tolist(),
            }
            self.jsonl.write(json.dumps(record) + "\n")
        picture: list[np.ndarray] = []

        def render() -> np.ndarray:
            if not picture:
                picture.append(overlay_picture(frame, score, info, self.block, encoded, self.side_by_side, self.scale, kept))
            return picture[0]

        if self.overlay:
            self.overlay.write_picture(render(), info)
        for recorder in self.recorders:
            recorder(index, info, score, results, render)
        if self.encoded:
            write_frame_file(self.encoded / f"frame_{number:05d}.jpg", encoded, self.protected)

    def close(self) -> None:
        try:
            if self.jsonl:
                self.jsonl.commit()
            if self.overlay:
                self.overlay.close()
        except BaseException:
            self.discard()
            raise

    def discard(self) -> None:
        if self.jsonl:
            self.jsonl.discard()
        if self.overlay:
            self.overlay.discard()


__all__ = ["JSONL_FIELDS", "VIDEO_CODECS", "Outputs", "OverlayWriter", "count_readable_frames", "overlay_kind"]
