"""A runner's `state` is the caller's: an edit is honoured, and both runners' states are interchangeable.

Temporal reuse carries values derived from a state (scene change's blurs of `prev_gray`) as
states of their own. Those derived states are the program's business: `compiled.state` holds the
reference runner's names only, and an assigned source (`compiled.state["prev_gray"] = x`, or a
whole state copied from another runner) makes the derived states be recomputed from it. A source
array is handed out read-only, so an in-place write cannot be silently ignored either.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, frames_of

import cortex
from cortex.errors import CortexError

pytestmark = pytest.mark.slow  # several compiled pipelines in its fixtures: seconds

FRAMES = frames_of(SMALL, 6)


@pytest.fixture(scope="module")
def module():
    return cortex.parse(small_l2_text())


@pytest.fixture(scope="module")
def program(module):
    """The default compile (temporal reuse on) and the one without it, whose state has no derived names."""
    return cortex.compile(module).program, cortex.compile(module, frame_work=False).program


def runners(module, program, **options):
    reused, plain = program
    return (cortex.reference(module), cortex.runtime.pipeline.LoadedProgram(reused, **options),
            cortex.runtime.pipeline.LoadedProgram(plain, **options))


def edited(gray: np.ndarray) -> np.ndarray:
    """Another plausible previous frame: the gray image mirrored (a scene cut the pipeline must see)."""
    return np.ascontiguousarray(gray[:, ::-1])


def assert_close_to_reference(got, want):
    for (g_bytes, g_score), (w_bytes, w_score) in zip(got, want):
        np.testing.assert_allclose(g_score, w_score, rtol=1e-5, atol=1e-6)
        assert np.asarray(g_bytes).tobytes() == np.asarray(w_bytes).tobytes()


def test_the_compiled_state_has_the_reference_names(module, program):
    ref, reused, plain = runners(module, program)
    assert reused.program.derived, "temporal reuse carried nothing: the test needs a derived state"
    for f in FRAMES[:2]:
        ref(f), reused(f), plain(f)
    assert reused.state.keys() == ref.state.keys() == plain.state.keys()


@pytest.mark.parametrize("workers", [1, 2])
def test_an_edited_source_state_is_honoured(module, program, workers):
    ref, reused, plain = runners(module, program, workers=workers)
    for f in FRAMES[:3]:
        ref(f), reused(f), plain(f)
    new = edited(ref.state["prev_gray"])
    for runner in (ref, reused, plain):
        runner.state["prev_gray"] = new.copy()
    got = [reused(f) for f in FRAMES[3:5]]
    assert_same(got, [plain(f) for f in FRAMES[3:5]])
    assert_close_to_reference(got, [ref(f) for f in FRAMES[3:5]])
    assert_same_state(reused.state, plain.state)


def test_an_edit_is_honoured_by_run_video(module, program):
    _, reused, plain = runners(module, program)
    for f in FRAMES[:2]:
        reused(f), plain(f)
    new = edited(plain.state["prev_gray"])
    reused.state["prev_gray"], plain.state["prev_gray"] = new.copy(), new.copy()
    assert_same(list(reused.run_video(FRAMES[2:], workers=2)), [plain(f) for f in FRAMES[2:]])
    assert_same_state(reused.state, plain.state)


def test_states_copy_both_ways(module, program):
    ref, reused, plain = runners(module, program)
    for f in FRAMES[:2]:
        ref(f)
    reused.state = dict(ref.state)  # reference → compiled: no derived names needed
    plain.state = dict(ref.state)
    got = reused(FRAMES[2])
    assert_same([got], [plain(FRAMES[2])])
    assert_close_to_reference([got], [ref(FRAMES[2])])
    reused(FRAMES[3])
    ref.state = dict(reused.state)  # compiled → reference
    assert_close_to_reference([reused(FRAMES[4])], [ref(FRAMES[4])])


def test_a_state_copied_between_compiled_runners_is_honoured(module, program):
    _, first, _ = runners(module, program)
    _, second, plain = runners(module, program)
    for f in FRAMES[:3]:
        first(f)
    for f in FRAMES[3:5]:
        second(f), plain(f)
    second.state.update(first.state)
    plain.state = dict(first.state)
    assert_same([second(FRAMES[5])], [plain(FRAMES[5])])


def test_an_in_place_write_to_a_source_is_refused(module, program):
    _, reused, _ = runners(module, program)
    reused(FRAMES[0])
    with pytest.raises(ValueError, match="read-only"):
        reused.state["prev_gray"][0, 0] = 1.0


def test_a_derived_name_in_the_state_is_an_error_naming_its_source(module, program):
    _, reused, _ = runners(module, program)
    name = reused.program.derived[0].results[0].removeprefix("update:")
    reused.state[name] = np.zeros((1,), np.float32)
    with pytest.raises(CortexError, match=f"state '{name}' is derived from 'prev_gray'"):
        reused(FRAMES[0])


def test_a_saved_program_keeps_its_derived_states(module, program, tmp_path):
    path = program[0].save(tmp_path / "l2.cortex")
    loaded, plain = cortex.load(path), cortex.runtime.pipeline.LoadedProgram(program[1])
    assert [p.results for p in loaded.program.derived] == [p.results for p in program[0].derived]
    loaded(FRAMES[0]), plain(FRAMES[0])
    new = edited(plain.state["prev_gray"])
    loaded.state["prev_gray"], plain.state["prev_gray"] = new.copy(), new.copy()
    assert_same([loaded(FRAMES[1])], [plain(FRAMES[1])])


def test_a_source_the_entry_no_longer_reads_is_still_a_state():
    """power_save: every read of prev_gray is a carried blur, yet the caller sets prev_gray as before."""
    module = cortex.parse(small_l2_text())
    ref, reused = cortex.reference(module, mode="power_save"), cortex.compile(module, mode="power_save")
    plain = cortex.compile(module, mode="power_save", frame_work=False)
    assert reused.state.keys() == ref.state.keys() == plain.state.keys()
    for f in FRAMES[:2]:
        ref(f), reused(f), plain(f)
    new = edited(ref.state["prev_gray"])
    for runner in (ref, reused, plain):
        runner.state["prev_gray"] = new.copy()
    got = reused(FRAMES[2])
    assert_same([got], [plain(FRAMES[2])])
    assert_close_to_reference([got], [ref(FRAMES[2])])


def test_a_derived_state_loaded_when_first_needed_gets_the_programs_thread_count(module, program, monkeypatch):
    """A split loaded with `threads` (the program's `iree_threads`) loads a derived state's part, when an edited
    source first makes it needed, with the same thread count as its other parts, not the default."""
    from cortex.runtime import parts

    real, seen = parts.load_executable, []

    def recording(exe, profile=False, threads=None):
        seen.append(threads)
        return real(exe, profile, threads)

    monkeypatch.setattr(parts, "load_executable", recording)
    split = parts.LoadedSplit(program[0], threads=3)
    assert seen and set(seen) == {3}
    ref = cortex.reference(module)
    ref(FRAMES[0])
    derived = split.boundary.derived
    name = next(iter(derived.parts))
    seen.clear()
    derived.recompute(name, edited(ref.state[derived.sources[name]]))
    assert seen == [3]
