"""A bad frame, or a failure while frame k runs, is named `frame k: ...` in every engine.

A frame of the wrong shape or dtype, None, a NaN-filled float frame, a tuple of the wrong length
in the middle of a video used to stop `run_video` with the argument's words but no frame number,
and `cortex-run`'s frame-after-frame loop (sequential and concurrent stages) never named the
frame at all. Now `run_video` numbers the frame source once, before any engine (the frames the
engines see are already checked), and stops the run as the sequential loop would: every frame
before the bad one is delivered, `compiled.state` is the state after them, then the error.
Ray's runs are in tests/test_ray_engine.py (they share its local Ray).
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import (
    assert_same,
    assert_same_state,
    compiled,
    delivered_before_error,
    frames_of,
    sequential,
    with_stage_threads,
)

import cortex
from cortex.errors import CortexError

BAD_AT = 17
ARG = r"argument #0 \(%frame\) of @l2_frame"


_ALIVE_BEFORE: set[threading.Thread] = set()


@pytest.fixture(autouse=True)
def _threads_before_the_test():
    """Stage threads a pipeline of another test module keeps (it keeps them for its next call) are not this test's."""
    _ALIVE_BEFORE.clear()
    _ALIVE_BEFORE.update(threading.enumerate())


def frame_threads():
    """The engine threads this test started that are still alive."""
    return [t for t in threading.enumerate()
            if t.name.startswith(("cortex-frame", "cortex-stage")) and t not in _ALIVE_BEFORE]


BAD_FRAMES = {
    "smaller": (np.zeros((48, 64, 3), np.uint8), rf"^frame {BAD_AT}: {ARG}: expected a uint8 array of shape \(96, 128, 3\), got a uint8 array of shape \(48, 64, 3\)$"),
    "gray": (np.zeros((96, 128), np.uint8), rf"^frame {BAD_AT}: {ARG}: expected a uint8 array .* got a uint8 array of shape \(96, 128\)$"),
    "nan-float": (np.full((96, 128, 3), np.nan), rf"^frame {BAD_AT}: {ARG}: expected a uint8 array .* got a float64 array"),
    "int8": (np.zeros((96, 128, 3), np.int8), rf"^frame {BAD_AT}: {ARG}: expected a uint8 array .* got an int8 array"),
    "none": (None, rf"^frame {BAD_AT}: {ARG}: expected a uint8 array .* got a NoneType$"),
    "list": ([[0] * 3] * 4, rf"^frame {BAD_AT}: {ARG}: expected a uint8 array .* got a list$"),
    "two-frames": ((np.zeros((96, 128, 3), np.uint8),) * 2, rf"^frame {BAD_AT}: @l2_frame takes 1 argument\(s\), got 2$"),
    "masked": (np.ma.zeros((96, 128, 3), np.uint8), rf"^frame {BAD_AT}: {ARG}: masked arrays are not accepted"),
}


def video_with_bad_frame(bad, n=30):
    frames = frames_of(SMALL, n)
    frames[BAD_AT] = bad
    return frames


@pytest.mark.slow
@pytest.mark.parametrize(("workers", "window"), [(1, None), (2, None), (2, 1), (3, 8)])
@pytest.mark.parametrize("kind", list(BAD_FRAMES))
def test_threads_name_the_bad_frame_and_deliver_the_frames_before_it(kind, workers, window):
    bad, message = BAD_FRAMES[kind]
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = video_with_bad_frame(bad)
    want = sequential(a, frames[:BAD_AT])
    got = delivered_before_error(b.run_video(frames, workers=workers, window=window), message)
    assert_same(got, want)  # as `for f in frames: compiled(f)`: every frame before the bad one
    assert_same_state(b.state, a.state)
    assert not frame_threads()


PIPELINES = (compiled(small_l2_text()), compiled(small_l2_text()))


def poisoned(frame):
    """`frame` marked so the patched encoder below fails on it (int8 view inside generated code)."""
    frame = frame.copy()
    frame[0, 0] = (101, 7, 99)
    return frame


def failing_encoder(original):
    def encoder(frame, score):
        if tuple(int(v) for v in frame[0, 0]) == (101, 7, 99):
            raise ValueError("poisoned pixel")
        return original(frame, score)

    return encoder


