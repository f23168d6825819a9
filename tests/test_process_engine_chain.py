"""The processes engine's chain of leading recurrences: only the slice of the delayed part those values
read, handed on as the leading values alone (the fronts compute the delayed inputs from the frame before
their chunk) — the sequential run's outputs and state all the same, with temporal reuse's derived states
and with two chained leading recurrences."""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, chained_leading, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, compiled, frames_of, sequential

import cortex
from cortex.runtime import processes
from cortex.runtime.chunk_worker import FrameWorker

pytestmark = pytest.mark.xdist_group("processes")  # one worker: the shared-memory checks see every block


@pytest.fixture(scope="module", autouse=True)
def _close_pools():
    yield
    processes.close_pools()


def _full_l2():
    return cortex.compile(cortex.build_l2_pipeline(*SMALL))


def _worker_at_start(pipeline):
    """A one-thread worker of `pipeline`'s program, and the delayed inputs at the pipeline's state (the
    `ahead` values: the leading ones among them)."""
    worker = FrameWorker(pipeline.program, 1)
    state = worker.split.internal_state(pipeline.state)
    return worker, {n: state[n] for n in worker.split.ahead}


@pytest.mark.slow
def test_the_chain_runs_a_strict_slice_of_the_delayed_part():
    worker = FrameWorker(_full_l2().program, 1)
    staged = cortex.runtime.parts.LoadedSplit(worker.program, stages=True).delayed_stages
    names = [s.name for s in worker.leading_stages()]
    assert names and len(names) < len(staged)
    results = {k for s in worker.leading_stages() for k in s.result_keys}
    assert "update:sharpness_history" in results
    assert not any(k.startswith("update:prev_gray:") for k in results)  # temporal reuse's derived states: not the chain's


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(small_l2_text()), lambda: compiled(chained_leading())])
def test_leading_alone_equals_the_whole_delayed_part(make):
    """`leading` from the leading values only: what `ahead` (the whole delayed part) gives for them."""
    worker, start = _worker_at_start(make())
    split = worker.split
    assert split.leading
    frames = frames_of(SMALL, 6)
    want = worker.ahead(frames, 0, start, {})
    got = worker.leading(frames, 0, {n: start[n] for n in split.leading}, {})
    assert got.keys() == set(split.leading)
    assert_same_state(got, {n: want[n] for n in split.leading})


@pytest.mark.slow
def test_a_front_given_only_the_leading_values_computes_the_delayed_inputs():
    worker, ahead = _worker_at_start(_full_l2())
    split = worker.split
    frames = frames_of(SMALL, 7)
    start = worker.ahead(frames[:3], 0, ahead, {})
    want = worker.front(frames[3:], 3, frames[2], start, {})
    got = worker.front(frames[3:], 3, frames[2], {n: start[n] for n in split.leading}, {})
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        assert_same_state({k: v for k, v in g.items() if k != "delayed"}, {k: v for k, v in w.items() if k != "delayed"})
    assert_same_state(got[-1]["delayed"], want[-1]["delayed"])


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(chained_leading())])
def test_processes_equal_sequential_with_derived_and_chained_states(make):
    a, b = make(), make()
    frames = frames_of(SMALL, 19)
    want = sequential(a, frames)
    for chunk in (1, 4, 8):
        b.reset()
        got = list(b.run_video(frames, workers=2, engine="processes", chunk=chunk))
        assert_same(got, want)
        assert_same_state(b.state, a.state)


def test_the_chain_runs_in_the_caller_not_a_process_of_its_own():
    b = compiled(small_l2_text())
    list(b.run_video(frames_of(SMALL, 4), workers=2, engine="processes", chunk=2))
    assert len(processes.pool_for(b, b.program, 2, chain=True).pids()) == 2


@pytest.mark.slow
def test_after_is_every_delayed_value_after_the_chunk_and_the_front_need_not_send_them():
    worker, ahead = _worker_at_start(_full_l2())
    frames = frames_of(SMALL, 5)
    want = worker.ahead(frames, 0, ahead, {})
    assert_same_state(worker.after(frames, 0, {n: ahead[n] for n in worker.split.leading}, {}), want)
    values = worker.front(frames, 0, None, ahead, {}, returns_delayed=False)
    assert not any("delayed" in v for v in values)
