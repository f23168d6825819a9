"""The processes engine's shared-memory blocks: reused from chunk to chunk and from run to run of a kept pool
(a new block's pages cost far more than the copy into a block written before), never a stale frame from a
block's last chunk, and every block unlinked when the pool closes, after an error too."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, compiled, frames_of, sequential

from cortex.errors import CortexError
from cortex.runtime import processes

pytestmark = pytest.mark.xdist_group("processes")  # one worker: the shared-memory checks see every block


def shared_blocks() -> set[str]:
    return {n for n in os.listdir("/dev/shm") if n.startswith("psm_")} if os.path.isdir("/dev/shm") else set()


@pytest.fixture(scope="module", autouse=True)
def _close_pools():
    yield
    processes.close_pools()


@pytest.fixture
def created(monkeypatch):
    """The names of the blocks the caller creates while the test runs."""
    names: list[str] = []
    real = processes.SharedMemory

    def counting(*args, **kwargs):
        block = real(*args, **kwargs)
        if kwargs.get("create"):
            names.append(block.name)
        return block

    monkeypatch.setattr(processes, "SharedMemory", counting)
    return names


def test_blocks_are_reused_from_chunk_to_chunk_and_run_to_run(created):
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    frames = frames_of(SMALL, 24)
    want = sequential(a, frames)
    b.reset()
    assert_same(list(b.run_video(frames, workers=2, window=2, engine="processes", chunk=2)), want)
    first = len(created)
    assert 0 < first <= 4  # 12 chunks, at most 2 in flight
    b.reset()
    assert_same(list(b.run_video(frames, workers=2, window=2, engine="processes", chunk=2)), want)
    assert len(created) == first  # the second run writes into the first run's blocks
    assert_same_state(b.state, a.state)
    processes.drop_pool(b)


def test_a_reused_block_never_gives_a_stale_frame():
    """Chunk sizes that shrink and grow over one pool's blocks: each chunk reads its own frames only."""
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    frames = frames_of(SMALL, 17)
    want = sequential(a, frames)
    for chunk in (6, 1, 4, 17, 3):
        b.reset()
        assert_same(list(b.run_video(frames, workers=2, engine="processes", chunk=chunk)), want)
        assert_same_state(b.state, a.state)
    processes.drop_pool(b)


def test_no_block_outlives_its_pool_after_a_run_or_an_error():
    b = compiled(small_l2_text())
    before = shared_blocks()
    frames = frames_of(SMALL, 12)
    list(b.run_video(frames, workers=2, engine="processes", chunk=2))
    frames[7] = np.zeros((3, 3, 3), np.uint8)
    with pytest.raises(CortexError, match="^frame 7: "):
        list(b.run_video(frames, workers=2, engine="processes", chunk=2))
    processes.drop_pool(b)
    assert shared_blocks() <= before


def test_a_pool_keeps_a_bounded_number_of_blocks():
    b = compiled(small_l2_text())
    before = shared_blocks()
    list(b.run_video(frames_of(SMALL, 40), workers=1, window=16, engine="processes", chunk=2))
    pool = processes.pool_for(b, b.program, 1, chain=True)
    assert len(pool.blocks.free) <= pool.blocks.keep < 16
    assert len(shared_blocks() - before) <= pool.blocks.keep
    processes.drop_pool(b)
