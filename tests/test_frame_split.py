"""cortex-frame-split and cortex-schedule: state classes from the IR, the four parts, their semantics.

The parts are checked against the entry with the reference interpreter:
running delayed → parallel → recurrence → tail frame after frame, wiring
them by their `cortex.split_args`/`split_results` keys, must give exactly
the entry's outputs and states (blurred frames and scene cuts included).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import (
    SMALL,
    small_l2_text,
    updated_in_a_branch,
    with_extra_states,
)
from helpers.scheduling import entry_of, keys, run_parts_reference_with
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import scf

import cortex
from cortex.dialects.abi import FRAME_PARTS as PARTS
from cortex.dialects.abi import SPLIT_ARGS as ARGS_ATTR
from cortex.dialects.abi import SPLIT_RESULTS as RESULTS_ATTR
from cortex.passes.frame_split import split_entry
from cortex.passes.outlining import FrameSplitError
from cortex.passes.schedule import (
    ThroughputBound,
    critical_path,
    list_schedule,
    render_schedule,
    speed_up,
    stage_graph,
)
from cortex.passes.state_analysis import classify_states
from cortex.video.synthetic import SyntheticVideo


def test_l2_states_are_classified_from_the_ir():
    classes = classify_states(entry_of(cortex.parse(small_l2_text())))
    assert classes["prev_gray"].kind == "delayed"
    assert "reads no state" in classes["prev_gray"].reason and "%gray" in classes["prev_gray"].reason
    assert classes["prev_score"].kind == "recurrence"
    assert "'prev_score'" in classes["prev_score"].reason and "temporal_smooth" in classes["prev_score"].reason


def test_extra_states_are_classified_by_their_dataflow_not_their_names():
    classes = classify_states(entry_of(cortex.parse(with_extra_states())))
    assert {n: c.kind for n, c in classes.items()} == {
        "prev_gray": "delayed",
        "prev_score": "recurrence",
        "count": "recurrence",
        "mean_motion": "recurrence",
        "prev_center": "delayed",
        "sharpness_history": "leading",  # the blur gate reads it; count and mean_motion nothing gates on
    }
    assert "'count' (in cortex.add)" in classes["count"].reason


def test_renamed_states_keep_their_class():
    text = small_l2_text().replace('"prev_gray"', '"zz_a"').replace('"prev_score"', '"zz_b"')
    classes = classify_states(entry_of(cortex.parse(text)))
    assert classes["zz_a"].kind == "delayed" and classes["zz_b"].kind == "recurrence"


def test_split_parts_and_where_the_blur_gate_goes():
    module = cortex.parse(small_l2_text())
    parts = split_entry(module, "l2_frame")
    module.verify()
    assert [p.sym_name.data for p in parts] == [f"l2_frame__{p}" for p in PARTS]
    ops = {p.sym_name.data.split("__")[1]: [o.name for o in p.walk()] for p in parts}
    assert "cortex.gray" in ops["delayed"] and "cortex.text_roi" not in ops["delayed"]
    for heavy in ("cortex.text_roi", "cortex.scene_change", "cortex.saliency_dft", "cortex.motion_map", "cortex.score_fusion"):
        assert heavy in ops["parallel"] and heavy not in ops["recurrence"] + ops["tail"]
    assert ops["recurrence"].count("cortex.temporal_smooth") == 1 and "cortex.text_roi" not in ops["recurrence"]
    assert "cortex.encoder" in ops["tail"]
    # the gate is in both the parallel and the recurrence part, on the same condition
    assert ops["parallel"].count("scf.if") == 1 and ops["recurrence"].count("scf.if") == 1
    assert not any(o.startswith("cortex.state") or o == "cortex.update_state" for p in ops.values() for o in p)
    by = {p.sym_name.data.split("__")[1]: p for p in parts}
    assert keys(by["parallel"], ARGS_ATTR).count("state:prev_gray") == 1
    assert "state:prev_score" in keys(by["recurrence"], ARGS_ATTR)
    assert "update:prev_gray" in keys(by["delayed"], RESULTS_ATTR)
    assert "update:prev_score" in keys(by["recurrence"], RESULTS_ATTR)
    assert keys(by["tail"], RESULTS_ATTR) == ["output:0", "output:1"]
    gate = next(o for o in by["parallel"].walk() if isinstance(o, scf.IfOp))
    assert [o.name for o in gate.true_region.block.ops if o.name.startswith("cortex.")] == ["cortex.constant"]  # blurred: nothing heavy


def test_unsplittable_entry_says_why():
    module = cortex.parse(updated_in_a_branch())
    with pytest.raises(FrameSplitError, match="updated inside 'scf.if'.*top level"):
        split_entry(module, "l2_frame")
    out = render_schedule(cortex.parse(updated_in_a_branch()), "l2_frame", 2)
    assert "frame-parallel: not possible — " in out and "top level" in out


@pytest.mark.parametrize("text", [small_l2_text(), with_extra_states()], ids=["l2", "extra-states"])
def test_parts_equal_the_entry_under_the_reference_interpreter(text):
    video = SyntheticVideo(*SMALL)
    frames = [video.frame(i) for i in range(6, 31)]  # blurred 8, 28, 29; a cut at 20
    reference = cortex.reference(cortex.parse(text), mode="balanced")
    expected = [reference(f) for f in frames]
    module = cortex.parse(text)
    split_entry(module, "l2_frame")
    fresh = cortex.reference(cortex.parse(text), mode="balanced")
    initial = dict(fresh.state)
    outputs, state = run_parts_reference_with(module, frames, initial)
    assert len(outputs) == len(expected)
    for got, want in zip(outputs, expected):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert np.asarray(g).tobytes() == np.asarray(w).tobytes()
    for name, value in reference.state.items():
        assert np.asarray(state[name]).tobytes() == np.asarray(value).tobytes(), name


def test_schedule_report_reads_profile_times():
    module = cortex.parse(small_l2_text())
    ms = {"cortex.gray": 1.0, "cortex.blur_detector": 1.0, "cortex.scene_change": 10.0, "cortex.text_roi": 30.0,
          "cortex.saliency_dft": 3.0, "cortex.motion_map": 1.0, "cortex.center_crop": 0.5,
          "cortex.score_fusion": 0.5, "cortex.temporal_smooth": 0.1, "cortex.encoder": 6.0}
    from xdsl.dialects.builtin import FloatAttr, f64

    for op in module.walk():
        if op.name in ms:
            op.attributes["cortex.profile_ms"] = FloatAttr(ms[op.name], f64)
    stages = stage_graph(entry_of(module))
    length, path = critical_path(stages)
    assert [s.op.name.removeprefix("cortex.") for s in path] == [
        "gray", "blur_detector", "text_roi", "score_fusion", "temporal_smooth", "encoder"]
    assert length == pytest.approx(1 + 1 + 30 + 0.5 + 0.1 + 6)
    makespan, assigned = list_schedule(stages, 2)
    assert length <= makespan < sum(ms.values())
    assert sorted(s.name for w in assigned for s in w) == sorted(s.name for s in stages)
    one, _ = list_schedule(stages, 1)
    assert one == pytest.approx(sum(ms.values()))
    out = render_schedule(module, "l2_frame", 2)
    assert "prev_gray: delayed input" in out and "prev_score: recurrence" in out
    assert "critical path (one frame): gray → sharpness → text → fused → smoothed → encoded" in out
    assert "recurrence 0.10 ms" in out and "limited by 2 workers" in out
    # the concurrent-stage latency is said as a speed-up (it printed "(0.69×)" where 1.45× faster was meant)
    total = sum(ms.values())
    assert f"sequential {total:.2f} ms: {total / makespan:.2f}× faster ({makespan / total:.2f} of the sequential time)" in out


def test_latency_gain_reads_one_way():
    assert speed_up(45.75, 31.5) == "1.45× faster (0.69 of the sequential time)"
    assert speed_up(10.0, 20.0) == "0.50× faster (2.00 of the sequential time)"
    assert speed_up(10.0, 0.0) == "no time measured"


def test_throughput_bound_counts_the_delayed_chain_and_the_caller():
    """max(work/N, delayed, recurrence) pipelined; max(work/N, delayed + recurrence) with the delayed part on the caller."""
    few = ThroughputBound(work_ms=40.0, delayed_ms=5.0, recurrence_ms=1.0, workers=2)
    assert few.frame_ms == 20.0 and few.limit == "2 workers"
    many = ThroughputBound(work_ms=40.0, delayed_ms=5.0, recurrence_ms=1.0, workers=16)
    assert many.frame_ms == 5.0 and many.limit == "the delayed chain"
    caller = ThroughputBound(work_ms=40.0, delayed_ms=5.0, recurrence_ms=1.0, workers=16, pipelined=False)
    assert caller.frame_ms == 6.0 and caller.limit == "the caller's serial work"
    slow_recurrence = ThroughputBound(work_ms=40.0, delayed_ms=5.0, recurrence_ms=7.0, workers=16)
    assert slow_recurrence.frame_ms == 7.0 and slow_recurrence.limit == "the recurrence chain"
    assert many.explain() == "max(work/16 2.50 ms, delayed 5.00 ms, recurrence 1.00 ms) = 5.00 ms"


def test_schedule_without_profile_flags_unmeasured_stages():
    out = render_schedule(cortex.parse(small_l2_text()), "l2_frame", 3)
    assert "not measured for" in out and "on 3 workers" in out


# ----------------------------------------------------------------------- random pipelines (Hypothesis)

@st.composite
def state_pipelines(draw):
    """A random entry over x: tensor<4xf32> with 1–3 states; returns (text, {state: reads a state?})."""
    n_states = draw(st.integers(1, 3))
    names = [f"s{i}" for i in range(n_states)]
    lines, pool, reads = [], ["%x"], {"%x": False}
    for n in names:
        lines.append(f'    %{n} = cortex.state "{n}" : tensor<4xf32>')
        pool.append(f"%{n}")
        reads[f"%{n}"] = True
    for k in range(draw(st.integers(0, 5))):
        op = draw(st.sampled_from(["add", "sub", "mul"]))
        a, b = draw(st.sampled_from(pool)), draw(st.sampled_from(pool))
        lines.append(f"    %v{k} = cortex.{op} {a}, {b} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>")
        pool.append(f"%v{k}")
        reads[f"%v{k}"] = reads[a] or reads[b]
    truth = {}
    for n in names:
        value = draw(st.sampled_from(pool))
        lines.append(f'    cortex.update_state "{n}" = {value} : tensor<4xf32>')
        truth[n] = "recurrence" if reads[value] else "delayed"
    out = draw(st.sampled_from(pool))
    body = "\n".join(lines)
    text = (f"builtin.module {{\n  func.func @l2_frame(%x: tensor<4xf32>) -> tensor<4xf32> {{\n{body}\n"
            f"    func.return {out} : tensor<4xf32>\n  }}\n}}\n")
    return text, truth


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=state_pipelines(), seed=st.integers(0, 2**16))
def test_random_pipelines_classified_and_split_exactly(case, seed):
    text, truth = case
    classes = classify_states(entry_of(cortex.parse(text)))
    assert {n: c.kind for n, c in classes.items()} == truth
    module = cortex.parse(text)
    split_entry(module, "l2_frame")
    module.verify()
    rng = np.random.default_rng(seed)
    inputs = [rng.uniform(-2, 2, 4).astype(np.float32) for _ in range(4)]
    reference = cortex.reference(cortex.parse(text), mode=None, weights={})
    initial = dict(reference.state)
    expected = [reference(x) for x in inputs]
    outputs, state = run_parts_reference_with(module, inputs, initial, mode=None)
    for got, want in zip(outputs, expected):
        assert [np.asarray(g).tobytes() for g in got] == [np.asarray(w).tobytes() for w in want]
    for name, value in reference.state.items():
        assert np.asarray(state[name]).tobytes() == np.asarray(value).tobytes()


def test_state_updated_with_a_state_read_directly_is_a_recurrence():
    """Regression (found by the property test): the reader was the update itself, outside the slice."""
    text = """builtin.module {
  func.func @l2_frame(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s0 = cortex.state "s0" : tensor<4xf32>
    %s1 = cortex.state "s1" : tensor<4xf32>
    cortex.update_state "s0" = %s0 : tensor<4xf32>
    cortex.update_state "s1" = %s0 : tensor<4xf32>
    func.return %x : tensor<4xf32>
  }
}
"""
    classes = classify_states(entry_of(cortex.parse(text)))
    assert classes["s0"].kind == classes["s1"].kind == "recurrence"
    assert "'s0' (in cortex.update_state)" in classes["s1"].reason


def test_splitting_a_missing_function_names_it_and_the_purpose():
    from cortex.passes.frame_split import split_entry
    from cortex.passes.outlining import FrameSplitError
    from cortex.passes.stage_split import split_stages

    module = cortex.build_l2_pipeline(64, 64)
    before = cortex.to_text(module)
    with pytest.raises(FrameSplitError, match=r"no function '@nope' to split$"):
        split_entry(module, "nope")
    with pytest.raises(FrameSplitError, match=r"no function '@nope' to split into stages$"):
        split_stages(module, "nope")
    assert cortex.to_text(module) == before
