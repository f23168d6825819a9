"""compiled.stage_threads = N: one frame's independent stages at once, the sequential call's exact values.

Also the stage split itself: one function per stage, each gated stage with
its own copy of the blur gate. No timing here (benchmarks/bench_schedule.py).
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text, with_extra_states
from helpers.scheduling import (
    MODES,
    assert_same,
    assert_same_state,
    frames_of,
    passes,
    sequential,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, scf

import cortex
from cortex.dialects.abi import SPLIT_ARGS
from cortex.ir import CortexError
from cortex.passes.frame_split import split_entry
from cortex.passes.stage_split import split_stages


def staged(text, mode="balanced", threads=2):
    compiled = cortex.compile(cortex.parse(text), mode=mode, passes=passes(mode))
    compiled.stage_threads = threads
    return compiled


def stage_threads():
    return {t for t in threading.enumerate() if t.name.startswith("cortex-stage")}


def assert_threads_end(started, workers):
    """The stage threads a pipeline started (`started`) were kept for its next call, and end once it is gone."""
    assert len(started) == workers - 1  # the caller runs stages too
    gc.collect()
    for t in started:
        t.join(timeout=10)
    assert not any(t.is_alive() for t in started)


def test_stage_split_gives_one_function_per_stage_each_gated_one_with_its_gate():
    module = cortex.parse(small_l2_text())
    split_entry(module, "l2_frame")
    stages = split_stages(module, "l2_frame__parallel")
    module.verify()
    heavy = {}
    for fn in stages:
        gate = ("cortex.constant", "cortex.window_median", "cortex.weight")  # each stage computes the gate itself
        names = [o.name for o in fn.walk() if o.name.startswith("cortex.") and o.name not in gate]
        for n in names:
            heavy[n] = fn
        if any(n in names for n in ("cortex.text_roi", "cortex.scene_change", "cortex.saliency_dft", "cortex.motion_map")):
            assert len(names) == 1  # alone in its function, so it can run beside the others
            assert sum(isinstance(o, scf.IfOp) for o in fn.walk()) == 1  # under its own copy of the gate
    assert heavy["cortex.text_roi"] is not heavy["cortex.scene_change"]
    assert not any(isinstance(o, func.FuncOp) and o.sym_name.data == "l2_frame__parallel" for o in module.ops)
    # The gate is no stage of its own, so no gated stage waits for another stage;
    # only the fusion (the last stage) reads other stages' values
    reads = [[k.data for k in fn.attributes[SPLIT_ARGS].data] for fn in stages]
    assert all(not k.startswith("stage:") for keys in reads[:-1] for k in keys)
    assert any(k.startswith("stage:") for k in reads[-1])


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
def test_concurrent_stages_equal_the_sequential_call(mode):
    frames = frames_of(SMALL)
    a, b = cortex.compile(cortex.parse(small_l2_text()), mode=mode, passes=passes(mode)), staged(small_l2_text(), mode)
    before = stage_threads()
    assert_same([b(f) for f in frames], sequential(a, frames))
    assert_same_state(b.state, a.state)
    started, workers = stage_threads() - before, b.stage_threads
    del b
    assert_threads_end(started, workers)


@pytest.mark.slow
def test_concurrent_stages_with_extra_states_and_runtime_weights():
    frames = frames_of(SMALL, 40)
    for specialise in (True, False):
        p = passes("motion") if specialise else None
        a = cortex.compile(cortex.parse(with_extra_states()), mode="motion", passes=p)
        b = cortex.compile(cortex.parse(with_extra_states()), mode="motion", passes=p)
        b.stage_threads = 3
        assert_same([b(f) for f in frames], sequential(a, frames))
        assert_same_state(b.state, a.state)


@settings(max_examples=8, deadline=None)
@given(workers=st.integers(2, 5), start=st.integers(0, 50), n=st.integers(1, 6))
def test_any_worker_count_gives_the_sequential_values(workers, start, n):
    frames = frames_of(SMALL, n, start)
    a, b = SEQUENTIAL, STAGED
    a.reset()
    b.reset()
    b.stage_threads = workers
    assert_same([b(f) for f in frames], sequential(a, frames))
    assert_same_state(b.state, a.state)


SEQUENTIAL = cortex.compile(cortex.parse(small_l2_text()), passes=passes("balanced"))
STAGED = staged(small_l2_text())


@pytest.mark.slow
def test_a_failing_stage_stops_the_call_with_its_name():
    b = staged(small_l2_text())
    program = b.loaded_split(stages=True)
    text_stage = next(s for s in program.stages if "_x_cortex_text_roi" in s.fn.__code__.co_names)

    def broken(*args):
        raise CortexError("'cortex.text_roi' failed: error: injected")

    namespace = text_stage.fn.__globals__
    original = namespace["_x_cortex_text_roi"]
    namespace["_x_cortex_text_roi"] = broken
    before = stage_threads()
    try:
        with pytest.raises(CortexError, match=r"^'cortex.text_roi' failed: error: injected$"):
            b(frames_of(SMALL, 1)[0])
    finally:
        namespace["_x_cortex_text_roi"] = original
    frame = frames_of(SMALL, 1)[0]
    b.reset()
    SEQUENTIAL.reset()
    assert_same([b(frame)], sequential(SEQUENTIAL, [frame]))  # the next call runs whole again
    started, workers = stage_threads() - before, b.stage_threads
    del b
    assert_threads_end(started, workers)


def test_stage_threads_must_be_a_positive_integer():
    with pytest.raises(CortexError, match="stage_threads must be a whole number from 1 to 4096, got 0"):
        SEQUENTIAL.stage_threads = 0
    assert SEQUENTIAL.stage_threads == 1


@pytest.mark.slow
def test_profiling_runs_in_order():
    b = staged(small_l2_text())
    b.profiling = True
    b(frames_of(SMALL, 1)[0])
    assert "text" in b.profile() and np.isfinite(sum(b.profile().values()))


@pytest.mark.parametrize("name", ["unoptimized_model", "linear_bn", "conv_bn", "gelu_tanh"])
def test_stateless_tensor_graphs_run_staged_and_frame_parallel(name):
    """No state at all: every part but the parallel one is trivial; several inputs per call (tuples)."""
    from cortex.examples.tensor_graphs import EXAMPLES

    spec = EXAMPLES[name]

    def build(threads=1):
        compiled = cortex.compile(cortex.parse(spec.text()), entry=spec.entry, mode=None, weights={})
        compiled.stage_threads = threads
        return compiled

    inputs = [spec.make_inputs(i) for i in range(5)]
    want = [build()(*x) for x in inputs]
    assert_same(list(build().run_video(inputs, workers=2)), want)
    staged_graph = build(threads=2)
    assert_same([staged_graph(*x) for x in inputs], want)
