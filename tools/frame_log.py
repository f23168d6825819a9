"""cortex-run's sequential frame loop and its per-frame log (the table `--no-frame-log` drops).

The frame-parallel runner (`parallel_run.ParallelRunner.run_frames`) and the live loop
(`live_run`) print the same rows with `frame_header` and `frame_line`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable

import numpy as np

from cortex.errors import CortexError
from cortex.tools.outputs import Outputs
from cortex.tools.report import progress_bar


def run_frames(backend, frames: Iterable[np.ndarray], total: int | None,
               outputs: Outputs | None = None, probed: bool = False, progress: bool | None = False,
               log: bool = False) -> tuple[int, float, int]:
    """`frames` through `backend`; returns (frames, seconds inside the backend, frames the blur gate skipped).

    With `log`, a header and one row per frame on stdout (see `frame_line`);
    `progress`: True/False, or None for a bar only when stderr is a terminal.
    """
    bar = progress_bar(total, progress)
    count, seconds, skipped = 0, 0.0, 0
    try:
        if log:
            bar.write(frame_header(probed), file=sys.stdout)
        for frame in frames:
            start = time.perf_counter()
            try:
                results = backend(frame)
            except CortexError as e:  # as run_video says it: the frame's number first
                if str(e).startswith(f"frame {count}:"):
                    raise
                raise CortexError(f"frame {count}: {e}") from e
            seconds += time.perf_counter() - start
            if probed and results[3]:
                skipped += 1
            if outputs:
                outputs.write(count, frame, results, probed)
            if log:
                bar.write(frame_line(count, results, probed), file=sys.stdout)
            count += 1
            bar.update(1)
    finally:
        bar.close()
    return count, seconds, skipped


def frame_header(probed: bool) -> str:
    """The per-frame table's header: what each column is, with units."""
    gate = f"  {'sharpness':>9}  {'< gate':>8}  {'blur gate':<9}" if probed else ""
    return (
        f"{'frame':>5}{gate}  {'score mean':>10}  {'max':>5}  {'max at (row, col)':<17}  {'jpeg kB':>7}\n"
        "  (score: 0..1 per block; (row, col): the block's row and column in the score grid, see --help)"
    )


def frame_line(index: int, results: tuple, probed: bool) -> str:
    """`   12     1523.4     761.7  scored          0.284  0.712  (7, 10)              41.2`."""
    encoded, score = results[0], np.asarray(results[1])
    row, col = np.unravel_index(int(np.argmax(score)), score.shape)
    gate = ""
    if probed:
        verdict = "BLURRED" if results[3] else "scored"
        gate = f"  {float(results[2]):9.1f}  {float(results[4]):8.1f}  {verdict:<9}"
    return (
        f"{index:5d}{gate}  {float(score.mean()):10.3f}  {float(score.max()):5.3f}  "
        f"{f'({row}, {col})':<17}  {encoded.size / 1000:7.1f}"
    )


__all__ = ["frame_header", "frame_line", "run_frames"]
