"""What `cortex-run` prints and writes besides running the pipeline.

- `StageTimes`: per-stage wall time accumulated over frames, and the table
  (ms per frame, compilable/external, share of the frame) printed at the end;
- `progress_bar`: tqdm's bar over frames on stderr (only on a terminal unless asked).

The overlay pictures are `cortex.video.overlay`; the files `cortex.tools.outputs`.

Kept apart from the CLI so benchmarks and tests can use the same pieces.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TextIO

from tqdm import tqdm


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


def progress_bar(total: int | None, enabled: bool | None = None, stream: TextIO | None = None) -> tqdm:
    """A tqdm bar over frames on stderr: `enabled` None draws it only when stderr is a terminal.

    Print per-frame lines with `bar.write(...)` so they do not tear the bar. The rate shown is the
    average since the first frame (`smoothing=0`), the summary's "frame loop" rate, not a recent burst.
    """
    stream = stream or sys.stderr
    disable = (not stream.isatty()) if enabled is None else not enabled
    return tqdm(total=total, unit="frame", file=stream, disable=disable, dynamic_ncols=True, mininterval=0.1,
                smoothing=0)
