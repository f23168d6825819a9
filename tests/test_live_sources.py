"""Live sources without a process: raw frames on a stream, the latency histogram, the admission model,
the reader thread's bounded queue, and the arguments a live source takes or refuses.

The end-to-end runs with a real ffmpeg (a pipe, a loopback HTTP stream, drops, signals) are in
tests/test_live_ffmpeg.py.
"""

from __future__ import annotations

import io
import json
import re
import threading

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.errors import CortexError
from cortex.tools.cortex_run import main
from cortex.tools.live_run import (
    Arrival,
    FrameGate,
    LatencyHistogram,
    LatencyModel,
    LiveStats,
    queue_capacity,
    run_live,
)
from cortex.video.live import LiveSource, RawPipeSource, is_live, open_live

SIZE = (24, 40)


def frames_bytes(count: int, channels: int = 3, seed: int = 0) -> tuple[list[np.ndarray], bytes]:
    rng = np.random.default_rng(seed)
    frames = [rng.integers(0, 256, (*SIZE, channels), np.uint8) if channels > 1 else rng.integers(0, 256, SIZE, np.uint8)
              for _ in range(count)]
    return frames, b"".join(f.tobytes() for f in frames)


# ----------------------------------------------------------------------- sources


@pytest.mark.parametrize("name, live", [
    ("-", True), ("http://127.0.0.1:8080/cam", True), ("rtsp://127.0.0.1/stream", True), ("udp://127.0.0.1:1234", True),
    ("file:///tmp/clip.mp4", False), ("clip.mp4", False), (None, False), ("/dev/null", True),
])
def test_what_is_read_as_live(name, live):
    assert is_live(name) is live


@pytest.mark.parametrize("pix_fmt, channels, to_bgr", [
    ("bgr24", 3, None), ("rgb24", 3, cv2.COLOR_RGB2BGR), ("gray", 1, cv2.COLOR_GRAY2BGR),
])
def test_raw_frames_come_out_bgr_at_their_size_with_their_numbers(pix_fmt, channels, to_bgr):
    frames, data = frames_bytes(3, channels)
    source = RawPipeSource(io.BytesIO(data), SIZE, pix_fmt, 30.0)
    got = list(source.numbered())
    assert [n for n, _ in got] == [0, 1, 2]
    for (_, frame), sent in zip(got, frames, strict=True):
        bgr = sent if to_bgr is None else cv2.cvtColor(sent, to_bgr)
        assert frame.shape == (24, 40, 3)  # as sent: the pipeline pads in IR (cortex.pad_frame)
        np.testing.assert_array_equal(frame, bgr)
    assert source.warnings() == [] and source.frame_count is None


def test_a_truncated_last_frame_is_dropped_with_a_warning_and_the_whole_frames_kept():
    frames, data = frames_bytes(3)
    source = RawPipeSource(io.BytesIO(data + frames[0].tobytes()[:1000]), SIZE, "bgr24", 25.0)
    got = [frame for _, frame in source.numbered()]
    assert len(got) == 3
    np.testing.assert_array_equal(got[2], frames[2])
    (warning,) = source.warnings()
    assert "ended inside frame 3: 1000 of its 2880 bytes (24x40 bgr24)" in warning
    assert "the 3 whole frames were kept" in warning


def test_a_live_source_is_read_once():
    _, data = frames_bytes(2)
    source = RawPipeSource(io.BytesIO(data), SIZE, "bgr24", 25.0)
    assert len(list(source)) == 2
    with pytest.raises(CortexError, match="a live source is read once"):
        list(source)


def test_start_and_frames_count_the_frames_read():
    _, data = frames_bytes(6)
    source = open_live("-", size=SIZE, frames=2, start=3, stream=io.BytesIO(data))
    assert [n for n, _ in source.numbered()] == [3, 4]


@pytest.mark.parametrize("kwargs, message", [
    ({"size": None}, "needs --size HxW"),
    ({"pix_fmt": "yuv420p"}, "--pix-fmt must be one of bgr24, rgb24, gray"),
    ({"fps": 0.0}, "--fps must be > 0"),
])
def test_a_pipe_without_what_it_needs_is_refused(kwargs, message):
    options = {"size": SIZE, "pix_fmt": "bgr24", "fps": 25.0, **kwargs}
    with pytest.raises(CortexError, match=message):
        open_live("-", stream=io.BytesIO(b""), **options)


