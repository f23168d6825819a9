"""The processes engine's chain of leading recurrences: only the slice of the delayed part those values
read runs on the caller, the fronts take its small results instead of computing them again and compute the
delayed inputs from the frame before their chunk — the sequential run's outputs and state all the same,
with temporal reuse's derived states and with two chained leading recurrences."""

from __future__ import annotations

import threading

import pytest
from helpers.pipelines import SMALL, chained_leading, gate_reads_a_fresh_median, small_l2_text
from helpers.scheduling import (
    GATES,
    assert_same,
    assert_same_state,
    compile_text,
    compiled,
    frames_of,
    gated_frames,
    passes,
    sequential,
)
from helpers.shared_memory import private_shm_fixture  # noqa: F401 (a fixture)

import cortex
from cortex.runtime.engines import chunk_worker, processes
from cortex.runtime.engines.chunk_worker import FrameWorker, handed_on

pytestmark = pytest.mark.xdist_group("processes")


@pytest.fixture(scope="module", autouse=True)
def _close_pools(private_shm):
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
def test_the_chain_ends_where_the_whole_delayed_part_ends(make):
    """`chain` from the leading values only: the leading values after the chunk, as `ahead` (the whole delayed
    part, frame after frame) gives them; for each frame the small results of the leading stages alone."""
    worker, start = _worker_at_start(make())
    split = worker.split
    assert split.leading
    frames = frames_of(SMALL, 6)
    givens, after = worker.chain(frames, 0, {n: start[n] for n in split.leading}, {})
    whole = worker.ahead(frames, 0, start, {})
    assert_same_state(after, {n: whole[n] for n in split.leading})
    leading_results = {k for s in worker.leading_stages() for k in s.result_keys}
    assert len(givens) == len(frames)
    assert all(g and set(g) <= leading_results for g in givens)
    assert all(handed_on(v) for g in givens for v in g.values())


def test_the_chain_hands_on_no_image(monkeypatch):
    """The gray frame (larger than `GIVEN_BYTES`) is not among the chain's small hand-ons (the sharpness, the
    history): a front finds it in its block, where the prepass wrote it (`prepass`'s `hand`)."""
    worker, start = _worker_at_start(_full_l2())
    gray = SMALL[0] * SMALL[1] * 4
    monkeypatch.setattr(chunk_worker, "GIVEN_BYTES", gray - 1)
    givens, _ = worker.chain(frames_of(SMALL, 2), 0, {n: start[n] for n in worker.split.leading}, {})
    images = {"update:prev_gray", "ahead:0", "value:5"}  # one array, the gray frame, under three names
    assert all(getattr(v, "nbytes", 0) == gray for s in [givens[0]] for k, v in s.items() if k in images)
    assert {k for g in givens for k in g} == {k for s in worker.leading_stages() for k in s.result_keys} - images
    monkeypatch.setattr(chunk_worker, "GIVEN_BYTES", gray)
    givens, _ = worker.chain(frames_of(SMALL, 2), 0, {n: start[n] for n in worker.split.leading}, {})
    assert images <= set(givens[0])


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(small_l2_text()), lambda: compiled(chained_leading())])
def test_the_delayed_inputs_of_a_frame_are_the_whole_delayed_parts(make):
    """`delayed_inputs`: a front starts from the frame before its chunk with the delayed inputs `ahead` gives."""
    worker, start = _worker_at_start(make())
    split = worker.split
    frames = frames_of(SMALL, 4)
    whole = worker.ahead(frames, 0, start, {})
    inputs = worker.delayed_inputs(frames[-1], 3, {n: start[n] for n in split.leading}, {})
    assert set(inputs) == set(split.ahead) - set(split.leading)
    assert_same_state(inputs, {n: whole[n] for n in inputs})
    assert len(worker.input_stages()) < len(worker.delayed_stages())


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(chained_leading())])
def test_a_front_given_the_chains_results_computes_what_a_whole_front_does(make):
    """With each frame's handed-on leading results given and the frame before the chunk, a front runs only what
    the chain did not hand on and gives the same values (and delayed values after the chunk) as one that
    starts from every delayed value and runs all of the delayed part."""
    worker, ahead = _worker_at_start(make())
    frames = frames_of(SMALL, 7)
    start = worker.ahead(frames[:3], 0, ahead, {})
    leading = {n: start[n] for n in worker.split.leading}
    givens, _ = worker.chain(frames[3:], 3, leading, {})
    want = worker.front(frames[3:], 3, None, start, {})
    got = worker.front(frames[3:], 3, frames[2], leading, {}, givens=givens)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.keys() == w.keys()
        assert_same_state({k: v for k, v in g.items() if k != "delayed"}, {k: v for k, v in w.items() if k != "delayed"})
    assert_same_state(got[-1]["delayed"], want[-1]["delayed"])


