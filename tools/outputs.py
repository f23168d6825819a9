"""cortex-run's per-frame outputs: scores as JSONL, overlay pictures (PNGs or a video), encoded JPEGs.

Every file is written atomically (`cortex.tools.atomic`): a JPEG or PNG
appears whole, the JSONL and an overlay video appear when the run has
finished (renamed from a temporary sibling), and a failed write raises
`OutputError` naming the file, leaving nothing half-written behind. An
overlay video is read back after writing: if OpenCV cannot read every
frame that was written, or a sampled frame (the first, the last, a few
between) decodes to other pictures than were written, that is a failed
write too (a full disk can cut a frame's bytes and keep the count).

Per-frame files go into their folder through `atomic.FrameFolder` (a
symlink there is refused, not followed). A reused folder's files named as
this tool names them (frame_NNNNN.jpg / .png) that the run did not write
are removed when the run ends, and a note says so: the folder then holds
exactly this run's frames, and a file named otherwise is never touched.

Outputs are committed only once a frame was written: a run that ends
before its first frame (an error, a signal, a source that gives none)
leaves no empty JSONL, and the folders it made for its outputs are removed
again while they are empty (a folder that was there before is left).
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import cv2
import numpy as np

from cortex.semantics.vision_kernels import low_score_mask
from cortex.tools.atomic import (
    AtomicFile,
    FrameFolder,
    OutputError,
    check_distinct,
    commit_file,
    identity,
    remove_quietly,
    temporary_path,
)
from cortex.video.overlay import FrameInfo, overlay_picture

VIDEO_CODECS = {".mp4": "mp4v", ".avi": "MJPG", ".mkv": "mp4v"}
"""Overlay container → FourCC: MPEG-4 Part 2 in .mp4/.mkv (what OpenCV's FFmpeg writes everywhere,
~5 ms and ~16 kB a 576×768 frame), Motion-JPEG in .avi (every player reads it)."""

JSONL_FIELDS = {
    "index": "frame number in this run (0 = the first frame processed, after --start)",
    "frame": "the source frame number (0 = the video's first frame; counts frames skipped by --start)",
    "mode": "the pipeline mode that ran the frame (with --mode auto or --mode-schedule it can change per frame)",
    "time": "the frame's timestamp in seconds from the video's start (frame / the container's frames per second)",
    "blurred": "true when the blur gate skipped scoring (the score is the previous frame's); null without a gate",
    "sharpness": "variance of the Laplacian of the gray frame (higher = sharper); null without a gate",
    "threshold": "the gate's threshold this frame: blurred = sharpness < threshold; null without a gate",
    "encoded_bytes": "size of the encoder's JPEG of the frame, in bytes",
    "score": "the score map: rows x columns of blocks (block row r covers pixel rows r*block .. r*block+block-1), "
    "each in [0, 1]",
    "dropped": "(a live source only) frames dropped at arrival since the previous row (--max-latency); "
    "the summary counts those after the last row too",
    "latency_ms": "(a live source only) milliseconds from the frame's arrival to this row being formed",
}
"""The fields of a --scores-jsonl record (one JSON object per line, one line per frame)."""

STDOUT = "-"
"""`--scores-jsonl -`: the rows go to standard output, one line each, flushed as it is written."""


READ_BACK_PSNR = 22.0
"""dB: a sampled frame of the overlay video must decode at least this close to the picture written.
Measured worst sampled frame: 30.7-36.9 dB (MJPG and mp4v, opencv-doc's tree/Megamind/vtest clips and
the synthetic video at 480x640 and 1088x1920 side by side); a frame whose bytes never landed decodes
far below (a black frame: about 11 dB). The margin is wide because a false alarm loses the whole video."""
READ_BACK_SAMPLES = 8
"""Pictures of the overlay video kept to compare after writing (always the first and the last)."""


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
        self.samples: dict[int, np.ndarray] = {}  # frame position in the video → the picture written
        self.stride = 1
        self.written: set[str] = set()  # the PNGs this run wrote (a directory)
        self.made = make_directory(self.dest.parent if self.kind == "video" else self.dest)
        self.folder = FrameFolder(self.dest) if self.kind == "directory" else None

    def write(self, frame: np.ndarray, score: np.ndarray, info: FrameInfo, encoded: np.ndarray | None = None,
              kept: np.ndarray | None = None) -> None:
        """One picture; PNGs are named by the source frame number (`info.index`)."""
        self.write_picture(
            overlay_picture(frame, score, info, self.block, encoded, self.side_by_side, self.scale, kept), info
        )

    def write_picture(self, image: np.ndarray, info: FrameInfo) -> None:
        if self.folder is not None:
            name = f"frame_{info.index:05d}.png"
            ok, png = cv2.imencode(".png", image)
            if not ok:
                raise OutputError(f"cannot write {self.dest / name}: PNG encoding failed")
            self.folder.write(name, png.tobytes(), self.protected)
            self.written.add(name)
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
            self.sample(image)
        self.count += 1

    def sample(self, image: np.ndarray) -> None:
        """Keep pictures spread over the video (every `stride`-th; the stride doubles as they pile up),
        and always the latest, to compare with what the video decodes to."""
        last = self.count - 1
        if last in self.samples and last % self.stride:
            del self.samples[last]  # the previous "latest", not on the stride
        self.samples[self.count] = sampled(image)
        if len(self.samples) > 2 * READ_BACK_SAMPLES:
            self.stride *= 2
            self.samples = {k: v for k, v in self.samples.items() if k % self.stride == 0 or k == self.count}

    def close(self) -> None:
        """Finish the video, check it reads back whole, and rename it into place."""
        if self.video is None or self.temporary is None:
            return
        self.video.release()
        self.video = None
        readable, worst = read_back(self.temporary, self.size, self.samples)
        if readable != self.count:
            remove_quietly(self.temporary)
            raise OutputError(
                f"cannot write {self.dest}: the video written reads back {readable} of {self.count} frames "
                "(disk full?)"
            )
        if worst is not None and worst[1] < READ_BACK_PSNR:
            remove_quietly(self.temporary)
            raise OutputError(
                f"cannot write {self.dest}: frame {worst[0]} of the video written reads back as another picture "
                f"(PSNR {worst[1]:.1f} dB < {READ_BACK_PSNR:g}; disk full?)"
            )
        commit_file(self.temporary, self.dest)

    def discard(self) -> None:
        if self.video is not None:
            self.video.release()
            self.video = None
        if self.temporary is not None:
            remove_quietly(self.temporary)
        if self.folder is not None:
            self.folder.close()


def make_directory(path: Path) -> list[Path]:
    """`path` is a directory afterwards (made with its parents), or an OutputError says why not.
    Returns the directories it made, outermost first (`remove_if_empty` takes them back)."""
    if path.exists() and not path.is_dir():
        raise OutputError(f"cannot write {path}: it exists and is not a directory (PNGs and JPEGs go into a directory)")
    made = []
    missing = path
    while not os.path.lexists(missing) and missing != missing.parent:
        made.append(missing)
        missing = missing.parent
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot write {path}: {e.strerror or e}") from None
    return made[::-1]


def remove_if_empty(made: list[Path]) -> None:
    """Remove the directories `make_directory` made, innermost first, each only while it is empty."""
    for directory in reversed(made):
        try:
            os.rmdir(directory)
        except OSError:
            continue  # not empty (or gone): it stays, and so does a folder around it


def remove_stale_frames(folder: Path, written: set[str], suffix: str) -> int:
    """Remove `folder`'s regular files named frame_NNNNN`suffix` (this tool's naming) not in `written`."""
    pattern = re.compile(r"frame_\d{5,}" + re.escape(suffix))
    removed = 0
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    for name in names:
        if name in written or not pattern.fullmatch(name):
            continue
        path = folder / name
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                path.unlink()
                removed += 1
        except OSError:
            pass
    return removed


def sampled(image: np.ndarray) -> np.ndarray:
    """Every 4th pixel of every 4th row: enough to tell a frame from a damaged one, 1/16 of the memory."""
    return np.ascontiguousarray(image[::4, ::4])


def read_back(path: Path, size: tuple[int, int] | None,
              samples: dict[int, np.ndarray] | None = None) -> tuple[int, tuple[int, float] | None]:
    """(frames OpenCV decodes from `path` at `size` (H, W), 0 when it cannot open it;
    the sampled frame that decodes least like the picture written, as (position, PSNR dB), or None)."""
    samples = samples or {}
    worst: tuple[int, float] | None = None
    capture = cv2.VideoCapture(str(path))
    try:
        if not capture.isOpened():
            return 0, worst
        count = 0
        while True:
            ok, image = capture.read()
            if not ok:
                return count, worst
            if size is not None and image.shape[:2] != size:
                return count, worst
            if count in samples:
                psnr = float(cv2.PSNR(sampled(image), samples[count]))
                if worst is None or psnr < worst[1]:
                    worst = (count, psnr)
            count += 1
    finally:
        capture.release()


def count_readable_frames(path: Path, size: tuple[int, int] | None) -> int:
    """Frames OpenCV decodes from `path` at `size` (H, W); 0 when it cannot open it."""
    return read_back(path, size)[0]


def check_output_paths(scores_jsonl: str | None, overlay: str | None, encoded: str | None,
                       inputs: tuple[tuple[str, str | None], ...] = (),
                       others: tuple[tuple[str, str | None], ...] = ()) -> None:
    """The checks `Outputs` makes of its paths (distinct, none an input, folders where folders go), alone:
    cortex-run makes them before it compiles, so a wrong path is refused at once, not after the compile."""
    folders = {"--encoded"} | ({"--overlay"} if overlay and overlay_kind(overlay) == "directory" else set())
    scores_jsonl = None if scores_jsonl == STDOUT else scores_jsonl  # standard output destroys no file
    check_distinct(
        [("--scores-jsonl", scores_jsonl), ("--overlay", overlay), ("--encoded", encoded), *others], inputs, folders,
    )


class StreamRows:
    """JSONL rows into a text stream (standard output), flushed per row: `cortex-run … --scores-jsonl - | jq`.

    A stream has no "whole or absent": each row is one write of a whole line.
    A reader that has gone (a closed pipe) raises BrokenPipeError, as any write to standard output does.
    """

    def __init__(self, stream) -> None:
        self.stream = stream

    def write(self, line: str) -> None:
        self.stream.write(line)
        self.stream.flush()

    def commit(self) -> None:
        try:
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            pass

    def discard(self) -> None:
        self.commit()  # the rows written are out already


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
                 inputs: tuple[tuple[str, str | None], ...] = (), others: tuple[tuple[str, str | None], ...] = (),
                 rows_stream=None):
        """`scores_jsonl` "-" (`STDOUT`): the rows go to `rows_stream` (default: sys.stdout), flushed per row.
        `keep_ratio`: the pipeline's encoder threshold (blocks scoring >= it x the frame's max stay sharp);
        the overlay outlines those blocks and marks the cut on the colour bar. None: no encoder, no outline.
        `inputs`: (name, path) of the files the run reads; no output may be one of them (see the class doc);
        `others`: the run's other outputs (--summary-json, --report), checked against all of these too."""
        to_stdout = scores_jsonl == STDOUT
        check_output_paths(None if to_stdout else scores_jsonl, overlay, encoded, inputs, others)
        self.protected = {identity(path) for _, path in inputs if path}
        self.jsonl: AtomicFile | StreamRows | None = None
        if to_stdout:
            self.jsonl = StreamRows(rows_stream or sys.stdout)
        elif scores_jsonl:
            self.jsonl = AtomicFile(scores_jsonl)
        self.overlay = None
        self.encoded = Path(encoded) if encoded else None
        self.encoded_folder: FrameFolder | None = None
        self.encoded_written: set[str] = set()
        self.made: list[Path] = []  # the folders this run made for its outputs, outermost first
        self.frames = 0  # frames written whole: with none, close() commits nothing
        self.notes: list[str] = []
        """What the run did beside writing (stale frame files removed), for cortex-run to print."""
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
                self.made += self.overlay.made
            if self.encoded:
                self.made += make_directory(self.encoded)
                self.encoded_folder = FrameFolder(self.encoded)
        except BaseException:
            self.discard()
            raise
        self.mode = mode

    def write(self, index: int, frame: np.ndarray, results: tuple, probed: bool, number: int | None = None,
              extra: dict | None = None) -> None:
        """Frame `index` of this run, source frame `number` (default: `index`); `extra`: more JSONL fields."""
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
                "mode": info.mode,
                "time": round(number / self.fps, 6),
                "blurred": info.blurred,
                "sharpness": info.sharpness,
                "threshold": info.threshold,
                "encoded_bytes": int(encoded.size),
                "score": np.asarray(score, np.float32).tolist(),
                **(extra or {}),
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
        if self.encoded_folder is not None:
            name = f"frame_{number:05d}.jpg"
            self.encoded_folder.write(name, np.asarray(encoded, np.uint8).tobytes(), self.protected)
            self.encoded_written.add(name)
        self.frames += 1

    def close(self, finished: bool = True) -> None:
        """Commit what was written; `finished` (the run ended normally): also remove the stale frame files.
        Before any frame was written there is nothing to commit: the outputs are discarded."""
        if not self.frames:
            self.discard()
            return
        try:
            if self.jsonl:
                self.jsonl.commit()
            if self.overlay:
                self.overlay.close()
        except BaseException:
            self.discard()
            raise
        if finished:
            folders = [(self.encoded, self.encoded_written, ".jpg")]
            if self.overlay and self.overlay.folder is not None:
                folders.append((self.overlay.dest, self.overlay.written, ".png"))
            for folder, written, suffix in folders:
                if folder is not None and (removed := remove_stale_frames(folder, written, suffix)):
                    self.notes.append(
                        f"removed {removed} frame_NNNNN{suffix} file(s) from {folder} that this run did not write "
                        "(an earlier run's)"
                    )
        self.release()

    def release(self) -> None:
        if self.encoded_folder is not None:
            self.encoded_folder.close()
        if self.overlay and self.overlay.folder is not None:
            self.overlay.folder.close()

    def discard(self) -> None:
        if self.jsonl:
            self.jsonl.discard()
        if self.overlay:
            self.overlay.discard()
        self.release()
        remove_if_empty(self.made)


__all__ = [
    "JSONL_FIELDS", "VIDEO_CODECS", "Outputs", "OverlayWriter", "count_readable_frames", "overlay_kind", "read_back",
]
