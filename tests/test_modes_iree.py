"""A multi-mode program on the IREE backend equals the multi-mode NumPy program, frame after frame in
switching modes: outputs and every named state, bit for bit (the L2 pipeline and the custom pipeline
whose `prev_gray` is recomputed on a switch), through calls, `run_video(modes=)` and save/load."""

from __future__ import annotations

import pytest
from helpers.modes import FRAMES, SHAPE, TRAIL, same

import cortex
from cortex.examples import L2_PIPELINE

pytestmark = pytest.mark.slow  # an IREE compile per variant: seconds each
pytest.importorskip("iree.compiler", reason="the IREE backend is installed with cortex[iree]")
pytest.importorskip("iree.runtime", reason="the IREE backend is installed with cortex[iree]")

SWITCHES = ["motion", "power_save", "power_save", "balanced", "motion", "power_save", "balanced", "motion"]
SOURCES = {"l2": L2_PIPELINE, "trail": TRAIL}


@pytest.fixture(scope="module", params=list(SOURCES))
def pair(request):
    source = SOURCES[request.param]
    iree = cortex.compile(source, backend="iree", modes="all").specialize(SHAPE)
    numpy = cortex.compile(source, modes="all").specialize(SHAPE)
    return iree, numpy


def assert_same_frames(got, expected, modes) -> None:
    for k, (a, b) in enumerate(zip(got, expected)):
        assert len(a) == len(b) and all(same(x, y) for x, y in zip(a, b)), f"frame {k} ({modes[k]}) differs"


def assert_same_state(iree, numpy) -> None:
    state, want = iree.state, numpy.state
    assert state.keys() == want.keys()
    for name in want:
        assert same(state[name], want[name]), f"state '{name}' differs"


def test_iree_switches_equal_numpy(pair):
    iree, numpy = pair
    assert iree.program.backend.name == "iree" and iree.modes == numpy.modes
    assert iree.program.switch_states == numpy.program.switch_states
    iree.reset()
    numpy.reset()
    for k, (frame, mode) in enumerate(zip(FRAMES, SWITCHES)):
        assert_same_frames([iree(frame, mode=mode)], [numpy(frame, mode=mode)], [f"{k}: {mode}"])
        assert_same_state(iree, numpy)
    assert iree.frames_per_mode == numpy.frames_per_mode


def test_iree_run_video_with_modes_equals_numpy_calls(pair):
    iree, numpy = pair
    frames = FRAMES[: len(SWITCHES)]
    numpy.reset()
    expected = [numpy(f, mode=m) for f, m in zip(frames, SWITCHES)]
    iree.reset()
    got = list(iree.run_video(frames, workers=2, modes=SWITCHES))
    assert_same_frames(got, expected, SWITCHES)
    assert_same_state(iree, numpy)


def test_iree_multi_mode_program_saved_and_loaded(pair, tmp_path):
    iree, numpy = pair
    again = cortex.load(iree.save(tmp_path / "modes.cortex"))
    assert again.program.backend.name == "iree" and list(again.program.variants) == list(numpy.modes)
    again.reset()
    numpy.reset()
    got = [again(f, mode=m) for f, m in zip(FRAMES, SWITCHES)]
    numpy.reset()
    assert_same_frames(got, [numpy(f, mode=m) for f, m in zip(FRAMES, SWITCHES)], SWITCHES)
    assert_same_state(again, numpy)
