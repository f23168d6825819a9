"""One program for every mode: a variant per mode, picked per call, over one named state.

Checked: the options (`modes="all"`, a list, rows of one's own, the mistakes); per-frame random modes over
a real clip equal the single-mode program of each frame's mode continued from the carried state (bit for
bit) and the multi-mode reference (float32 rounding); a pipeline whose states only some modes read
(`examples/motion_trail.mlir`) stays right across switches where per-mode programs swapped by hand do
not; save/load keeps every variant; `run_video(modes=...)` equals the calls.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers.modes import FRAMES, MODES, SHAPE, TRAIL, same
from helpers.shared_memory import private_shm_fixture  # noqa: F401 (a fixture: the benchmark's processes' blocks)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.examples import L2_PIPELINE
from cortex.options import CompileOptions
from cortex.runtime.program import Program


@pytest.fixture(scope="module")
def l2_multi():
    return cortex.compile(L2_PIPELINE, modes="all").specialize(SHAPE)


@pytest.fixture(scope="module")
def l2_single():
    return {m: cortex.compile(L2_PIPELINE, mode=m).specialize(SHAPE) for m in MODES}


@pytest.fixture(scope="module")
def trail_multi():
    return cortex.compile(TRAIL, modes="all").specialize(SHAPE)


@pytest.fixture(scope="module")
def trail_single():
    return {m: cortex.compile(TRAIL, mode=m).specialize(SHAPE) for m in MODES}


# ---------------------------------------------------------------- options


def test_modes_option_forms():
    assert CompileOptions(modes="all").modes == MODES
    assert CompileOptions(modes=["power_save", "motion"]).modes == ("power_save", "motion")
    rows = CompileOptions(modes=["power_save", "night"], weights={"night": {"wc": 1.0, "wt": 0.0, "ws": 0.0, "wm": 0.0}})
    variants = rows.variants()
    assert list(variants) == ["power_save", "night"]
    assert variants["night"].mode is None and variants["night"].weight_table()[0]["wc"] == 1.0
    assert variants["power_save"].weight_table()[0]["wc"] == 0.7
    flat = CompileOptions(modes="all", weights={"wc": 0.5}).variants()
    assert all(o.weight_table()[0]["wc"] == 0.5 for o in flat.values())


@pytest.mark.parametrize("fields, message", [
    ({"modes": "some"}, "modes must be 'all' or a sequence of mode names"),
    ({"modes": []}, "modes names no mode"),
    ({"modes": ["motion", "motion"]}, "modes names 'motion' twice"),
    ({"modes": ["night"]}, "unknown mode 'night'.*needs its row in weights"),
    ({"modes": ["motion"], "specialize": False}, "needs specialize=True"),
    ({"modes": ["motion"], "weights": {"balanced": {"wc": 1.0}}}, "'balanced' is not in modes"),
    ({"modes": ["motion"], "weights": {"motion": {"wc": "x"}}}, "weight 'wc' must be a number"),
])
def test_modes_option_mistakes(fields, message):
    with pytest.raises(CortexError, match=message):
        CompileOptions(**fields)


def test_call_picks_variant_and_refuses_unknown_mode(l2_multi, l2_single):
    assert l2_multi.modes == MODES and l2_multi.program.modes == MODES
    with pytest.raises(CortexError, match=r"unknown mode 'fast' \(this program has: balanced, power_save, motion\)"):
        l2_multi(FRAMES[0], mode="fast")
    with pytest.raises(CortexError, match="compiled for one mode"):
        l2_single["motion"](FRAMES[0], mode="motion")
    l2_multi.reset()
    default = l2_multi(FRAMES[0])
    l2_single["balanced"].reset()
    assert all(same(a, b) for a, b in zip(default, l2_single["balanced"](FRAMES[0])))
    assert l2_multi.frames_per_mode == {"balanced": 1}


# ---------------------------------------------------------------- state across switches


def continued_equal(multi, singles, modes, frames) -> None:
    """Each frame of `multi` in its mode equals that mode's single-mode program continued from the
    multi-mode program's state, outputs and every state the single-mode program holds, bit for bit."""
    multi.reset()
    for k, (frame, mode) in enumerate(zip(frames, modes)):
        single = singles[mode]
        single.state = dict(multi.state)
        expected = single(frame)
        got = multi(frame, mode=mode)
        assert all(same(a, b) for a, b in zip(got, expected)), f"frame {k} ({mode}): outputs differ"
        state = multi.state
        for name, value in single.state.items():
            assert same(state[name], value), f"frame {k} ({mode}): state '{name}' differs"


