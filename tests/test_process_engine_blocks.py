"""The processes engine's shared-memory blocks: reused from chunk to chunk and from run to run of a kept pool
(a new block's pages cost far more than the copy into a block written before), never a stale frame from a
block's last chunk, and every block unlinked when the pool closes, after an error too."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import SMALL, chained_leading, small_l2_text, with_extra_states, without_gate_history
from helpers.scheduling import assert_same, assert_same_state, compiled, frames_of, sequential
from helpers.shared_memory import private_shm_fixture, shared_blocks  # noqa: F401 (a fixture)

from cortex.errors import CortexError
from cortex.runtime.engines import chunk_worker, processes
from cortex.runtime.engines.processes import blocks as shm

pytestmark = pytest.mark.xdist_group("processes")


@pytest.fixture(scope="module", autouse=True)
def _close_pools(private_shm):
    yield
    processes.close_pools()


@pytest.fixture
def created(monkeypatch):
    """The names of the blocks the caller creates while the test runs."""
    names: list[str] = []
    real = shm.Block.create

    def counting(size):
        block = real(size)
        names.append(block.name)
        return block

    monkeypatch.setattr(shm.Block, "create", counting)
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


@pytest.mark.slow
@pytest.mark.parametrize("text", [without_gate_history, with_extra_states, chained_leading])
def test_chunks_that_start_from_delayed_values_in_the_block(text):
    """Each chunk's delayed values travel in its block (the run's start, or the chain's values after the chunk
    before): with no chain (the first chunk only), with a delayed input only its own update reads, with
    chained histories; and a second run that starts from the first run's state."""
    a, b = compiled(text()), compiled(text())
    frames = frames_of(SMALL, 15)
    want = sequential(a, frames)
    for chunk in (1, 4, 15):
        b.reset()
        got = list(b.run_video(frames[:6], workers=2, engine="processes", chunk=chunk))
        got += list(b.run_video(frames[6:], workers=2, engine="processes", chunk=chunk))
        assert_same(got, want)
        assert_same_state(b.state, a.state)
    processes.drop_pool(b)


def test_a_result_that_lies_in_the_block_is_copied_out():
    """Every array of a task's result that lies in the block, the one at the block's very start included, is a
    copy once detached: checked by name before the block closes (a view left behind reads unmapped memory, a
    crash of the process instead of a failure)."""
    block = shm.FrameBlock([np.arange(12, dtype=np.float32).reshape(3, 4)], shm.BlockCache(keep=1),
                                 {"s": np.ones(5, np.float32), "n": None})
    mapped = shm.Mapped(block.spec)
    own = np.zeros(2)
    got = mapped.detached([{"a": mapped.frames[0], "delayed": {"s": mapped.delayed["s"], "n": None}, "b": own}])
    whole = np.frombuffer(mapped.shm.buf, np.uint8)
    assert mapped.frames[0].__array_interface__["data"][0] == whole.ctypes.data  # the first frame starts the block
    left = [k for k, v in (("a", got[0]["a"]), ("s", got[0]["delayed"]["s"])) if np.shares_memory(v, whole)]
    del whole
    assert not left, f"results still in the block: {left}"
    assert got[0]["b"] is own and got[0]["delayed"]["n"] is None
    assert_same_state(got[0]["delayed"], {"s": np.ones(5, np.float32), "n": None})
    np.testing.assert_array_equal(got[0]["a"], np.arange(12, dtype=np.float32).reshape(3, 4))
    del mapped.frames[:]
    mapped.close()  # no view of the block is left to stop it closing
    block.free()
    block.cache.close()
    got[0]["a"][0, 0] = 7  # the copies outlive the block


