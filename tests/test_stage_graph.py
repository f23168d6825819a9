"""One call's stages as one dependency graph: the delayed part's stages beside the parallel part's.

`run_stages` runs each stage once, after every stage whose results it
reads, on the caller and the pool's threads; the L2 frame's text_roi stage
waits for gray and the sharpness only, not for the reused blurs that only
the next frame reads. A program saved before the delayed part had stages
runs that part whole, with the same values. No timing here
(benchmarks/bench_schedule.py measures the latency).
"""

from __future__ import annotations

import threading

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.program_archive import edited
from helpers.scheduling import assert_same, assert_same_state, frames_of, passes, sequential
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.runtime.threads import run_stages, stage_pool


class FakeStage:
    """A stage reading and writing wiring keys; it records when it ran and checks its inputs were there."""

    def __init__(self, name: str, reads: list[str], writes: list[str], log: list[str], fail: bool = False):
        self.name, self.arg_keys, self.result_keys, self.log, self.fail = name, reads, writes, log, fail
        self.lock = threading.Lock()

    def __call__(self, env, index):
        missing = [k for k in self.arg_keys if k not in env]
        assert not missing, f"{self.name} ran before {missing} were computed"
        with self.lock:
            self.log.append(self.name)
        if self.fail:
            raise CortexError(f"frame {index}: the {self.name} part failed")
        for key in self.result_keys:
            env[key] = self.name


@st.composite
def stage_graphs(draw):
    """Stages in a topological order, each reading results of earlier ones (and the frame's input)."""
    n = draw(st.integers(1, 9))
    reads = [draw(st.sets(st.integers(0, k - 1), max_size=3)) if k else set() for k in range(n)]
    return n, [sorted(r) for r in reads]


@settings(max_examples=60, deadline=None)
@given(graph=stage_graphs(), workers=st.integers(2, 4), seed=st.randoms(use_true_random=False))
def test_every_stage_runs_once_after_what_it_reads(graph, workers, seed):
    n, reads = graph
    log: list[str] = []
    stages = [FakeStage(f"s{k}", ["input:0", *(f"stage:{r}" for r in reads[k])], [f"stage:{k}"], log) for k in range(n)]
    seed.shuffle(stages)  # the graph is read from the keys, not from the list's order
    env = {"input:0": 0}
    with stage_pool(workers) as pool:
        run_stages(stages, env, 7, pool)
    assert sorted(log) == sorted(s.name for s in stages)
    assert all(env[f"stage:{k}"] == f"s{k}" for k in range(n))
    position = {name: i for i, name in enumerate(log)}
    for k in range(n):
        assert all(position[f"s{r}"] < position[f"s{k}"] for r in reads[k])


@pytest.mark.parametrize("workers", [2, 3])
def test_a_failing_stage_is_raised_and_what_reads_it_never_runs(workers):
    log: list[str] = []
    stages = [
        FakeStage("gray", ["input:0"], ["ahead:0"], log),
        FakeStage("broken", ["ahead:0"], ["stage:0"], log, fail=True),
        FakeStage("after", ["stage:0"], ["stage:1"], log),
        FakeStage("beside", ["ahead:0"], ["stage:2"], log),
    ]
    with stage_pool(workers) as pool, pytest.raises(CortexError, match=r"^frame 3: the broken part failed$"):
        run_stages(stages, {"input:0": 0}, 3, pool)
    assert "after" not in log and log[0] == "gray"


def test_no_stages_is_no_work():
    with stage_pool(2) as pool:
        run_stages([], {}, None, pool)


# ---------------------------------------------------------------- the L2 frame's graph

STAGED = cortex.compile(cortex.parse(small_l2_text()), passes=passes("balanced"))
STAGED.stage_threads = 2


def producers(split) -> dict[str, set[str]]:
    """For each stage of one call's graph, every stage it waits for, directly or not."""
    stages = [*split.delayed_stages, *split.stages]
    made_by = {key: s.name for s in stages for key in s.result_keys}
    direct = {s.name: {made_by[k] for k in s.arg_keys if k in made_by} - {s.name} for s in stages}
    closed: dict[str, set[str]] = {}

    def walk(name: str) -> set[str]:
        if name not in closed:
            closed[name] = set().union(*({d} | walk(d) for d in direct[name])) if direct[name] else set()
        return closed[name]

    return {s.name: walk(s.name) for s in stages}


def calling(split, extern: str) -> list[str]:
    """The stages whose generated code calls `extern`, in graph order (the delayed part's first)."""
    return [s.name for s in [*split.delayed_stages, *split.stages] if extern in s.fn.__code__.co_names]


def test_text_roi_waits_for_gray_and_the_sharpness_not_for_the_reused_blurs():
    split = STAGED.loaded_split(stages=True)
    assert [s.name for s in split.delayed_stages] == [f"delayed stage {k}" for k in range(len(split.delayed_stages))]
    waits = producers(split)
    [text] = calling(split, "_x_cortex_text_roi")
    [sharpness] = calling(split, "_x_cortex_blur_detector")
    reused, scene = calling(split, "_x_cortex_gaussian_blur")  # G(x), G(x²) of this frame; then G(x·y)
    gray = next(s.name for s in split.delayed_stages if "input:0" in s.arg_keys)
    assert reused.startswith("delayed stage") and scene.startswith("parallel stage")
    assert waits[text] == {gray, sharpness}  # without the stage graph: the whole delayed part
    assert reused in waits[scene]


def without_delayed_stages(data: bytes) -> bytes:
    """The program as a runtime without the stage graph saved it: no "delayed_stages" in its split."""
    def drop(doc):
        assert doc["split"]["delayed_stages"]
        del doc["split"]["delayed_stages"]

    return edited(data, drop)


def test_a_program_saved_without_delayed_stages_runs_that_part_whole(tmp_path):
    path = tmp_path / "old.cortex"
    path.write_bytes(without_delayed_stages(STAGED.program.to_bytes()))
    old = cortex.load(path, stage_threads=2)
    assert old.program.frame_split().delayed_stages == () and not old.loaded_split(stages=True).delayed_stages
    frames = frames_of(SMALL, 12)
    STAGED.reset()
    want = sequential(STAGED, frames)
    assert_same(sequential(old, frames), want)
    assert_same_state(old.state, STAGED.state)