switches = st.lists(st.sampled_from(MODES), min_size=len(FRAMES), max_size=len(FRAMES))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=switches)
def test_l2_switches_equal_single_mode_programs_continued(l2_multi, l2_single, modes):
    continued_equal(l2_multi, l2_single, modes, FRAMES)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=switches)
def test_custom_switches_equal_single_mode_programs_continued(trail_multi, trail_single, modes):
    continued_equal(trail_multi, trail_single, modes, FRAMES)


@pytest.fixture(scope="module")
def l2_reference():
    return cortex.reference(L2_PIPELINE, modes="all").specialize(SHAPE)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=st.lists(st.sampled_from(MODES), min_size=8, max_size=8))
def test_l2_switches_equal_the_multi_mode_reference(l2_multi, l2_reference, modes):
    """The compiled multi-mode program against the interpreter's, frame after frame in random modes: the
    scores within float32 rounding, the encoded JPEG bytes equal."""
    l2_multi.reset()
    l2_reference.reset()
    for k, (frame, mode) in enumerate(zip(FRAMES, modes)):
        (encoded, score), (want_encoded, want_score) = l2_multi(frame, mode=mode), l2_reference(frame, mode=mode)
        np.testing.assert_allclose(score, want_score, rtol=1e-5, atol=1e-6, err_msg=f"frame {k} ({mode})")
        assert np.array_equal(encoded, want_encoded), f"frame {k} ({mode})"


def reference_scores(modes, frames) -> list[np.ndarray]:
    ref = cortex.reference(TRAIL, modes="all")
    return [ref(f, mode=m)[1] for f, m in zip(frames, modes)]


SWITCHY = ["motion", "power_save", "power_save", "motion", "balanced", "power_save", "motion", "power_save",
           "balanced", "balanced", "power_save", "motion"]


def test_custom_pipeline_keeps_state_right_across_switches(trail_multi):
    """prev_gray (read only through the motion term) and trail (a recurrence read only through its term):
    after power_save frames, the reading modes see what every-frame updating would have left."""
    expected = reference_scores(SWITCHY, FRAMES)
    trail_multi.reset()
    for k, (frame, mode) in enumerate(zip(FRAMES, SWITCHY)):
        np.testing.assert_allclose(trail_multi(frame, mode=mode)[1], expected[k], rtol=1e-5, atol=1e-5,
                                   err_msg=f"frame {k} ({mode})")
    assert trail_multi.program.switch_states == {"prev_gray": "recompute", "trail": "keep"}
    assert trail_multi.frames_per_mode == {"power_save": 5, "motion": 4, "balanced": 3}


def test_per_mode_programs_swapped_by_hand_go_wrong(trail_single):
    """The approach a multi-mode program replaces: one program per mode, the named state carried by hand.
    power_save's DCE stops updating prev_gray and trail, so the next motion frame reads stale state."""
    assert not {"prev_gray", "trail"} & set(trail_single["power_save"].state)
    expected = reference_scores(SWITCHY, FRAMES)
    state: dict = {}
    worst = 0.0
    for k, (frame, mode) in enumerate(zip(FRAMES, SWITCHY)):
        program = trail_single[mode]
        program.reset()
        program.state = {**program.state, **{n: v for n, v in state.items() if n in program.state}}
        score = program(frame)[1]
        state = {**state, **program.state}
        worst = max(worst, float(np.abs(score - expected[k]).max()))
    assert worst > 1e-3


def test_mode_report_says_what_each_state_does():
    compiled = cortex.compile(TRAIL, modes=["balanced", "power_save"]).specialize(SHAPE)
    report = "\n".join(compiled.mode_report)
    assert "mode power_save: state update dropped: ['prev_gray']" in report
    assert "state 'prev_gray': read by balanced, not by power_save -> recompute" in report
    assert "state 'trail': read by balanced, not by power_save -> keep" in report


def test_mode_report_is_empty_when_every_mode_reads_every_state():
    """No state for a switch to keep or recompute: balanced and motion both read prev_gray and trail."""
    compiled = cortex.compile(TRAIL, modes=["balanced", "motion"]).specialize(SHAPE)
    assert compiled.mode_report == []