def test_a_blocks_slots_take_each_frames_images_as_they_come():
    """`slots` reserves room for each frame's images laid out as the first frame's; `put` writes one image under
    two names once, and an image that does not fit its slot (or has none) travels by value, copied."""
    gray = np.arange(12, dtype=np.float32).reshape(3, 4)
    block = shm.FrameBlock([np.zeros((3, 4, 3), np.uint8)], shm.BlockCache(keep=1), None,
                                 slots=(3, {"g": gray, "also_g": gray, "small": np.float32(1)}))
    assert block.shm is not None and block.shm.size >= 3 * 4 * 3 + 3 * gray.nbytes
    assert len(block.slots) == 3 and len(block.slots[0]) == 1  # one slot a frame: the image under two names
    block.put(0, {"g": gray, "also_g": gray})
    later, other = gray + 100, gray + 200  # frame 1: two images where frame 0 had one
    block.put(1, {"g": later, "also_g": other, "new": gray})
    block.put(2, {"g": np.ones((2, 2), np.float32)})  # not the slot's shape
    (g0, at0, _), (a0, at0_again, _) = block.slotted[0]
    assert (g0, a0) == ("g", "also_g") and at0 is not None and at0 == at0_again
    by_name = {name: (at, v) for name, at, v in block.slotted[1]}
    assert by_name["g"][0] is not None and by_name["also_g"][0] is None and by_name["new"][0] is None
    assert by_name["new"][1] is not gray  # by value: a copy, the prepass's buffer is reused
    assert block.slotted[2][0][1] is None
    gray[0, 0] = -1
    spec = block.spec_with({"h": np.ones(3)}, [{"s": 1.5}, {"s": 2.5}, {}])
    assert spec.delayed is not None and spec.delayed[0][:2] == ("h", None)
    mapped = shm.Mapped(spec)
    assert mapped.givens is not None
    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(mapped.givens[0]["g"], want)
    np.testing.assert_array_equal(mapped.givens[0]["also_g"], mapped.givens[0]["g"])
    np.testing.assert_array_equal(mapped.givens[1]["g"], want + 100)
    np.testing.assert_array_equal(mapped.givens[1]["also_g"], want + 200)
    np.testing.assert_array_equal(mapped.givens[1]["new"], want)
    assert mapped.givens[1]["s"] == 2.5
    np.testing.assert_array_equal(mapped.givens[2]["g"], np.ones((2, 2), np.float32))
    mapped.givens = None
    mapped.close()
    block.free()
    block.cache.close()


def _front_specs(monkeypatch, text):
    """Run 6 frames of `text` in chunks of 2 on the processes engine, checked against the sequential run; the
    spec each chunk's front was handed, and the pipeline run."""
    a, b = compiled(text), compiled(text)
    frames = frames_of(SMALL, 6)
    specs = []
    real = processes.ProcessFrames._submit

    def recorded(self, pool, method, *args):
        if method == "front":
            specs.append(args[0])
        return real(self, pool, method, *args)

    monkeypatch.setattr(processes.ProcessFrames, "_submit", recorded)
    assert_same(list(b.run_video(frames, workers=2, engine="processes", chunk=2)), sequential(a, frames))
    assert_same_state(b.state, a.state)
    assert len(specs) == 3
    return specs, b


def test_a_prepass_writes_the_images_a_front_takes_into_the_chunks_block(monkeypatch):
    """With leading recurrences, each chunk's block holds what its prepass computed of the images (the gray
    frame, an image here: larger than `GIVEN_BYTES`): the front is handed them there, not by value, and the
    run equals the sequential one."""
    monkeypatch.setattr(chunk_worker, "GIVEN_BYTES", SMALL[0] * SMALL[1] * 4 - 1)
    specs, b = _front_specs(monkeypatch, small_l2_text())
    handed: list[set[str]] = []
    processes.pool_for(b, b.program, 2, chain=True).local.prepass(
        frames_of(SMALL, 1), 0, {}, lambda k, images: handed.append(set(images)))
    assert handed[0]  # the gray frame, under its names
    for spec in specs:
        assert spec.givens is not None and len(spec.givens) == 2
        for given in spec.givens:
            assert handed[0] <= {name for name, at, _ in given if at is not None}
    processes.drop_pool(b)


