"""What `cortex-run` prints and writes besides running the pipeline.

- `dce_summary`: the line saying what the mode's dead-node elimination saves;
- `progress_bar`: tqdm's bar over frames on stderr (only on a terminal unless asked).

The overlay pictures are `cortex.video.overlay`; the files `cortex.tools.outputs`.

Kept apart from the CLI so benchmarks and tests can use the same pieces. The per-stage times and their
table are the runners' (`cortex.frame_runners.StageTimes`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import TextIO

from tqdm import tqdm


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