def test_a_stream_that_cannot_be_opened_names_it():
    with pytest.raises(CortexError, match=r"rtsp://127\.0\.0\.1:9/none: OpenCV cannot open this stream|no frame could be read"):
        open_live("rtsp://127.0.0.1:9/none")


# ----------------------------------------------------------------------- the latency histogram


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(1e-5, 50.0), min_size=1, max_size=300), st.sampled_from([50, 95, 99]))
def test_histogram_percentiles_are_within_two_percent_of_the_exact_ones(latencies, q):
    histogram = LatencyHistogram()
    for value in latencies:
        histogram.add(value)
    exact = float(np.percentile(latencies, q, method="inverted_cdf"))
    got = histogram.percentile(q)
    assert got is not None and exact <= got * (1 + 1e-9) and got <= exact * LatencyHistogram.STEP * (1 + 1e-9)
    assert histogram.max == max(latencies)


def test_an_empty_histogram_has_no_percentile():
    assert LatencyHistogram().percentile(99) is None


@pytest.mark.parametrize("latency", [0.0123, 0.5, 3.7])
def test_no_percentile_is_above_the_largest_latency(latency):
    """One latency is the whole distribution: every percentile is that latency, never its bucket's upper
    edge (the summary would print a p50 above the max)."""
    histogram = LatencyHistogram()
    histogram.add(latency)
    assert [histogram.percentile(q) for q in (50, 95, 99)] == [latency] * 3 == [histogram.max] * 3


# ----------------------------------------------------------------------- admission


def arrival(taken: float) -> Arrival:
    return Arrival(0, np.zeros((1, 1, 3), np.uint8), taken, 0, taken)


def test_the_model_measures_service_from_the_later_of_taking_and_the_previous_row():
    model = LatencyModel()
    model.written(arrival(taken=0.5), now=1.0)  # the first frame, cold: not counted
    assert model.service is None and model.predicted(1) == float("inf")
    model.written(arrival(taken=1.0), now=1.05)  # alone: 50 ms
    assert model.service == pytest.approx(0.05)
    model.written(arrival(taken=1.01), now=1.10)  # taken before the previous row: the interval between rows
    assert model.service == pytest.approx(0.05)
    model.written(arrival(taken=1.20), now=1.23)  # taken after it: its own 30 ms
    assert sorted(model.recent) == pytest.approx([0.03, 0.05, 0.05])
    assert model.predicted(0) == 0.0  # nothing ahead: admitted whatever it costs
    assert model.predicted(3) == pytest.approx(4 * 0.05)  # none begun: a service each
    # the oldest began 20 ms ago (after the last row, at 1.23): 30 ms of it left, then two more and itself
    assert model.predicted(3, started=1.25, now=1.27) == pytest.approx(0.03 + 3 * 0.05)
    assert model.predicted(1, started=1.0, now=1.30) == pytest.approx(0.0 + 0.05)  # overdue: nothing left of it


def test_the_service_is_a_high_percentile_of_the_recent_frames_not_their_mean():
    model = LatencyModel()
    for k in range(41):  # 20 ms a frame, one in five takes 100 ms: the mean (36 ms) would admit late frames
        t = float(k)
        model.written(arrival(taken=t), now=t + (0.1 if k % 5 == 0 else 0.02))  # k = 0 not counted
    assert len(model.recent) == 20 and model.service == pytest.approx(0.1)
    # every service measured goes into the summary's `service_ms` (the recent 20 are only the admission's)
    assert model.measured.count == 40 and model.measured.percentile(50) == pytest.approx(0.02, rel=0.02)
    stats = LiveStats(100.0, service=model.measured)
    assert stats.to_json()["service_ms"]["max"] == pytest.approx(100.0)
    assert stats.to_json()["service_ms"]["p99"] == pytest.approx(100.0, rel=0.02)


def test_before_any_row_a_frame_behind_another_is_not_admitted():
    """A source's first frames often come in a burst: admitted on a guess, they all ran late."""
    model = LatencyModel()
    assert model.predicted(0) == 0.0 and model.predicted(1) == float("inf")


class Feed:
    """Frames handed to the reader one at a time, each when the test says (no sleeps: events)."""

    def __init__(self, count: int):
        self.count = count
        self.go = threading.Semaphore(0)
        self.read = threading.Semaphore(0)

    def __iter__(self):
        for number in range(self.count):
            self.go.acquire()
            yield number, np.full((2, 2, 3), number, np.uint8)
            self.read.release()


