"""Buffer ownership across frames: what a runner returns and what it was given stay the caller's.

A caller may write into a returned score map, or refill its frame buffer
for the next frame. Neither may change what the runner computes next: the
state a runner keeps must not share memory with its outputs or its inputs.
Mutation testing found that disabling the compiled runtime's alias check
passed every test; here, after every call, every returned array and the
input buffer are overwritten in place, and each frame's outputs (and the
final state) must equal those of a run whose buffers nobody touched. Both
runners, on a tensor graph built to alias (state = input, state = output,
output = input, output = a constant of the program) and on the L2 pipeline.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import REORDERED, assert_f32_close
from helpers.scheduling import snapshot, vandalise, with_stage_threads

import cortex
from cortex.video.synthetic import SyntheticVideo

ALIASING = """
func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
  %k = cortex.constant dense<1.5> : tensor<4x4xf32>
  %prev = cortex.state "prev" : tensor<4x4xf32>
  %acc = cortex.state "acc" : tensor<4x4xf32>
  %sum = cortex.add %acc, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  cortex.update_state "prev" = %x : tensor<4x4xf32>
  cortex.update_state "acc" = %sum : tensor<4x4xf32>
  func.return %prev, %sum, %x, %k : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
}
"""

RUNNERS = {
    "reference": cortex.reference,
    "compiled": cortex.compile,
    # concurrent stages (stage_threads > 1): the frame split's code path per call
    "compiled-stages": lambda module, **kw: with_stage_threads(cortex.compile(module, **kw), 2),
}


def run(make, frames, touch: bool):
    runner = make()
    outputs = []
    for frame in frames:
        buffer = frame.copy()
        got = runner(buffer)
        outputs.append(snapshot(got))
        if touch:
            for value in got:
                if isinstance(value, np.ndarray):
                    vandalise(value)
            vandalise(buffer)
    return outputs, {k: snapshot([v])[0] for k, v in runner.state.items()}


def assert_same_runs(a, b) -> None:
    (outs_a, state_a), (outs_b, state_b) = a, b
    for i, (x, y) in enumerate(zip(outs_a, outs_b)):
        for k, (u, v) in enumerate(zip(x, y)):
            np.testing.assert_array_equal(u, v, err_msg=f"frame {i}, output #{k}")
    assert state_a.keys() == state_b.keys()
    for name in state_a:
        np.testing.assert_array_equal(state_a[name], state_b[name], err_msg=f"state '{name}'")


@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_aliasing_graph_owns_its_state(kind):
    rng = np.random.default_rng(5)
    frames = [rng.uniform(-1, 1, (4, 4)).astype(np.float32) for _ in range(4)]
    module = cortex.parse(ALIASING)
    make = lambda: RUNNERS[kind](module, entry="main", mode=None)
    untouched, touched = run(make, frames, touch=False), run(make, frames, touch=True)
    assert_same_runs(untouched, touched)
    outs, _ = untouched
    np.testing.assert_array_equal(outs[2][0], frames[1])  # the graph does what it says: prev
    assert_f32_close(outs[2][1], frames[0] + frames[1] + frames[2], ulps=REORDERED)
    np.testing.assert_array_equal(outs[3][3], np.full((4, 4), 1.5, np.float32))  # the constant survived


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_l2_pipeline_owns_its_state(kind):
    module = cortex.build_l2_pipeline(96, 128, 32)
    frames = list(SyntheticVideo(96, 128).frames(4))
    make = lambda: RUNNERS[kind](module, mode="balanced")
    untouched, touched = run(make, frames, touch=False), run(make, frames, touch=True)
    assert_same_runs(untouched, touched)
    scores = [outs[1] for outs in untouched[0]]
    assert not np.array_equal(scores[1], scores[3])  # frames differ, so a stale state would show


UNCHANGED_STATE = """
func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  %kept = cortex.state "kept" : tensor<2xf32>
  %count = cortex.state "count" : tensor<2xf32>
  %one = cortex.constant dense<1.0> : tensor<2xf32>
  %next = cortex.add %count, %one : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  cortex.update_state "count" = %next : tensor<2xf32>
  func.return %kept, %next : tensor<2xf32>, tensor<2xf32>
}
"""


@pytest.mark.parametrize("kind", sorted(RUNNERS))
def test_state_returned_without_update_stays_the_runners(kind):
    """Regression: a state read and returned but not updated was handed out as is (both runners)."""
    frames = [np.zeros(2, np.float32)] * 3
    make = lambda: RUNNERS[kind](cortex.parse(UNCHANGED_STATE), entry="main", mode=None)
    untouched, touched = run(make, frames, touch=False), run(make, frames, touch=True)
    assert_same_runs(untouched, touched)
    outs, state = untouched
    np.testing.assert_array_equal(outs[2][0], np.zeros(2, np.float32))
    np.testing.assert_array_equal(state["count"], np.full(2, 3.0, np.float32))



# ---------------------------------------------------------------- run_video (the frame-split engines)
#
# Switching off the frame-split engines' own alias check (`SplitProgram.caller_state`) passed
# every test: the tests above cover the sequential runners only. `run_video` reads frames ahead, so the
# caller may overwrite a frame only once the run is over; a returned output is the caller's at once.


def run_video(make, frames, touch: bool, **options):
    """`run_video` over copies of `frames`: every output overwritten as it arrives, every frame after the run."""
    runner = make()
    buffers = [f.copy() for f in frames]
    outputs = []
    for got in runner.run_video(buffers, **options):
        outputs.append(snapshot(got))
        if touch:
            for value in got:
                if isinstance(value, np.ndarray):
                    vandalise(value)
    if touch:
        for buffer in buffers:
            vandalise(buffer)
    return outputs, {k: snapshot([v])[0] for k, v in runner.state.items()}


def sequential_run(make, frames):
    runner = make()
    outputs = [snapshot(runner(f.copy())) for f in frames]
    return outputs, {k: snapshot([v])[0] for k, v in runner.state.items()}


VIDEO_OPTIONS = {"threads-1": {"workers": 1}, "threads-2": {"workers": 2, "window": 3}}


@pytest.mark.parametrize("options", sorted(VIDEO_OPTIONS))
@pytest.mark.parametrize("text", [ALIASING, UNCHANGED_STATE], ids=["aliasing", "unchanged-state"])
def test_run_video_owns_its_state(text, options):
    rng = np.random.default_rng(6)
    shape = (4, 4) if text is ALIASING else (2,)
    frames = [rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(6)]
    make = lambda: cortex.compile(cortex.parse(text), entry="main", mode=None)
    want = sequential_run(make, frames)
    assert_same_runs(run_video(make, frames, touch=False, **VIDEO_OPTIONS[options]), want)
    assert_same_runs(run_video(make, frames, touch=True, **VIDEO_OPTIONS[options]), want)


@pytest.mark.slow
def test_run_video_l2_pipeline_owns_its_state():
    module = cortex.build_l2_pipeline(96, 128, 32)
    frames = list(SyntheticVideo(96, 128).frames(6))
    make = lambda: cortex.compile(module, mode="balanced")
    assert_same_runs(run_video(make, frames, touch=True, workers=2), sequential_run(make, frames))
