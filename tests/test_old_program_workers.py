"""A program saved before the delayed part was cut into stages still runs right with workers > 1.

Such a program's split has no `delayed_stages`; with several workers each call runs its whole
delayed part as one stage of the call's stage graph. Its outputs and state must equal the same
program's as saved today, one call at a time and with frames in flight."""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.program_archive import edited
from helpers.scheduling import assert_same, assert_same_state, frames_of, passes, sequential

import cortex

FRAMES = 8


def saved_without_delayed_stages(data: bytes) -> bytes:
    """The program archive as an older runtime wrote it: its split has no "delayed_stages"."""
    def drop(doc):
        assert doc["split"]["delayed_stages"], "the program of this test must have a staged delayed part"
        del doc["split"]["delayed_stages"]

    return edited(data, drop)


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """(today's program on one worker, the same program saved the old way, loaded with two workers)."""
    today = cortex.compile(cortex.parse(small_l2_text()), passes=passes("balanced"))
    path = tmp_path_factory.mktemp("old") / "old.cortex"
    path.write_bytes(saved_without_delayed_stages(today.program.to_bytes()))
    return today, cortex.load(path, stage_threads=2)


@pytest.mark.slow
def test_old_program_calls_with_two_workers_match(programs):
    today, old = programs
    frames = frames_of(SMALL, FRAMES)
    today.reset()
    want = sequential(today, frames)
    old.reset()
    assert_same(sequential(old, frames), want)
    assert_same_state(old.state, today.state)


@pytest.mark.slow
def test_old_program_frames_in_flight_match(programs):
    today, old = programs
    frames = frames_of(SMALL, FRAMES, start=3)
    today.reset()
    want = sequential(today, frames)
    old.reset()
    assert_same(list(old.run_video(frames, workers=2)), want)
    assert_same_state(old.state, today.state)