@pytest.mark.slow
def test_a_stage_with_any_result_not_given_runs_again():
    """A front skips a delayed stage only when every result of it is given: with one of the gray stage's three
    names taken out of the chain's hand-ons, the front computes the gray frame again and gives the whole
    front's values."""
    worker, ahead = _worker_at_start(_full_l2())
    frames = frames_of(SMALL, 3)
    givens, _ = worker.chain(frames, 0, {n: ahead[n] for n in worker.split.leading}, {})
    gray = next(s for s in worker.leading_stages() if "update:prev_gray" in s.result_keys)
    partial = [{k: v for k, v in g.items() if k != "update:prev_gray"} for g in givens]
    assert all(set(gray.result_keys) - {"update:prev_gray"} <= set(g) for g in partial)
    want = worker.front(frames, 0, None, ahead, {})
    got = worker.front(frames, 0, None, ahead, {}, givens=partial)
    for g, w in zip(got, want):
        assert_same_state({k: v for k, v in g.items() if k != "delayed"}, {k: v for k, v in w.items() if k != "delayed"})
    assert_same_state(got[-1]["delayed"], want[-1]["delayed"])


class _Counted:
    """A stage that counts its calls (by the stage's name, in `calls`)."""

    def __init__(self, stage, calls):
        self.stage, self.calls = stage, calls
        self.name, self.arg_keys, self.result_keys = stage.name, stage.arg_keys, stage.result_keys

    def __call__(self, env, index):
        self.calls[self.name] = self.calls.get(self.name, 0) + 1
        self.stage(env, index)


@pytest.mark.slow
def test_a_front_runs_again_only_the_stages_the_chain_does_not_hand_on():
    worker, ahead = _worker_at_start(_full_l2())
    calls: dict[str, int] = {}
    worker._delayed_stages = [_Counted(s, calls) for s in worker.delayed_stages()]
    frames = frames_of(SMALL, 4)
    leading = {n: ahead[n] for n in worker.split.leading}
    givens, _ = worker.chain(frames, 0, leading, {})
    chained = set(worker.leading_stages())
    assert calls == {s.name: len(frames) for s in chained}  # the chain: the leading stages alone
    calls.clear()
    worker.front(frames, 0, None, ahead, {}, givens=givens)
    handed = {s.name for s in chained if all(k in givens[0] for k in s.result_keys)}
    assert handed  # the sharpness and the history's push
    assert calls == {s.name: len(frames) for s in worker.delayed_stages() if s.name not in handed}


@pytest.mark.slow
def test_a_front_given_the_prepass_images_too_runs_none_of_the_chains_stages(monkeypatch):
    """The prepass hands each frame's images (the gray frame: an image here, larger than `GIVEN_BYTES`) as it
    computes them, to be copied at once (its buffers serve its next frame); given them and the chain's
    hand-ons, a front runs none of the chain's stages and gives what a whole front gives."""
    monkeypatch.setattr(chunk_worker, "GIVEN_BYTES", SMALL[0] * SMALL[1] * 4 - 1)
    worker, ahead = _worker_at_start(_full_l2())
    frames = frames_of(SMALL, 4)
    images: list[dict] = [{} for _ in frames]
    computed = worker.prepass(frames, 0, {}, lambda k, got: images[k].update({n: v.copy() for n, v in got.items()}))
    assert all(images) and not any(k in c for i, c in zip(images, computed) for k in i)
    givens, _ = worker.chain(frames, 0, {n: ahead[n] for n in worker.split.leading}, {}, computed)
    want = worker.front(frames, 0, None, ahead, {})
    calls: dict[str, int] = {}
    worker._delayed_stages = [_Counted(s, calls) for s in worker.delayed_stages()]
    got = worker.front(frames, 0, None, ahead, {}, givens=[{**i, **g} for i, g in zip(images, givens)])
    chained = {s.name for s in worker.leading_stages()}
    assert calls == {s.name: len(frames) for s in worker.delayed_stages() if s.name not in chained}
    for g, w in zip(got, want):
        assert_same_state({k: v for k, v in g.items() if k != "delayed"}, {k: v for k, v in w.items() if k != "delayed"})
    assert_same_state(got[-1]["delayed"], want[-1]["delayed"])


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(chained_leading())])
def test_processes_state_is_up_to_date_when_a_run_is_left(make):
    """The caller brings the delayed inputs up once, at the run's end — also when the loop is left early: the
    state is then the sequential run's after the last chunk delivered."""
    a, b = make(), make()
    frames = frames_of(SMALL, 10)
    sequential(a, frames[:4])
    got = []
    for out in b.run_video(frames, workers=2, engine="processes", chunk=2):
        got.append(out)
        if len(got) == 4:
            break
    assert_same_state(b.state, a.state)


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


