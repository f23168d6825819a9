"""compiled.run_video: several frames in flight, exactly the sequential run (threads engine).

Bit-identical means: the same JPEG bytes, the same score bits and the same
final `compiled.state` as calling `compiled(frame)` frame after frame, over
60 frames with blurred frames (8, 28, 29, 48) and scene cuts (20, 40).
No timing is asserted here (see benchmarks/).
"""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest
from helpers.pipelines import L2_TEXT, SMALL, small_l2_text, with_extra_states
from helpers.scheduling import (
    FRAMES,
    MODES,
    assert_same,
    assert_same_state,
    compiled,
    delivered_before_error,
    frames_of,
    sequential,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.ir import CortexError
from cortex.runtime.threads import run_split_sequential, thread_budget
from cortex.video.synthetic import SyntheticVideo


def frame_threads():
    return [t for t in threading.enumerate() if t.name.startswith("cortex-frame")]


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_threads_equal_sequential_small(mode, workers):
    frames = frames_of(SMALL)
    a, b = compiled(small_l2_text(), mode), compiled(small_l2_text(), mode)
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=workers)), want)
    assert_same_state(b.state, a.state)
    assert not frame_threads()


@pytest.mark.slow
def test_threads_equal_sequential_480x640():
    frames = frames_of((480, 640))
    a, b = compiled(L2_TEXT), compiled(L2_TEXT)
    want = sequential(a, frames)
    assert any(bool(np.asarray(w[1]).any()) for w in want)
    assert_same(list(b.run_video(frames, workers=2)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_unspecialised_pipeline_with_runtime_weights():
    frames = frames_of(SMALL, 30)
    a, b = compiled(small_l2_text(), "motion", False), compiled(small_l2_text(), "motion", False)
    assert_same(list(b.run_video(frames, workers=2)), sequential(a, frames))
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_pipeline_with_extra_states():
    frames = frames_of(SMALL)
    a, b = compiled(with_extra_states()), compiled(with_extra_states())
    program = b.loaded_split()
    carried = {c.state for r in b.temporal_reuse for c in r.carried}  # delayed inputs too (scene change's blurs)
    assert program.recurrent == ["prev_score", "count", "mean_motion"] and carried <= set(program.delayed)
    assert [n for n in program.delayed if n not in carried] == ["prev_gray", "prev_center"]
    want = sequential(a, frames)
    assert float(np.asarray(want[-1][2])[0]) == FRAMES  # the counter counted every frame
    assert_same(list(b.run_video(frames, workers=2)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_split_sequential_equals_entry_and_continues_from_state():
    frames = frames_of(SMALL, 30)
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    want = sequential(a, frames)
    got = list(run_split_sequential(b, b.loaded_split(), frames[:10])) + list(b.run_video(frames[10:], workers=2))
    assert_same(got, want)
    assert_same_state(b.state, a.state)


@settings(max_examples=12, deadline=None)
@given(workers=st.integers(1, 4), window=st.integers(1, 6), start=st.integers(0, 40), n=st.integers(0, 12))
def test_any_workers_and_window_give_the_sequential_result(workers, window, start, n):
    frames = frames_of(SMALL, n, start)
    a, b = PIPELINES
    a.reset()
    b.reset()
    assert_same(list(b.run_video(frames, workers=workers, window=window)), sequential(a, frames))
    assert_same_state(b.state, a.state)


PIPELINES = (compiled(small_l2_text()), compiled(small_l2_text()))


def failing_text_roi(after: int):
    calls = {"n": 0}

    def text_roi(*args):
        calls["n"] += 1
        if calls["n"] > after:
            raise CortexError("'cortex.text_roi' failed: error: injected")
        return np.zeros((3, 4), np.float32)

    return text_roi


def test_first_error_stops_the_run_naming_stage_and_frame():
    b = compiled(small_l2_text())
    program = b.loaded_split()
    namespace = program.parts["parallel"].fn.__globals__
    original = namespace["_x_cortex_text_roi"]
    namespace["_x_cortex_text_roi"] = failing_text_roi(after=5)
    produced = []

    def source():
        for i, f in enumerate(frames_of(SMALL, 40)):
            produced.append(i)
            yield f

    try:
        with pytest.raises(CortexError, match=r"^frame \d+: 'cortex.text_roi' failed: error: injected"):
            for _ in b.run_video(source(), workers=2, window=4):
                pass
    finally:
        namespace["_x_cortex_text_roi"] = original
    assert len(produced) < 40  # stopped at the first error, not at the end of the video
    assert not frame_threads()


def recording_delayed(split, calls, fail_at=None):
    """`split`'s delayed part, wrapped: records (frame, thread, start, end) of each call; raises at frame `fail_at`."""
    delayed = split.parts["delayed"]
    lock = threading.Lock()

    def record(env, index):
        start = time.perf_counter()
        if index == fail_at:
            raise CortexError(f"frame {index}: injected")
        delayed(env, index)
        with lock:
            calls.append((index, threading.current_thread().name, start, time.perf_counter()))

    return delayed, record


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "window"), [(2, 4), (3, 2), (1, 3)])
def test_the_delayed_part_runs_on_the_workers_chained_in_frame_order(workers, window):
    """Frame n+1's delayed part (gray, sharpness, the gate's history push) runs on a
    worker, after frame n's has ended (the history is a leading recurrence), never on the caller —
    so the caller only reads frames and runs the recurrence; the outputs stay the sequential run's."""
    frames = frames_of(SMALL, 24)
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    split = b.loaded_split()
    calls: list = []
    delayed, split.parts["delayed"] = recording_delayed(split, calls)
    try:
        got = list(b.run_video(frames, workers=workers, window=window))
    finally:
        split.parts["delayed"] = delayed
    assert_same(got, sequential(a, frames))
    assert_same_state(b.state, a.state)
    assert [index for index, *_ in calls] == list(range(24))
    assert {name.rpartition("_")[0] for _, name, _, _ in calls} == {"cortex-frame"}  # never the caller's thread
    assert all(before[3] <= after[2] for before, after in zip(calls, calls[1:]))  # chained: n+1 starts after n ends
    assert not frame_threads()


def test_a_failing_delayed_part_stops_the_run_naming_its_frame():
    """The chain breaks at the failing frame: its error comes out, no later frame runs its delayed part
    (each waits for the one before), and no thread is left waiting."""
    b = compiled(small_l2_text())
    split = b.loaded_split()
    calls: list = []
    delayed, split.parts["delayed"] = recording_delayed(split, calls, fail_at=5)
    try:
        got = delivered_before_error(b.run_video(frames_of(SMALL, 30), workers=2, window=4), r"^frame 5: injected")
    finally:
        split.parts["delayed"] = delayed
    assert len(got) <= 5 and sorted(i for i, *_ in calls) == [0, 1, 2, 3, 4]
    assert not frame_threads()


def test_bad_frame_is_a_located_error():
    b = compiled(small_l2_text())
    frames = frames_of(SMALL, 5) + [np.zeros((10, 10, 3), np.uint8)]
    with pytest.raises(CortexError, match=r"argument #0 \(%frame\) of @l2_frame: expected a uint8 array of shape \(96, 128, 3\)"):
        list(b.run_video(frames, workers=2))
    assert not frame_threads()


def test_unknown_engine_and_bad_workers():
    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match="unknown engine 'mpi'"):
        b.run_video([], engine="mpi")
    with pytest.raises(CortexError, match="workers must be a whole number from 1 to 4096, got 0"):
        b.run_video([], workers=0)


def test_interrupt_and_early_stop_leave_no_threads():
    b = compiled(small_l2_text())

    def interrupted():
        yield from frames_of(SMALL, 6)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        list(b.run_video(interrupted(), workers=2))
    assert not frame_threads()
    run = b.run_video(frames_of(SMALL, 20), workers=2)
    next(run)
    run.close()
    assert not frame_threads()


@pytest.mark.slow
@pytest.mark.parametrize(("window", "n"), [(4, 200), (1, 30), (3, 30)])
def test_memory_is_bounded_by_the_window(window, n):
    """A long synthetic run: at most `window` frames in flight, counted exactly with an instrumented source.

    When the caller gets frame k, frames k..k+window-1 may have been read, so
    `read - (k + 1)` peaks at exactly window - 1 (the first output waits for a
    full window). The bound used to be `<= window`, one too loose,
    and a loop reading one frame more than the window passed it."""
    b = compiled(small_l2_text())
    video = SyntheticVideo(*SMALL)
    read = {"n": 0}
    ahead = []

    def source():
        for i in range(n):
            read["n"] += 1
            yield video.frame(i % 60)

    for k, _ in enumerate(b.run_video(source(), workers=2, window=window)):
        ahead.append(read["n"] - (k + 1))
    assert len(ahead) == n and max(ahead) == window - 1 and ahead[0] == window - 1


def test_thread_budget_sets_and_restores_opencv_threads():
    import cv2

    before = cv2.getNumThreads()
    with thread_budget(workers=2, cores=4) as per_worker:
        assert per_worker == 2 and cv2.getNumThreads() == 2
    with thread_budget(workers=8, cores=2) as per_worker:
        assert per_worker == 1
    assert cv2.getNumThreads() == before


def test_a_threads_run_holds_opencv_to_its_share_of_the_cores_while_it_runs(monkeypatch):
    """8 cores, 2 workers: OpenCV runs 4 threads while the run is under way (between its frames too), and gets
    back the count it had when the run ends."""
    import cv2

    from cortex.runtime import threads

    monkeypatch.setattr(threads, "machine_cores", lambda: 8)
    before = cv2.getNumThreads()
    cv2.setNumThreads(3)
    try:
        run = compiled(small_l2_text()).run_video(frames_of(SMALL, 4), workers=2, engine="threads")
        next(run)
        assert cv2.getNumThreads() == 4
        assert len(list(run)) == 3
        assert cv2.getNumThreads() == 3
    finally:
        cv2.setNumThreads(before)
