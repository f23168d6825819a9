"""`run_video(modes=..., engine="ray")` keeps frames in flight across mode switches: the actors hold every
variant, a chunk names its frames' modes and starts from the frame before it (in its own mode), and the
chain of leading recurrences runs each frame's variant. Outputs, final state and frames per mode equal the
sequential calls' bit for bit. One local Ray (conftest's `local_ray`) and one `RaySession` for the module."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # starts Ray: seconds

from helpers.modes import (  # noqa: E402
    FRAMES,
    MODES,
    OWN_DELAYED,
    OWN_DELAYED_WEIGHTS,
    SHAPE,
    TRAIL,
    assert_run_equals_calls,
    read_ahead,
)

import cortex  # noqa: E402
from cortex.examples import L2_PIPELINE  # noqa: E402
from cortex.runtime.engines.ray import RaySession  # noqa: E402


@pytest.fixture(scope="module")
def multis():
    return {"l2": cortex.compile(L2_PIPELINE, modes="all").specialize(SHAPE),
            "trail": cortex.compile(TRAIL, modes="all").specialize(SHAPE)}


@pytest.fixture
def session(local_ray):
    with RaySession() as kept:
        yield kept


def test_every_frame_switching_on_ray_equals_sequential_calls(multis, session):
    """Every frame in another mode (power_save, which does not update the custom pipeline's prev_gray,
    between the reading modes), in chunks of 2 and 3: the recompute happens within a chunk and across a
    chunk's edge; L2's gate history runs through the chain in each frame's variant."""
    modes = [MODES[k % 3] for k in range(len(FRAMES))]
    for window, chunk in [(1, 2), (3, 3), (8, 2)]:
        for multi in multis.values():
            assert_run_equals_calls(multi, modes, FRAMES, window=window, engine="ray", chunk=chunk, session=session)


def test_a_delayed_input_each_mode_computes_its_own_way_on_ray(session):
    """A chunk that starts after a frame of another mode computes its delayed input in that frame's mode: the
    chunk's last frame's, which is not its first one's in chunks of 2 (nor in the runs of 3)."""
    multi = cortex.compile(OWN_DELAYED, modes=list(OWN_DELAYED_WEIGHTS), weights=OWN_DELAYED_WEIGHTS).specialize(SHAPE)
    alternating = [("calm", "sharp")[k % 2] for k in range(8)]
    runs = [("calm", "sharp")[k // 2 % 2] for k in range(8)]  # calm calm sharp sharp ...
    for modes, chunk in [(alternating, 3), (alternating, 2), (runs, 3)]:
        assert_run_equals_calls(multi, modes, FRAMES[:8], window=2, engine="ray", chunk=chunk, session=session)


def test_frames_stay_in_flight_across_switches_on_ray(multis, session):
    """With a switch at every frame, two chunks of two frames have been read when the first output comes
    out (a run drained at each switch had read two frames)."""
    multi = multis["trail"]
    multi.reset()
    read, frames = read_ahead(FRAMES)
    outputs = multi.run_video(frames, workers=2, window=2, engine="ray", chunk=2, modes=lambda k: MODES[k % 3],
                              session=session)
    next(outputs)
    assert len(read) >= 4
    assert len(list(outputs)) == len(FRAMES) - 1
