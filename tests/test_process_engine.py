"""`run_video(engine="processes")`: frames in worker processes, past the GIL — the sequential run's exact
outputs and state, errors named by frame, the pool kept for the next run, frames through shared memory
that is gone with the pool, and a script without a main guard that still runs once."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, compiled, delivered_before_error, frames_of, sequential
from helpers.shared_memory import private_shm_fixture, shared_blocks  # noqa: F401 (a fixture)

from cortex.errors import CortexError
from cortex.runtime.engines import processes

pytestmark = pytest.mark.xdist_group("processes")

PIPELINES = (compiled(small_l2_text()), compiled(small_l2_text()))
BAD_AT = 9


@pytest.fixture(scope="module", autouse=True)
def _close_pools(private_shm):
    yield
    processes.close_pools()


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 3])
def test_processes_equal_sequential(workers):
    """Chunk sizes and windows that cut the video at every place; one pool for all the runs of a test."""
    a, b = PIPELINES
    frames = frames_of(SMALL, 23)
    before = shared_blocks()
    a.reset()
    want = sequential(a, frames)
    for chunk, window in [(1, None), (4, None), (3, 1), (2, 8), (30, None)]:
        b.reset()
        got = list(b.run_video(frames, workers=workers, window=window, engine="processes", chunk=chunk))
        assert_same(got, want)
        assert_same_state(b.state, a.state)
    processes.drop_pool(b)
    assert shared_blocks() <= before  # every chunk's block unlinked with its pool


@pytest.mark.slow
def test_an_unspecialised_pipeline_with_runtime_weights():
    """Weights bound at each call travel with the program to the workers."""
    a = compiled(small_l2_text(), specialise=False)
    frames = frames_of(SMALL, 9)
    want = sequential(a, frames)
    a.reset()
    assert_same(list(a.run_video(frames, workers=2, engine="processes", chunk=2)), want)


def test_a_run_continues_from_the_state_and_reuses_the_pool():
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = frames_of(SMALL, 12)
    want = sequential(a, frames)
    got = list(b.run_video(frames[:5], workers=2, engine="processes"))
    pids = processes.pool_for(b, b.program, 2, chain=True).pids()
    got += list(b.run_video(frames[5:], workers=2, engine="processes"))
    assert_same(got, want)
    assert_same_state(b.state, a.state)
    assert processes.pool_for(b, b.program, 2, chain=True).pids() == pids  # the same processes, not new ones
    assert os.getpid() not in pids and len(pids) == 2
    assert processes.worker_cpu_seconds(b) > 0  # the workers' CPU, read from /proc
    processes.drop_pool(b)
    assert processes.worker_cpu_seconds(b) == 0


def test_a_run_with_another_worker_count_gets_a_pool_of_that_many_processes():
    """The kept pool is reused only for the same count: a run on 3 workers after one on 2 runs on 3 processes,
    and its outputs equal the sequential calls'."""
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = frames_of(SMALL, 6)
    want = sequential(a, frames)
    got = list(b.run_video(frames[:3], workers=2, engine="processes"))
    two = processes.pool_for(b, b.program, 2, chain=True).pids()
    got += list(b.run_video(frames[3:], workers=3, engine="processes"))
    three = processes.pool_for(b, b.program, 3, chain=True).pids()
    assert_same(got, want)
    assert len(two) == 2 and len(three) == 3 and not set(two) & set(three)
    processes.drop_pool(b)


def test_a_bad_frame_is_named_and_the_frames_before_it_delivered():
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = frames_of(SMALL, 20)
    frames[BAD_AT] = np.zeros((48, 64, 3), np.uint8)
    want = sequential(a, frames[:BAD_AT])
    got = delivered_before_error(b.run_video(frames, workers=2, engine="processes", chunk=3), rf"^frame {BAD_AT}: argument #0 \(%frame\) of @l2_frame: expected")
    assert_same(got, want)
    assert_same_state(b.state, a.state)


def test_an_error_in_the_chain_is_named_and_the_frames_before_it_delivered(monkeypatch):
    """The chain runs on the caller as a chunk starts, before earlier chunks are delivered: its error waits
    for its chunk's turn, so every frame before the chunk still comes out."""
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = frames_of(SMALL, 20)
    want = sequential(a, frames[:BAD_AT])
    list(b.run_video(frames[:1], workers=2, engine="processes"))  # the pool and its chain, to patch
    b.reset()
    chain = processes.pool_for(b, b.program, 2, chain=True).local
    real = chain.chain

    def failing(frames_chunk, first, *args):
        if first == BAD_AT:
            raise CortexError("the gate's history broke")
        return real(frames_chunk, first, *args)

    monkeypatch.setattr(chain, "chain", failing)
    got = delivered_before_error(b.run_video(frames, workers=2, engine="processes", chunk=3),
                                 rf"^frames {BAD_AT} to {BAD_AT + 2}: the gate's history broke$")
    assert_same(got, want)


def test_options_are_checked_before_any_process_starts():
    _, b = PIPELINES
    with pytest.raises(CortexError, match="engine 'processes' takes the option chunk; got address"):
        b.run_video([], engine="processes", address="x")
    with pytest.raises(CortexError, match="chunk"):
        b.run_video([], engine="processes", chunk=0)


def test_a_worker_that_dies_is_one_line_and_the_next_run_starts_afresh():
    a, b = PIPELINES
    a.reset()
    b.reset()
    frames = frames_of(SMALL, 6)
    list(b.run_video(frames[:2], workers=1, engine="processes"))
    pool = processes.pool_for(b, b.program, 1, chain=True)
    for pid in pool.pids():
        os.kill(pid, 9)
    with pytest.raises(CortexError, match="a worker process died"):
        list(b.run_video(frames, workers=1, engine="processes"))
    b.reset()
    assert_same(list(b.run_video(frames, workers=1, engine="processes")), sequential(a, frames))


@pytest.mark.slow
def test_a_script_without_a_main_guard_runs_once(tmp_path):
    """Worker processes never import the caller's `__main__` again (it would run the script twice)."""
    script = tmp_path / "video_job.py"
    script.write_text(textwrap.dedent(f"""
        import cortex, numpy as np
        from cortex.video.synthetic import SyntheticVideo
        print("script body runs", flush=True)
        compiled = cortex.compile(cortex.build_l2_pipeline({SMALL[0]}, {SMALL[1]}))
        frames = [SyntheticVideo({SMALL[0]}, {SMALL[1]}).frame(i) for i in range(6)]
        out = list(compiled.run_video(frames, workers=2, engine="processes"))
        print("frames", len(out), flush=True)
    """))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.count("script body runs") == 1 and "frames 6" in done.stdout
