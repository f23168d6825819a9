"""What `cortex-run` prints and writes besides running the pipeline.

- `StageTimes`: per-stage wall time accumulated over frames, and the table
  (ms per frame, compilable/external, share of the frame) printed at the end;
- `ProgressBar`: a plain-text `\\r` bar on stderr, silent when not a TTY;
- `heat_overlay` / `OverlayWriter`: the score map as a heat map over the frame,
  written as PNG frames into a directory or as one `.mp4`/`.avi` video.

Kept apart from the CLI so benchmarks and tests can use the same pieces.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import cv2
import numpy as np

VIDEO_SUFFIXES = {".mp4": "mp4v", ".avi": "MJPG"}


def stage_name(name: str) -> str:
    """`cortex.saliency_dft` → `saliency_dft`; other names unchanged."""
    return name.removeprefix("cortex.")


@dataclass
class Stage:
    name: str
    kind: str
    seconds: float = 0.0
    calls: int | None = 0
    """Executions counted, or None when the timer only reports totals (NumPy profile)."""


@dataclass
class StageTimes:
    """Seconds spent per stage, summed over the frames that ran."""

    stages: dict[str, Stage] = field(default_factory=dict)

    def add(self, name: str, kind: str, seconds: float, calls: int | None = 1) -> None:
        stage = self.stages.get(name)
        if stage is None:
            stage = self.stages[name] = Stage(name, kind)
        stage.seconds += seconds
        stage.calls = None if calls is None or stage.calls is None else stage.calls + calls

    def ms_per_frame(self, frames: int) -> dict[str, float]:
        return {s.name: 1e3 * s.seconds / max(frames, 1) for s in self.stages.values()}

    def table(self, frames: int, frame_seconds: float | None = None, title: str = "per-stage time") -> str:
        """Rows in first-run order; the share is of the whole measured frame time when given.

        A "runs" column appears when the timer counted executions (the
        reference interpreter does; the compiled profile keeps totals only).
        """
        rows = list(self.stages.values())
        staged = sum(s.seconds for s in rows)
        total = frame_seconds if frame_seconds and frame_seconds >= staged else staged
        width = max([len("stage")] + [len(s.name) for s in rows])
        counted = any(s.calls is not None for s in rows)

        def line(name: str, kind: str, runs: str, seconds: float) -> str:
            runs_cell = f"  {runs:>5}" if counted else ""
            return f"  {name:<{width}}  {kind:<10}{runs_cell}  {1e3 * seconds / max(frames, 1):>9.3f}  {_share(seconds, total):>6}"

        lines = [f"{title} ({frames} frame{'s' if frames != 1 else ''})"]
        lines.append(f"  {'stage':<{width}}  {'kind':<10}" + (f"  {'runs':>5}" if counted else "") + f"  {'ms/frame':>9}  {'share':>6}")
        for s in rows:
            lines.append(line(s.name, s.kind, "-" if s.calls is None else str(s.calls), s.seconds))
        by_kind: dict[str, float] = {}
        for s in rows:
            by_kind[s.kind] = by_kind.get(s.kind, 0.0) + s.seconds
        for kind, seconds in by_kind.items():
            lines.append(line("all " + kind, "", "", seconds))
        if total > staged:
            lines.append(line("(between stages)", "", "", total - staged))
        lines.append(line("frame", "", "", total))
        return "\n".join(lines)


def _share(part: float, total: float) -> str:
    return f"{100.0 * part / total:5.1f}%" if total > 0 else "     -"


def dce_summary(mode: str, removed: Iterable[str], ms_per_frame: dict[str, float], frame_ms: float | None) -> str:
    """One line: which stages the mode's dead-node elimination removes and what they cost."""
    removed = list(removed)
    if not removed:
        return f"mode {mode}: dead-node elimination removes no stage"
    known = [ms_per_frame[n] for n in removed if n in ms_per_frame]
    costs = ", ".join(f"{n} {ms_per_frame[n]:.2f} ms" if n in ms_per_frame else f"{n} (not timed)" for n in removed)
    saved = sum(known)
    share = f" ({100.0 * saved / frame_ms:.1f}% of the unspecialised frame)" if frame_ms else ""
    return f"mode {mode}: dead-node elimination removes {costs}: saves ~{saved:.2f} ms/frame{share}"