def test_without_a_chain_only_the_first_chunks_block_holds_the_values_it_starts_from(monkeypatch):
    """Without leading recurrences the caller writes each block when it launches the chunk: the run's first holds
    the delayed values the run starts from, every later one only its frames and the frame before them, from
    which the front computes its own (the caller never sends them again: 11 MB a chunk at 480x640)."""
    specs, b = _front_specs(monkeypatch, without_gate_history())
    assert specs[0].delayed and all(not spec.delayed and len(spec.frames) == 3 for spec in specs[1:])
    processes.drop_pool(b)


def test_a_worker_keeps_its_mappings_of_reused_blocks_and_a_bounded_number():
    cache = shm.BlockCache(keep=4)
    blocks = [cache.take(64) for _ in range(3)] + [cache.take(4096)]
    maps = shm.Maps(keep=2, keep_bytes=1000)
    first, kept = maps.get(blocks[0].name, blocks[0].path)
    assert kept and maps.get(blocks[0].name, blocks[0].path) == (first, True)  # mapped once, reused by the next task
    maps.get(blocks[1].name, blocks[1].path)
    maps.get(blocks[2].name, blocks[2].path)
    assert list(maps.open) == [blocks[1].name, blocks[2].name]  # the least recently used closed
    assert first.buf is None  # closed: its memory mapping is gone
    large, kept = maps.get(blocks[3].name, blocks[3].path)
    assert not kept and list(maps.open) == [blocks[1].name, blocks[2].name]  # over the bytes: for its task only
    large.close()
    for name in list(maps.open):
        maps.open.pop(name).close()
    for block in blocks:
        cache.give(block)
    cache.close()


def test_an_idle_pool_keeps_a_bounded_number_of_bytes():
    before = shared_blocks()
    cache = shm.BlockCache(keep=5, keep_bytes=10000)
    blocks = [cache.take(4000) for _ in range(3)] + [cache.take(20000)]
    for block in blocks:
        cache.give(block)
    assert [b.size for b in cache.free] == [20000]  # over the bytes: the one largest block is kept
    cache.give(cache.take(100))
    assert [b.size for b in cache.free] == [20000]
    cache.close()
    assert shared_blocks() <= before


@pytest.mark.slow
def test_a_worker_keeps_the_memory_a_frame_frees_for_the_next():
    """A worker process retunes its own malloc (`memory_policy`): between fronts and tails of different chunks
    the default policy handed large blocks back to the OS, 118 fresh pages a 256x320 frame (measured), each
    zero-filled again on first touch; kept, the third run takes almost none."""
    import cortex
    from cortex.video.synthetic import SyntheticVideo

    size = (256, 320)
    b = cortex.compile(cortex.build_l2_pipeline(*size))
    frames = [SyntheticVideo(*size).frame(i) for i in range(16)]
    for _ in range(2):
        b.reset()
        list(b.run_video(frames, workers=2, engine="processes", chunk=4))
    pids = processes.pool_for(b, b.program, 2, chain=True).pids()
    before = {pid: _minor_faults(pid) for pid in pids}
    b.reset()
    list(b.run_video(frames, workers=2, engine="processes", chunk=4))
    assert sum(_minor_faults(pid) - before[pid] for pid in pids) / len(frames) < 20
    processes.drop_pool(b)


def _minor_faults(pid: int) -> int:
    return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[7])


def test_a_run_keeps_every_block_it_frees_and_trims_to_the_bytes_after():
    before = shared_blocks()
    cache = shm.BlockCache(keep=5, keep_bytes=10000)
    with cache.run():
        blocks = [cache.take(8000) for _ in range(3)]
        for block in blocks:
            cache.give(block)
        assert len(cache.free) == 3  # over the bytes, kept for the run's next chunks
        again = [cache.take(8000) for _ in range(3)]
        assert {b.name for b in again} == {b.name for b in blocks}  # no fresh block while the run goes on
        for block in again:
            cache.give(block)
    assert len(cache.free) == 1  # the run over: the idle pool's bound
    cache.close()
    assert shared_blocks() <= before