def test_the_gate_drops_at_arrival_what_the_budget_cannot_hold_and_counts_it():
    feed = Feed(4)
    gate = FrameGate(feed, budget=0.1, capacity=8)
    gate.model.service, gate.model.last_written = 0.04, 0.0  # measured: behind one 80 ms, two 120 ms > 100 ms
    gate.start()
    taken = []
    feed.go.release()
    feed.read.acquire()  # the reader has handled frame 0
    taken.append(gate.take(lambda: False))  # frame 0: nothing ahead, admitted
    for _ in range(3):  # frames 1..3 arrive while frame 0 runs: 1 is admitted, 2 and 3 dropped
        feed.go.release()
        feed.read.acquire()
    gate.done(taken[0], taken[0].taken + 0.04)
    taken.append(gate.take(lambda: False))
    gate.done(taken[1], taken[1].taken + 0.04)
    assert gate.take(lambda: False) is None  # the reader has ended
    assert [a.number for a in taken] == [0, 1]
    assert (gate.arrived, gate.admitted, gate.dropped, gate.dropped_at_end) == (4, 2, 2, 2)


def test_a_full_queue_drops_even_when_the_model_would_admit():
    feed = Feed(5)
    gate = FrameGate(feed, budget=10.0, capacity=2)
    gate.model.service, gate.model.last_written = 1e-6, 0.0
    gate.start()
    for _ in range(5):
        feed.go.release()
        feed.read.acquire()
    got = [gate.take(lambda: False), gate.take(lambda: False)]
    assert [a.number for a in got if a] == [0, 1] and gate.dropped == 3


def test_each_admitted_frame_counts_the_drops_since_the_one_before_it():
    feed = Feed(5)
    gate = FrameGate(feed, budget=10.0, capacity=1)  # a queue of one: a frame arriving while one waits is dropped
    gate.model.service, gate.model.last_written = 1e-6, 0.0
    gate.start()

    def arrive(count: int) -> None:
        for _ in range(count):
            feed.go.release()
            feed.read.acquire()  # the reader has handled it

    got = []
    for count in (2, 2, 1):  # 0 admitted, 1 dropped; 2 admitted, 3 dropped; 4 admitted
        arrive(count)
        got.append(gate.take(lambda: False))
    assert [(a.number, a.dropped_before) for a in got] == [(0, 0), (2, 1), (4, 1)]
    assert gate.dropped == 2


def test_without_a_budget_the_reader_waits_for_room_and_drops_nothing():
    feed = Feed(4)
    gate = FrameGate(feed, budget=None, capacity=1).start()
    for _ in range(4):
        feed.go.release()
    numbers = []
    while (a := gate.take(lambda: False)) is not None:
        numbers.append(a.number)
        gate.done(a, a.taken)
    assert numbers == [0, 1, 2, 3] and gate.dropped == 0


def test_a_stop_ends_the_input_after_the_frames_already_read():
    feed = Feed(3)
    gate = FrameGate(feed, budget=None, capacity=4).start()
    feed.go.release()
    feed.read.acquire()
    first = gate.take(lambda: True)  # stopping: the frame already queued still comes out
    assert first is not None and first.number == 0
    assert gate.take(lambda: True) is None
    feed.go.release()  # a frame read after the stop is not admitted
    gate.thread.join()
    assert gate.admitted == 1 and gate.arrived == 1


def test_queue_capacity_is_bounded_by_memory_and_count():
    assert queue_capacity(1920 * 1088 * 3, 1, 0.1) == (256 << 20) // (1920 * 1088 * 3) == 42  # 256 MB of 1080p frames
    assert queue_capacity(96 * 128 * 3, 1, 0.1) == 64
    assert queue_capacity(100 << 20, 1, 0.1) == 2
    assert queue_capacity(1000, 3, None) == 6


def test_run_live_writes_every_frame_of_a_pipe_in_order_and_reports_latency():
    frames, data = frames_bytes(5)
    source = RawPipeSource(io.BytesIO(data), SIZE, "bgr24", 25.0)
    rows: list[tuple[int, int, int]] = []

    def runs(it):
        return ((int(f[0, 0, 0]),) for f in it)

    stats = run_live(source, runs, lambda i, a, r, lat: rows.append((i, a.number, r[0])), None)
    assert rows == [(i, i, int(frames[i][0, 0, 0])) for i in range(5)]
    assert (stats.arrived, stats.rows, stats.dropped, stats.stopped_by) == (5, 5, 0, None)
    assert stats.latency.count == 5 and stats.percentiles_ms()["p99"] is not None