def patched(namespace):
    original = namespace["_x_cortex_encoder"]
    namespace["_x_cortex_encoder"] = failing_encoder(original)
    return original


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_a_failure_in_a_worker_thread_names_its_frame(workers):
    b = compiled(small_l2_text())
    namespace = b.loaded_split().parts["tail"].fn.__globals__
    original = patched(namespace)
    frames = frames_of(SMALL, 30)
    frames[BAD_AT] = poisoned(frames[BAD_AT])
    try:
        with pytest.raises(CortexError, match=rf"^frame {BAD_AT}: .*ValueError.*: poisoned pixel"):
            list(b.run_video(frames, workers=workers, window=4))
    finally:
        namespace["_x_cortex_encoder"] = original
    assert not frame_threads()


# ---------------------------------------------------------------- cortex-run's frame-after-frame loop


def run_loop(backend, frames):
    from cortex.tools.cortex_run import run_frames

    return run_frames(backend, frames, None)


def test_the_sequential_loop_names_the_bad_frame():
    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match=rf"^frame {BAD_AT}: {ARG}: expected a uint8 array"):
        run_loop(b, video_with_bad_frame(np.zeros((5, 5, 3), np.uint8), 20))


def test_the_sequential_loop_names_the_frame_an_extern_failed_on():
    b = compiled(small_l2_text())
    patched(b._plain.__globals__)
    frames = frames_of(SMALL, 20)
    frames[BAD_AT] = poisoned(frames[BAD_AT])
    with pytest.raises(CortexError, match=rf"^frame {BAD_AT}: .*ValueError.*: poisoned pixel"):
        run_loop(b, frames)


@pytest.mark.slow
def test_concurrent_stages_name_the_bad_frame_and_the_failing_one():
    before = set(frame_threads())
    staged = with_stage_threads(cortex.compile(cortex.parse(small_l2_text())), 2)
    with pytest.raises(CortexError, match=rf"^frame {BAD_AT}: {ARG}: expected a uint8 array"):
        run_loop(staged, video_with_bad_frame(np.zeros((5, 5, 3), np.uint8), 20))
    patched(staged.loaded_split(stages=True).parts["tail"].fn.__globals__)
    frames = frames_of(SMALL, 20)
    frames[BAD_AT] = poisoned(frames[BAD_AT])
    staged.reset()
    with pytest.raises(CortexError, match=rf"^frame {BAD_AT}: .*ValueError.*: poisoned pixel"):
        run_loop(staged, frames)
    started = set(frame_threads()) - before  # the pipeline keeps its stage threads for its next call
    del staged
    gc.collect()
    for t in started:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in started)


def test_an_error_already_naming_its_frame_is_not_named_twice():
    b = compiled(small_l2_text())
    with pytest.raises(CortexError) as info:
        list(b.run_video(video_with_bad_frame(None), workers=2))
    assert str(info.value).count("frame ") == 1


# ---------------------------------------------------------------- shape-generic: the size changes mid-stream


@pytest.mark.slow
def test_a_shape_generic_video_whose_size_changes_names_the_frame():
    generic = cortex.compile(cortex.examples.L2_PIPELINE)
    frames = frames_of(SMALL, 20)
    frames[BAD_AT] = frames_of((64, 96), 1)[0]
    got = delivered_before_error(generic.run_video(frames, workers=2), rf"^frame {BAD_AT}: {ARG}: expected a uint8 array of shape \(96, 128, 3\), got a uint8 array of shape \(64, 96, 3\)")
    assert len(got) == BAD_AT


@pytest.mark.parametrize("engine", ["threads", "ray"])
@pytest.mark.parametrize("frames", [5, None, 2.5], ids=repr)
def test_a_frame_source_that_is_not_iterable_is_one_line(engine, frames):
    """`run_video(5)` was a raw TypeError from inside the loop."""
    with pytest.raises(CortexError, match=r"^run_video takes an iterable of frames \(a list, a generator\), got "):
        PIPELINES[0].run_video(frames, workers=1, engine=engine)
    generic = cortex.compile(cortex.examples.L2_PIPELINE)
    with pytest.raises(CortexError, match=r"^run_video takes an iterable of frames"):
        generic.run_video(frames, workers=1, engine=engine)