def test_reading_state_after_a_non_writing_mode_recomputes_it(trail_multi, trail_single):
    trail_multi.reset()
    trail_multi(FRAMES[0], mode="motion")
    trail_multi(FRAMES[1], mode="power_save")
    motion = trail_single["motion"]
    motion.reset()
    motion(FRAMES[0])
    motion(FRAMES[1])
    assert same(trail_multi.state["prev_gray"], motion.state["prev_gray"])


def test_a_frame_buffer_the_caller_reuses_does_not_change_a_later_recompute(trail_multi):
    """A caller that reads every frame into one buffer (as a capture loop does): the state a reading mode
    recomputes after a non-writing frame comes from that frame as it was called, not from what the buffer
    holds by then."""
    modes = ["motion", "power_save", "motion"]
    expected = reference_scores(modes, FRAMES[:3])
    trail_multi.reset()
    buffer = np.empty_like(FRAMES[0])
    for k, (frame, mode) in enumerate(zip(FRAMES, modes)):
        buffer[...] = frame
        np.testing.assert_allclose(trail_multi(buffer, mode=mode)[1], expected[k], rtol=1e-5, atol=1e-5,
                                   err_msg=f"frame {k} ({mode})")


# ---------------------------------------------------------------- the file


def test_save_load_keeps_every_variant(trail_multi, tmp_path):
    path = trail_multi.save(tmp_path / "trail.cortex")
    again = cortex.load(path)
    assert again.modes == MODES and again.program.switch_states == trail_multi.program.switch_states
    assert Program.load(path).variants["power_save"].weights == trail_multi.program.variants["power_save"].weights
    trail_multi.reset()
    for frame, mode in zip(FRAMES, SWITCHY):
        assert all(same(a, b) for a, b in zip(again(frame, mode=mode), trail_multi(frame, mode=mode)))


