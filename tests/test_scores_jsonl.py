"""--scores-jsonl rows as `Outputs` writes them: every documented field, a live run's extra fields, and
`--scores-jsonl -` (rows on standard output, each flushed as it is written)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest

from cortex.errors import CortexError
from cortex.tools.outputs import JSONL_FIELDS, STDOUT, Outputs, check_output_paths

LIVE_ONLY = {"dropped", "latency_ms"}


def results(blurred: bool) -> tuple:
    score = np.array([[0.25, 0.5], [1.0, 0.0]], np.float32)
    return np.zeros(321, np.uint8), score, 17.5, blurred, 30.0


def frame() -> np.ndarray:
    return np.zeros((16, 16, 3), np.uint8)


def test_a_row_holds_every_documented_field(tmp_path):
    path = tmp_path / "s.jsonl"
    out = Outputs(scores_jsonl=str(path), fps=10.0, mode="fast")
    out.write(0, frame(), results(True), probed=True, number=5)
    out.close()
    row = json.loads(path.read_text())
    assert set(row) == set(JSONL_FIELDS) - LIVE_ONLY
    assert (row["index"], row["frame"], row["mode"], row["time"]) == (0, 5, "fast", 0.5)
    assert (row["blurred"], row["sharpness"], row["threshold"], row["encoded_bytes"]) == (True, 17.5, 30.0, 321)
    assert row["score"] == [[0.25, 0.5], [1.0, 0.0]]


def test_a_live_row_carries_its_extra_fields(tmp_path):
    path = tmp_path / "s.jsonl"
    out = Outputs(scores_jsonl=str(path), mode="full")
    out.write(0, frame(), results(False), probed=True, extra={"dropped": 2, "latency_ms": 4.5})
    out.close()
    row = json.loads(path.read_text())
    assert set(row) == set(JSONL_FIELDS) and (row["dropped"], row["latency_ms"]) == (2, 4.5)


class Recording(io.StringIO):
    """A text stream that records what had been flushed when each flush came."""

    def __init__(self) -> None:
        super().__init__()
        self.flushed: list[str] = []

    def flush(self) -> None:
        super().flush()
        self.flushed.append(self.getvalue())


def test_rows_to_standard_output_are_flushed_one_by_one():
    stream = Recording()
    out = Outputs(scores_jsonl=STDOUT, mode="full", rows_stream=stream)
    out.write(0, frame(), results(False), probed=True)
    assert json.loads(stream.flushed[-1])["index"] == 0  # out before the next frame is run
    out.write(1, frame(), results(False), probed=True)
    assert [json.loads(line)["index"] for line in stream.flushed[-1].splitlines()] == [0, 1]
    out.close()


def test_standard_output_is_not_a_path_to_check(tmp_path, monkeypatch):
    """`cortex-run - --scores-jsonl -`: frames from standard input, rows to standard output; neither names a file."""
    monkeypatch.chdir(tmp_path)
    check_output_paths(STDOUT, None, None, (("video", "-"),))
    (tmp_path / "clip.avi").write_bytes(b"")
    with pytest.raises(CortexError):  # a real path is still checked against the inputs
        check_output_paths("clip.avi", None, None, (("video", "clip.avi"),))
