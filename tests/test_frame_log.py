"""cortex-run's sequential frame loop and its per-frame log rows (`cortex.tools.frame_log`)."""

from __future__ import annotations

import numpy as np
import pytest

from cortex.errors import CortexError
from cortex.tools.frame_log import frame_header, frame_line, run_frames


def gated(frame: np.ndarray) -> tuple:
    """A backend with the blur gate probed: frames whose first pixel is 0 are blurred (skipped)."""
    score = np.zeros((3, 4), np.float32)
    score[2, 1] = 0.9
    score[0, 0] = 0.1
    blurred = bool(frame[0, 0, 0] == 0)
    return np.zeros(1500, np.uint8), score, 12.5, blurred, 40.0


def frames(*firsts: int) -> list[np.ndarray]:
    out = []
    for value in firsts:
        frame = np.full((4, 4, 3), 7, np.uint8)
        frame[0, 0, 0] = value
        out.append(frame)
    return out


def test_skipped_counts_only_the_frames_the_gate_blurred():
    count, seconds, skipped = run_frames(gated, frames(0, 5, 0, 9), 4, probed=True)
    assert (count, skipped) == (4, 2) and seconds >= 0.0
    assert run_frames(gated, frames(0, 5), 2, probed=False)[2] == 0  # no gate probed: none skipped


def test_frame_line_names_the_best_block_and_the_gate_verdict():
    blurred = frame_line(3, gated(frames(0)[0]), probed=True).split()
    sharp = frame_line(4, gated(frames(5)[0]), probed=True).split()
    assert blurred[:5] == ["3", "12.5", "40.0", "BLURRED", f"{np.float32(1.0) / 12:.3f}"]
    assert sharp[3] == "scored"
    assert "(2, 1)" in frame_line(4, gated(frames(5)[0]), probed=True)  # the max block, (row, col)
    assert sharp[-1] == "1.5"  # jpeg kB
    assert frame_line(0, gated(frames(5)[0]), probed=False).split()[1] == blurred[4]
    assert frame_header(True).split()[:2] == ["frame", "sharpness"] and "sharpness" not in frame_header(False)


def test_logged_rows_follow_the_header(capsys):
    run_frames(gated, frames(0, 5), 2, probed=True, log=True)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[0] == "frame" and [line.split()[0] for line in lines[2:]] == ["0", "1"]
    assert [line.split()[3] for line in lines[2:]] == ["BLURRED", "scored"]


def test_a_backend_error_names_its_frame():
    def failing(frame):
        if frame[0, 0, 0] == 9:
            raise CortexError("bad input")
        return gated(frame)

    with pytest.raises(CortexError, match=r"^frame 2: bad input"):
        run_frames(failing, frames(5, 5, 9), 3, probed=True)
