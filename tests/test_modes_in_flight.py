"""`run_video(modes=...)` on the threads engine keeps frames in flight across mode switches: each frame's
task runs its own mode's variant over the states the variants share by name, and a delayed input a
frame's variant does not update is recomputed in the front of the next frame that reads it. The outputs,
the final state and the frames per mode equal the sequential calls' bit for bit, whatever the switches."""

from __future__ import annotations

import pytest
from helpers.modes import FRAMES, MODES, SHAPE, TRAIL, same
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.examples import L2_PIPELINE


@pytest.fixture(scope="module")
def multis():
    return {"l2": cortex.compile(L2_PIPELINE, modes="all").specialize(SHAPE),
            "trail": cortex.compile(TRAIL, modes="all").specialize(SHAPE)}


def sequential(multi, modes, frames):
    multi.reset()
    outputs = [multi(f, mode=m) for f, m in zip(frames, modes)]
    return outputs, dict(multi.state), dict(multi.frames_per_mode)


def assert_run_equals_calls(multi, modes, frames, workers: int = 2, window: int | None = None) -> None:
    expected, final, per_mode = sequential(multi, modes, frames)
    multi.reset()
    got = list(multi.run_video(frames, workers=workers, window=window, modes=modes))
    assert len(got) == len(expected)
    for k, (a, b) in enumerate(zip(got, expected)):
        assert all(same(x, y) for x, y in zip(a, b)), f"frame {k} ({modes[k]}) differs"
    state = multi.state
    assert state.keys() == final.keys()
    for name, value in final.items():
        assert same(state[name], value), f"state '{name}' differs"
    assert dict(multi.frames_per_mode) == per_mode


frequent = st.lists(st.sampled_from(MODES), min_size=len(FRAMES), max_size=len(FRAMES))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=frequent, which=st.sampled_from(["l2", "trail"]))
def test_frequent_switches_on_two_threads_equal_sequential_calls(multis, modes, which):
    assert_run_equals_calls(multis[which], modes, FRAMES)


@pytest.mark.parametrize("window", [1, 3, 8])
def test_every_frame_switching_equals_sequential_calls(multis, window):
    """Every frame in another mode, power_save (no prev_gray in the custom pipeline's variant) between
    the reading modes: the recompute happens in flight."""
    modes = [MODES[k % 3] for k in range(len(FRAMES))]
    for multi in multis.values():
        assert_run_equals_calls(multi, modes, FRAMES, window=window)


def test_frames_stay_in_flight_across_switches(multis):
    """With a switch at every frame, the engine has read a whole window of frames when the first output
    comes out (a run drained at each switch had read two: the frame and the next one's mode)."""
    multi = multis["trail"]
    read = []

    def frames():
        for frame in FRAMES:
            read.append(frame)
            yield frame

    multi.reset()
    outputs = multi.run_video(frames(), workers=2, window=4, modes=lambda k: MODES[k % 3])
    next(outputs)
    assert len(read) >= 4
    assert len(list(outputs)) == len(FRAMES) - 1


def test_a_bad_mode_mid_run_delivers_the_frames_before_it(multis):
    multi = multis["trail"]
    modes = ["motion", "power_save", "balanced", "fast"]
    multi.reset()
    got = []
    with pytest.raises(CortexError, match=r"frame 3: unknown mode 'fast'"):
        for outputs in multi.run_video(FRAMES[:6], workers=2, modes=lambda k: modes[k] if k < 4 else "motion"):
            got.append(outputs)
    expected, final, _ = sequential(multi, modes[:3], FRAMES[:3])
    assert len(got) == 3 and all(same(x, y) for a, b in zip(got, expected) for x, y in zip(a, b))


def test_the_in_flight_path_is_taken_on_threads_only(multis):
    multi = multis["trail"]
    assert multi._in_flight("threads")
    assert not multi._in_flight("processes") and not multi._in_flight("ray") and not multi._in_flight("nope")