# ----------------------------------------------------------------------- arguments


@pytest.mark.parametrize("argv, message", [
    (["--max-latency", "100"], "--max-latency goes with a live source"),
    (["--fps", "30"], "--fps goes with a live source"),
    (["-", "--size", "96x128", "--engine", "processes"], "--engine processes runs frames in chunks"),
    (["-", "--size", "96x128", "--max-latency", "0"], "--max-latency must be > 0 ms"),
    (["http://127.0.0.1:9/x", "--pix-fmt", "gray"], "--pix-fmt goes with raw frames on standard input"),
    (["-", "more.mp4"], "a live source .* runs alone"),
    (["-", "--size", "96x128", "--out-dir", "out"], "a live source .* runs alone"),
])
def test_live_flags_out_of_place_are_refused_before_any_work(capsys, argv, message):
    assert main(argv) == 1
    assert re.search(message, capsys.readouterr().err)


def test_scores_jsonl_dash_puts_the_rows_alone_on_stdout_for_a_file_too(capsys, tmp_path):
    """Every other line (the frame log, the summary) goes to stderr; stdout is JSON, a row per frame."""
    assert main(["--size", "64x96", "--frames", "3", "--workers", "1", "--dce-frames", "0", "--quiet",
                 "--scores-jsonl", "-"]) == 0
    out, err = capsys.readouterr()
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2] and "dropped" not in rows[0]  # a file has no drops
    assert "throughput" in err and "score mean" in err


def test_a_terminal_on_standard_input_is_refused_with_how_to_pipe_frames_in(monkeypatch):
    monkeypatch.setattr("os.isatty", lambda fd: fd == 0)
    with pytest.raises(CortexError, match="standard input, which is a terminal: pipe frames in"):
        open_live("-", size=SIZE)


class ResizingCamera:
    """Stands in for `cv2.VideoCapture` of a stream whose third frame comes at another size (a camera that
    renegotiated its resolution)."""

    def __init__(self, *args):
        self.frames = [np.zeros((120, 160, 3), np.uint8), np.ones((120, 160, 3), np.uint8),
                       np.zeros((240, 320, 3), np.uint8)]

    def isOpened(self):
        return True

    def read(self):
        return (True, self.frames.pop(0)) if self.frames else (False, None)

    def get(self, prop):
        return 30.0

    def release(self):
        pass


def test_a_stream_whose_frames_change_size_stops_at_that_frame_by_number(monkeypatch):
    monkeypatch.setattr(cv2, "VideoCapture", ResizingCamera)
    source = open_live("rtsp://camera.invalid/stream")
    assert source.size == (120, 160)
    got = []
    with pytest.raises(CortexError, match="frame 2 is 240x320, the stream started at 120x160"):
        for number, frame in source.numbered():
            got.append((number, frame.shape))
    assert got == [(0, (120, 160, 3)), (1, (120, 160, 3))]


class Given(LiveSource):
    """A live source of the frames given, as a device or a network stream gives them (gray or BGR)."""

    def __init__(self, frames: list[np.ndarray]) -> None:
        self.given = iter(frames)
        super().__init__(frames[0].shape[:2], 25.0, "camera", None, 0)

    def read_frame(self) -> np.ndarray | None:
        return next(self.given, None)


def test_a_gray_stream_frame_comes_out_bgr():
    gray = np.arange(12, dtype=np.uint8).reshape(3, 4)
    (number, frame), = Given([gray]).numbered()
    assert number == 0 and frame.shape == (3, 4, 3) and all((frame[..., c] == gray).all() for c in range(3))


@pytest.mark.parametrize("later", [(3, 5, 3), (4, 4, 3)])
def test_a_stream_that_changes_its_frame_size_is_refused(later):
    frames = [np.zeros((3, 4, 3), np.uint8), np.zeros(later, np.uint8)]
    numbered = Given(frames).numbered()
    assert next(numbered)[0] == 0
    with pytest.raises(CortexError, match=rf"camera: frame 1 is {later[0]}x{later[1]}, the stream started at 3x4"):
        next(numbered)
