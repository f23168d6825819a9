"""A pipeline keeps one loaded frame split per kind: the staged one (a call with workers > 1) and the
plain one (frames in flight) are different, whichever was loaded first.

`run_video` loads the plain split; a later call with several workers needs the split cut into
stages. Handing it the cached plain one fails (or computes something else), so each call here is
compared with a one-worker run of the same frames."""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, frames_of, passes, sequential

import cortex

FRAMES = 6


@pytest.fixture(scope="module")
def reference():
    """Outputs and final state of one worker, one call at a time."""
    one = cortex.compile(cortex.parse(small_l2_text()), passes=passes("balanced"))
    frames = frames_of(SMALL, 2 * FRAMES)
    outputs = sequential(one, frames)
    return frames, outputs, one.state


def fresh():
    return cortex.compile(cortex.parse(small_l2_text()), passes=passes("balanced"))


@pytest.mark.slow
def test_calls_with_workers_after_frames_in_flight(reference):
    frames, want, state = reference
    pipeline = fresh()
    got = list(pipeline.run_video(frames[:FRAMES], workers=2))
    pipeline.stage_threads = 2
    got += sequential(pipeline, frames[FRAMES:])
    assert_same(got, want)
    assert_same_state(pipeline.state, state)


@pytest.mark.slow
def test_frames_in_flight_after_calls_with_workers(reference):
    frames, want, state = reference
    pipeline = fresh()
    pipeline.stage_threads = 2
    got = sequential(pipeline, frames[:FRAMES])
    got += list(pipeline.run_video(frames[FRAMES:], workers=2))
    assert_same(got, want)
    assert_same_state(pipeline.state, state)
