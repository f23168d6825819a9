"""Leading recurrences: the blur gate's sharpness history runs ahead, in order, with the delayed part.

The blur gate reads `window_median(sharpness_history)`, a recurrence. The
frame split must keep the gate (and so the skipped heavy stages) in the
frame-parallel part: `sharpness_history` is classified *leading* from the IR
(its update reads only itself and the frame, and an `scf.if` condition reads
it), runs in the delayed part, and every engine stays bit-identical to the
sequential run with the auto gate (blur_fraction 0.5) and a fixed threshold.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import SMALL, chained_leading, small_l2_text
from helpers.scheduling import (
    GATES,
    MODES,
    assert_same,
    assert_same_state,
    compile_text,
    entry_of,
    frames_of,
    gated_frames,
    keys,
    passes,
    run_parts_reference_with,
    sequential,
)
from xdsl.dialects import scf

import cortex
from cortex.dialects.abi import SPLIT_ARGS as ARGS_ATTR
from cortex.dialects.abi import SPLIT_RESULTS as RESULTS_ATTR
from cortex.passes.frame_split import split_entry
from cortex.passes.schedule import render_schedule
from cortex.passes.state_analysis import classify_states
from cortex.runtime.threads import run_split_sequential
from cortex.semantics.modes import INPUT_DEFAULTS


def compiled(mode, gate, text=None):
    return compile_text(text or small_l2_text(), mode=mode, weights=GATES[gate], passes=passes(mode))


def test_sharpness_history_is_leading_and_says_why():
    classes = classify_states(entry_of(cortex.parse(small_l2_text())))
    assert {n: c.kind for n, c in classes.items()} == {
        "prev_gray": "delayed", "prev_score": "recurrence", "sharpness_history": "leading"}
    reason = classes["sharpness_history"].reason
    assert "%blurred" in reason and "reads only itself and the frame" in reason
    out = render_schedule(cortex.parse(small_l2_text()), "l2_frame", 2)
    assert "sharpness_history: leading recurrence — " in out and "prev_score: recurrence — " in out


def test_the_gate_stays_in_the_parallel_part():
    module = cortex.parse(small_l2_text())
    by = {p.sym_name.data.split("__")[1]: p for p in split_entry(module, "l2_frame")}
    module.verify()
    assert "update:sharpness_history" in keys(by["delayed"], RESULTS_ATTR)
    assert "state:sharpness_history" in keys(by["delayed"], ARGS_ATTR)
    assert "state:sharpness_history" in keys(by["parallel"], ARGS_ATTR)  # the median of frame n-1's history
    assert "state:sharpness_history" not in keys(by["recurrence"], ARGS_ATTR)
    ops = {name: [o.name for o in fn.walk()] for name, fn in by.items()}
    assert "cortex.window_push" in ops["delayed"] and "cortex.window_median" in ops["parallel"]
    assert "cortex.text_roi" in ops["parallel"] and "cortex.text_roi" not in ops["recurrence"]
    gate = next(o for o in by["parallel"].walk() if isinstance(o, scf.IfOp))
    assert [o.name for o in gate.true_region.block.ops if o.name.startswith("cortex.")] == ["cortex.constant"]


def test_a_recurrence_no_gate_reads_is_not_leading():
    """A counter that reads only itself stays in the recurrence part: nothing would run earlier for it."""
    text = small_l2_text().replace(
        "    func.return",
        '    %n = cortex.state "n" : tensor<1xf32>\n'
        "    %one = cortex.constant dense<1.000000e+00> : tensor<1xf32>\n"
        "    %n1 = cortex.add %n, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>\n"
        '    cortex.update_state "n" = %n1 : tensor<1xf32>\n    func.return',
    )
    classes = classify_states(entry_of(cortex.parse(text)))
    assert classes["n"].kind == "recurrence" and classes["sharpness_history"].kind == "leading"


@pytest.mark.parametrize("gate", sorted(GATES))
def test_parts_equal_the_entry_under_the_reference_interpreter(gate):
    frames = frames_of(SMALL, 40)
    reference = cortex.reference(cortex.parse(small_l2_text()), mode="balanced", weights=GATES[gate])
    initial = dict(reference.state)
    expected = [reference(f) for f in frames]
    module = cortex.parse(small_l2_text())
    split_entry(module, "l2_frame")
    outputs, state = run_parts_reference_with(module, frames, initial, weights=GATES[gate])
    for got, want in zip(outputs, expected, strict=True):
        assert [np.asarray(g).tobytes() for g in got] == [np.asarray(w).tobytes() for w in want]
    for name, value in reference.state.items():
        assert np.asarray(state[name]).tobytes() == np.asarray(value).tobytes(), name


@pytest.mark.slow
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("gate", sorted(GATES))
def test_threads_equal_sequential_with_the_gate(mode, gate):
    frames = frames_of(SMALL)
    a, b = compiled(mode, gate), compiled(mode, gate)
    want, skipped = gated_frames(a, frames)
    assert skipped, "the gate skipped no frame: the test would not see a misplaced gate"
    assert_same(list(b.run_video(frames, workers=2, window=5)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_auto_and_fixed_gates_differ():
    """The runtime inputs reach the compiled pipeline: the two gates skip different frames."""
    frames = frames_of(SMALL)
    _, auto = gated_frames(compiled("balanced", "auto"), frames)
    every = cortex.compile(cortex.parse(small_l2_text()), mode="balanced", weights={**INPUT_DEFAULTS, "blur_threshold": 1e9})
    _, fixed = gated_frames(every, frames)
    assert auto == [8, 28, 29, 48] and fixed == list(range(1, len(frames)))


@pytest.mark.slow
@pytest.mark.parametrize("gate", sorted(GATES))
def test_concurrent_stages_equal_sequential_with_the_gate(gate):
    frames = frames_of(SMALL, 30)
    a = compiled("balanced", gate)
    b = cortex.compile(cortex.parse(small_l2_text()), mode="balanced", weights=GATES[gate])
    b.stage_threads = 2
    assert_same([b(f) for f in frames], sequential(a, frames))
    assert_same_state(b.state, a.state)


# ---------------------------------------------------------------- two chained leading recurrences


def test_a_recurrence_a_leading_one_reads_is_leading_too():
    """The classification is transitive: the gate reads `sharpness_history`, whose update reads `raw_history`."""
    classes = classify_states(entry_of(cortex.parse(chained_leading())))
    assert {n: c.kind for n, c in classes.items()} == {
        "prev_gray": "delayed", "prev_score": "recurrence", "sharpness_history": "leading", "raw_history": "leading"}
    assert "a leading recurrence reads it" in classes["raw_history"].reason


CHAINED_RUNS = {
    "parts-in-order": lambda c, frames: list(run_split_sequential(c, c.loaded_split(), frames)),
    "threads-2": lambda c, frames: list(c.run_video(frames, workers=2, window=4)),
    "threads-3": lambda c, frames: list(c.run_video(frames, workers=3)),
    "stages-2": lambda c, frames: [c(f) for f in frames],
}


@pytest.mark.slow
@pytest.mark.parametrize("engine", sorted(CHAINED_RUNS))
def test_chained_leading_recurrences_through_every_engine(engine):
    """Made non-transitive (`raw_history` left in the recurrence part), the caller ran
    `sharpness_history` ahead from a stale `raw_history` and the threaded run differed from the
    sequential one. The split's parts in order, frame threads and concurrent stages give the
    sequential call's bits and final state (Ray: tests/test_ray_engine.py)."""
    frames = frames_of(SMALL, 40)
    a = compiled("balanced", "auto", chained_leading())
    want, skipped = gated_frames(a, frames)
    assert skipped, "the gate skipped no frame: a stale history could not show"
    b = cortex.compile(cortex.parse(chained_leading()), mode="balanced", weights=GATES["auto"], passes=passes("balanced"))
    b.stage_threads = 2 if engine == "stages-2" else 1
    assert_same(CHAINED_RUNS[engine](b, frames), want)
    assert_same_state(b.state, a.state)