def test_old_program_file_is_refused_with_its_version(tmp_path, trail_single):
    import json
    import zipfile

    path = trail_single["motion"].save(tmp_path / "one.cortex")
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    doc = json.loads(members["program.json"])
    doc["version"] = 2
    members["program.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    with pytest.raises(CortexError, match="format version 2; this runtime reads version 3 .saved by an older Cortex"):
        cortex.load(path)


# ---------------------------------------------------------------- frames in flight


@pytest.mark.parametrize("engine", ["threads", "processes"])
def test_run_video_modes_equal_sequential_calls(trail_multi, engine):
    trail_multi.reset()
    expected = [trail_multi(f, mode=m) for f, m in zip(FRAMES, SWITCHY)]
    final = dict(trail_multi.state)
    trail_multi.reset()
    got = list(trail_multi.run_video(FRAMES, workers=2, engine=engine, modes=SWITCHY))
    assert len(got) == len(expected)
    for k, (a, b) in enumerate(zip(got, expected)):
        assert all(same(x, y) for x, y in zip(a, b)), f"frame {k}"
    assert all(same(trail_multi.state[n], v) for n, v in final.items())
    trail_multi.reset()
    by_index = list(trail_multi.run_video(FRAMES, workers=2, engine=engine, modes=lambda k: SWITCHY[k]))
    assert all(same(x, y) for a, b in zip(by_index, expected) for x, y in zip(a, b))


def test_run_video_mode_mistakes(trail_multi):
    with pytest.raises(CortexError, match=r"modes\[1\]: unknown mode 'fast'"):
        trail_multi.run_video(FRAMES, modes=["motion", "fast"])
    trail_multi.reset()
    with pytest.raises(CortexError, match="frame 2: modes names 2 frames only"):
        list(trail_multi.run_video(FRAMES[:4], workers=1, modes=["motion", "motion"]))


def test_reference_run_video_follows_the_modes():
    multi = cortex.reference(TRAIL, modes="all")
    got = [score for _, score in multi.run_video(FRAMES[:5], modes=SWITCHY[:5])]
    assert all(np.array_equal(a, b) for a, b in zip(got, reference_scores(SWITCHY[:5], FRAMES[:5])))
    with pytest.raises(CortexError, match="the reference interpreter runs frame after frame"):
        list(multi.run_video(FRAMES[:2], workers=2, modes=SWITCHY[:2]))


def test_reference_run_video_counts_every_frame_of_a_run_of_one_mode():
    """The interpreter runs each run of one mode's frames together: frames_per_mode counts its frames, not
    the run."""
    multi = cortex.reference(TRAIL, modes="all").specialize(SHAPE)
    assert len(list(multi.run_video(FRAMES[:5], modes=SWITCHY[:5]))) == 5
    assert multi.frames_per_mode == {"motion": 2, "power_save": 2, "balanced": 1}


def test_reference_modes_equal_single_mode_references():
    multi = cortex.reference(TRAIL, modes=["motion", "balanced"]).specialize(SHAPE)
    singles = {m: cortex.reference(TRAIL, mode=m).specialize(SHAPE) for m in ("motion", "balanced")}
    for frame, mode in zip(FRAMES[:4], ["motion", "balanced", "balanced", "motion"]):
        single = singles[mode]
        single.state = dict(multi.state)
        assert np.array_equal(multi(frame, mode=mode)[1], single(frame)[1])


# ---------------------------------------------------------------- what switching costs, and where time went


def test_profiles_attribute_time_per_mode():
    generic = cortex.compile(TRAIL, modes=["power_save", "motion"])
    generic.profiling = True
    compiled = generic.specialize(SHAPE)
    for frame, mode in zip(FRAMES[:5], ["power_save", "motion", "motion", "power_save", "power_save"]):
        compiled(frame, mode=mode)
    profiles = compiled.profiles()
    assert profiles["power_save"].frames == 3 and profiles["motion"].frames == 2
    assert "motion" in profiles["motion"] and "motion" not in profiles["power_save"]  # the op %motion
    assert compiled.profile().frames == 5
    assert compiled.stage_labels("power_save") < compiled.stage_labels("motion")


def test_a_recompute_by_another_modes_variant_is_no_frame_of_its_profile():
    """Without a frame split a stale state is recomputed by a whole call of a variant that writes it (here
    balanced's, before the second motion frame): that call is no balanced frame."""
    compiled = cortex.compile(TRAIL, modes="all", split=False).specialize(SHAPE)
    compiled.profiling = True
    for frame, mode in zip(FRAMES, ["motion", "power_save", "motion"]):
        compiled(frame, mode=mode)
    profiles = compiled.profiles()
    assert (profiles["balanced"].frames, profiles["power_save"].frames, profiles["motion"].frames) == (0, 1, 2)
    assert compiled.profile().frames == 3


@pytest.mark.slow
def test_modes_benchmark_quick_run(capsys, private_shm):
    import sys

    benchmarks = str(Path(__file__).resolve().parents[1] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        import modes as bench
    finally:
        sys.path.remove(benchmarks)
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert out.count("ratio multi/single throughput") == 2 and "load average" in out
    assert bench.main(["--quick", "--switching"]) == 0
    out = capsys.readouterr().out
    assert "ratio threads in flight/drained throughput" in out and "runs of one mode" in out
    assert "ratio processes in flight/drained throughput" in out


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
def test_run_video_modes_on_ray_equal_sequential_calls(trail_multi):
    pytest.importorskip("ray")
    modes = ["motion"] * 4 + ["power_save"] * 4 + ["balanced"] * 4
    trail_multi.reset()
    expected = [trail_multi(f, mode=m) for f, m in zip(FRAMES, modes)]
    final = dict(trail_multi.state)
    trail_multi.reset()
    got = list(trail_multi.run_video(FRAMES, workers=2, engine="ray", modes=modes, chunk=2))
    assert all(same(x, y) for a, b in zip(got, expected) for x, y in zip(a, b)) and len(got) == len(expected)
    assert all(same(trail_multi.state[n], v) for n, v in final.items())


def test_assigned_source_state_is_honoured_across_a_switch(l2_multi, l2_single):
    """Temporal reuse's derived states follow their source by identity: a prev_gray assigned between two
    frames of different modes is what the next frame's derived scene statistics are computed from."""
    l2_multi.reset()
    l2_multi(FRAMES[0], mode="balanced")
    l2_multi(FRAMES[1], mode="power_save")
    state = dict(l2_multi.state)
    state["prev_gray"] = np.ascontiguousarray(state["prev_gray"][::-1])
    l2_multi.state = state
    single = l2_single["motion"]
    single.state = dict(state)
    assert all(same(a, b) for a, b in zip(l2_multi(FRAMES[2], mode="motion"), single(FRAMES[2])))