@pytest.mark.slow
@pytest.mark.parametrize("gate", sorted(GATES))
def test_processes_equal_sequential_with_the_gate(gate):
    """The blur gate reads the history before each frame: a chunk that starts from the wrong one (the run's, not
    the chain's) gates other frames. The auto gate skips frames 8, 28, 29 and 48, two of them a chunk's first."""
    def make():
        return compile_text(small_l2_text(), mode="balanced", weights=GATES[gate], passes=passes("balanced"))

    a, b = make(), make()
    frames = frames_of(SMALL)
    want, skipped = gated_frames(a, frames)
    assert skipped, "the gate skipped no frame: the test would not see a chunk start from the wrong history"
    for chunk in (4, 8):
        b.reset()
        assert_same(list(b.run_video(frames, workers=2, engine="processes", chunk=chunk)), want)
        assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_processes_equal_sequential_when_the_gate_reads_a_freshly_pushed_history():
    """The gate's threshold is the median of the sharpness history as the frame before left it, pushed: an
    update that reads another recurrence's new value. The processes engine runs it after that push (a pass
    over the chunk's frames without their recurrences has no such value) and gives the sequential bytes."""
    def make():
        return compile_text(gate_reads_a_fresh_median(), mode="balanced", weights=GATES["auto"],
                            passes=passes("balanced"))

    a, b = make(), make()
    frames = frames_of(SMALL)
    want, skipped = gated_frames(a, frames)
    assert skipped, "the gate skipped no frame: the test would not see a wrong threshold"
    for chunk in (4, 8):
        b.reset()
        assert_same(list(b.run_video(frames, workers=2, engine="processes", chunk=chunk)), want)
        assert_same_state(b.state, a.state)


def _threads_that_run(monkeypatch, method):
    """The names of the threads that run `pool.local.<method>` for each chunk of a 3-chunk run."""
    b = compiled(small_l2_text())
    list(b.run_video(frames_of(SMALL, 4), workers=2, engine="processes", chunk=2))
    pool = processes.pool_for(b, b.program, 2, chain=True)
    assert len(pool.pids()) == 2
    threads, real = [], getattr(pool.local, method)

    def recorded(*args):
        threads.append(threading.current_thread().name)
        return real(*args)

    monkeypatch.setattr(pool.local, method, recorded)
    b.reset()
    list(b.run_video(frames_of(SMALL, 6), workers=2, engine="processes", chunk=2))
    assert len(threads) == 3
    return threads


def test_the_chain_runs_in_a_thread_of_the_caller_not_a_process_of_its_own(monkeypatch):
    """The chain thread, so the caller's own thread writes blocks while the next chunk's chain runs."""
    assert all(name.startswith("cortex-chain") for name in _threads_that_run(monkeypatch, "chain"))


def test_prepasses_run_on_threads_of_their_own(monkeypatch):
    """Chunks' prepasses run on the caller's prepass threads (one per 4 workers), ahead of the chain."""
    assert [processes.prepass_threads(w) for w in (1, 2, 4, 8, 16)] == [1, 1, 1, 2, 4]
    assert all(name.startswith("cortex-prepass") for name in _threads_that_run(monkeypatch, "prepass"))


@pytest.mark.slow
@pytest.mark.parametrize("make", [_full_l2, lambda: compiled(small_l2_text()), lambda: compiled(chained_leading()),
                                  lambda: compiled(gate_reads_a_fresh_median())])
def test_a_chain_after_its_prepass_equals_the_whole_chain(make):
    """`prepass` (the leading stages that read no recurrence, chunks side by side) then `chain` over its results:
    the same hand-ons and leading values as the chain alone, and the chain then runs only the stages that read
    the recurrences."""
    worker, start = _worker_at_start(make())
    leading = {n: start[n] for n in worker.split.leading}
    frames = frames_of(SMALL, 5)
    want = worker.chain(frames, 2, leading, {})
    local = worker.local_stages()
    assert local and len(local) < len(worker.leading_stages())
    assert not any(k.startswith("state:") for s in local for k in s.arg_keys)
    calls: dict[str, int] = {}
    worker._leading_stages = [_Counted(s, calls) for s in worker.leading_stages()]
    worker._local_stages = [s for s in worker._leading_stages if s.stage in local]
    computed = worker.prepass(frames, 2, {})
    assert calls == {s.name: len(frames) for s in local}
    calls.clear()
    got = worker.chain(frames, 2, leading, {}, computed)
    assert calls == {s.name: len(frames) for s in worker.leading_stages() if s.stage not in local}
    assert_same_state(got[1], want[1])
    for g, w in zip(got[0], want[0]):
        assert_same_state(g, w)