class ProgressBar:
    """`\\r[#####.....] 12/60 frames  23.4 fps` on stderr, redrawn at most 10 times a second."""

    def __init__(self, total: int | None, stream: TextIO | None = None, enabled: bool | None = None, width: int = 30):
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total, self.width, self.done = total, width, 0
        self.start = self.last_draw = time.perf_counter()

    def update(self, done: int) -> None:
        self.done = done
        now = time.perf_counter()
        if self.enabled and (now - self.last_draw >= 0.1 or done == self.total):
            self.last_draw = now
            self.stream.write("\r" + self.render(now))
            self.stream.flush()

    def render(self, now: float | None = None) -> str:
        elapsed = (now or time.perf_counter()) - self.start
        fps = self.done / elapsed if elapsed > 0 else 0.0
        if self.total:
            filled = int(self.width * min(self.done, self.total) / self.total)
            bar = "#" * filled + "." * (self.width - filled)
            return f"[{bar}] {self.done}/{self.total} frames {fps:6.1f} fps"
        return f"{self.done} frames {fps:6.1f} fps"

    def clear(self) -> None:
        """Erase the bar's line, so that a line printed next starts clean (the bar redraws after)."""
        if self.enabled and self.done:
            self.stream.write("\r\033[K")
            self.last_draw = 0.0

    def close(self) -> None:
        if self.enabled:
            self.stream.write("\n")
            self.stream.flush()


def heat_overlay(frame: np.ndarray, score: np.ndarray, block: int | None = None, alpha: float = 0.45) -> np.ndarray:
    """The score map, scaled to [0, max] and upsampled to the frame, blended as a JET heat map.

    The map may cover a padded frame (a whole number of `block`s larger than
    `frame`): it is upsampled to the padded size and cropped back, so each
    cell lands on the pixels it scored. Without `block`, the frame must be
    a whole number of cells.
    """
    h, w = frame.shape[:2]
    grid_h, grid_w = score.shape
    if block is None:
        if h % grid_h or w % grid_w or h // grid_h != w // grid_w:
            raise ValueError(f"a {grid_h}x{grid_w} score map does not tile a {h}x{w} frame; give the block size")
        block = h // grid_h
    peak = float(np.max(score)) if score.size else 0.0
    levels = np.clip(score / peak, 0.0, 1.0) if peak > 0 else np.zeros_like(score)
    heat = cv2.resize((levels * 255).astype(np.uint8), (grid_w * block, grid_h * block), interpolation=cv2.INTER_LINEAR)
    colored = cv2.applyColorMap(heat[:h, :w], cv2.COLORMAP_JET)
    return cv2.addWeighted(frame, 1.0 - alpha, colored, alpha, 0.0)


class OverlayWriter:
    """Heat-map frames into `dest`: a directory of PNGs, or a video when it ends in .mp4/.avi."""

    def __init__(self, dest: str | Path, fps: float = 25.0, block: int | None = None):
        self.dest = Path(dest)
        self.block = block
        self.fps = fps if fps and fps > 0 else 25.0
        self.video: cv2.VideoWriter | None = None
        self.count = 0
        if self.dest.suffix.lower() in VIDEO_SUFFIXES:
            self.dest.parent.mkdir(parents=True, exist_ok=True)
        else:
            self.dest.mkdir(parents=True, exist_ok=True)

    def write(self, frame: np.ndarray, score: np.ndarray) -> None:
        image = heat_overlay(frame, score, self.block)
        suffix = self.dest.suffix.lower()
        if suffix in VIDEO_SUFFIXES:
            if self.video is None:
                h, w = image.shape[:2]
                self.video = cv2.VideoWriter(str(self.dest), cv2.VideoWriter_fourcc(*VIDEO_SUFFIXES[suffix]), self.fps, (w, h))
                if not self.video.isOpened():
                    raise OSError(f"cannot open {self.dest} for writing a video")
            self.video.write(image)
        elif not cv2.imwrite(str(self.dest / f"frame_{self.count:05d}.png"), image):
            raise OSError(f"cannot write {self.dest / f'frame_{self.count:05d}.png'}")
        self.count += 1

    def close(self) -> None:
        if self.video is not None:
            self.video.release()
            self.video = None
