"""`run_video(modes=...)` on the threads and processes engines keeps frames in flight across mode switches:
each frame runs its own mode's variant over the states the variants share by name (a worker process is sent
every variant, a chunk names its frames' modes), and a delayed input a frame's variant does not update is
recomputed before the next frame that reads it, within a chunk or across a chunk's edge. The outputs, the
final state and the frames per mode equal the sequential calls' bit for bit, whatever the switches, chunks
and windows."""

from __future__ import annotations

import warnings

import pytest
from helpers.modes import (
    FRAMES,
    MODES,
    OWN_DELAYED,
    OWN_DELAYED_WEIGHTS,
    SHAPE,
    TRAIL,
    assert_run_equals_calls,
    read_ahead,
    same,
    sequential,
)
from helpers.shared_memory import private_shm_fixture, shared_blocks  # noqa: F401 (a fixture)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError
from cortex.examples import L2_PIPELINE
from cortex.runtime.engines import processes

pytestmark = pytest.mark.xdist_group("processes")

ENGINES = ("threads", "processes")
"""Engines that keep frames in flight across switches (`Engine.variants`; Ray's: test_modes_in_flight_ray.py)."""


@pytest.fixture(scope="module", autouse=True)
def _own_blocks(private_shm):
    """The processes engine's blocks in this module's own directory; its pools end with the module."""
    yield
    processes.close_pools()


@pytest.fixture(scope="module")
def multis():
    return {"l2": cortex.compile(L2_PIPELINE, modes="all").specialize(SHAPE),
            "trail": cortex.compile(TRAIL, modes="all").specialize(SHAPE)}


frequent = st.lists(st.sampled_from(MODES), min_size=len(FRAMES), max_size=len(FRAMES))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=frequent, which=st.sampled_from(["l2", "trail"]))
def test_frequent_switches_on_two_threads_equal_sequential_calls(multis, modes, which):
    assert_run_equals_calls(multis[which], modes, FRAMES)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(modes=frequent, which=st.sampled_from(["l2", "trail"]), chunk=st.integers(1, 5), window=st.integers(1, 4))
def test_frequent_switches_on_two_processes_equal_sequential_calls(multis, modes, which, chunk, window):
    """Switches anywhere in a chunk and at its edges (the frame before a chunk in another mode than its
    first), the L2 pipeline's chain of leading recurrences run in each frame's variant."""
    assert_run_equals_calls(multis[which], modes, FRAMES, window=window, engine="processes", chunk=chunk)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("window", [1, 3, 8])
def test_every_frame_switching_equals_sequential_calls(multis, window, engine):
    """Every frame in another mode, power_save (no prev_gray in the custom pipeline's variant) between
    the reading modes: the recompute happens in flight (on processes, chunks of 2: within a chunk and
    across its edge)."""
    modes = [MODES[k % 3] for k in range(len(FRAMES))]
    options = {"chunk": 2} if engine == "processes" else {}
    for multi in multis.values():
        assert_run_equals_calls(multi, modes, FRAMES, window=window, engine=engine, **options)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_delayed_input_each_mode_computes_its_own_way_follows_the_frame_before(engine):
    """Each mode fuses the frame's maps with its own weights into the delayed input the next frame reads:
    a chunk that starts after a frame of another mode computes it in that frame's mode."""
    multi = cortex.compile(OWN_DELAYED, modes=list(OWN_DELAYED_WEIGHTS), weights=OWN_DELAYED_WEIGHTS).specialize(SHAPE)
    modes = [("calm", "sharp")[k % 2] for k in range(8)]
    for chunk in (2, 3):
        options = {"chunk": chunk} if engine == "processes" else {}
        assert_run_equals_calls(multi, modes, FRAMES[:8], window=2, engine=engine, **options)


TWO_WRITERS = OWN_DELAYED.replace("@own_delayed", "@two_writers").replace(
    """    %half = arith.constant 0.5 : f32
    %out = cortex.temporal_smooth %mix, %prev, %half : (tensor<?x?xf32>, tensor<?x?xf32>, f32) -> tensor<?x?xf32>""",
    """    %wm = cortex.weight "wm" : f32
    %wp = cortex.weight "wp" : f32
    %out = cortex.score_fusion(%mix, %prev) weights(%wm, %wp) {terms = ["text_roi", "saliency_dft"]} : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>""")
"""`prev_mix` (this frame's fused map) read through a weight: a mode that zeroes `wp` reads it not, so it is a
recomputable delayed input that two modes write, each with its own weights."""
TWO_WRITERS_WEIGHTS = {"calm": {"wa": 1.0, "wb": 0.0, "wm": 1.0, "wp": 0.5},
                       "sharp": {"wa": 0.2, "wb": 0.8, "wm": 1.0, "wp": 0.5},
                       "still": {"wa": 1.0, "wb": 0.0, "wm": 1.0, "wp": 0.0}}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stale_input_two_modes_write_differently_is_recomputed_as_a_sequential_switch_does(engine):
    """After a frame of the mode that does not write it, the reading mode's stale input is recomputed by the
    first mode (in the program's order) that writes it, as the sequential calls do: not by another writer."""
    multi = cortex.compile(TWO_WRITERS, modes=list(TWO_WRITERS_WEIGHTS), weights=TWO_WRITERS_WEIGHTS).specialize(SHAPE)
    assert multi.program.switch_states == {"prev_mix": "recompute"}
    assert multi.writes == {"calm": {"prev_mix"}, "sharp": {"prev_mix"}, "still": set()}
    modes = ["sharp", "still", "sharp", "calm", "still", "sharp", "sharp", "still"]
    for chunk in (1, 2, 3):
        options = {"chunk": chunk} if engine == "processes" else {}
        assert_run_equals_calls(multi, modes, FRAMES[:8], window=2, engine=engine, **options)


@pytest.mark.parametrize("engine", ENGINES)
def test_frames_stay_in_flight_across_switches(multis, engine):
    """With a switch at every frame, the engine has read a whole window of frames when the first output
    comes out (a run drained at each switch had read two: the frame and the next one's mode)."""
    multi = multis["trail"]
    multi.reset()
    options = {"chunk": 1} if engine == "processes" else {}
    read, frames = read_ahead(FRAMES)
    outputs = multi.run_video(frames, workers=2, window=4, modes=lambda k: MODES[k % 3], engine=engine, **options)
    next(outputs)
    assert len(read) >= 4
    assert len(list(outputs)) == len(FRAMES) - 1


@pytest.mark.parametrize("engine", ENGINES)
def test_a_bad_mode_mid_run_delivers_the_frames_before_it(multis, engine):
    multi = multis["trail"]
    modes = ["motion", "power_save", "balanced", "fast"]
    multi.reset()
    got = []
    with pytest.raises(CortexError, match=r"frame 3: unknown mode 'fast'"):
        for outputs in multi.run_video(FRAMES[:6], workers=2, modes=lambda k: modes[k] if k < 4 else "motion",
                                       engine=engine):
            got.append(outputs)
    expected, final, _ = sequential(multi, modes[:3], FRAMES[:3])
    assert len(got) == 3 and all(same(x, y) for a, b in zip(got, expected) for x, y in zip(a, b))


def test_the_in_flight_path_is_taken_where_the_engine_runs_variants(multis):
    multi = multis["trail"]
    assert multi._in_flight("threads") and multi._in_flight("processes") and multi._in_flight("ray")
    assert not multi._in_flight("nope")


def test_a_processes_run_across_switches_keeps_one_pool_and_leaves_no_block(multis, private_shm):
    """The multi-mode pipeline's pool (every variant in each worker) serves its next run too, and every
    chunk's block is given back when the run ends."""
    multi = multis["trail"]
    modes = [MODES[k % 3] for k in range(6)]
    before = shared_blocks()
    list(multi.run_video(FRAMES[:6], workers=2, engine="processes", chunk=2, modes=modes))
    assert processes.worker_cpu_seconds(multi) > 0  # the run's workers are the multi-mode pipeline's
    pids = processes.pool_for(multi, multi.program, 2, chain=False).pids()
    assert_run_equals_calls(multi, modes, FRAMES[:6], engine="processes", chunk=3)
    assert processes.pool_for(multi, multi.program, 2, chain=False).pids() == pids
    processes.drop_pool(multi)
    assert shared_blocks() <= before


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("stop", [1, 5, 6, 7])
def test_a_consumer_that_stops_mid_chunk_gets_the_state_after_the_frames_it_was_given(multis, engine, stop):
    """The consumer closes the run after `stop` frames, inside a chunk of 4 (or at its first frame): the state
    and the frames per mode are those after the frames delivered, as the sequential calls give, for both
    pipelines (the L2 pipeline's leading recurrences come from the chain, frame by frame)."""
    modes = [MODES[k % 3] for k in range(len(FRAMES))]
    options = {"chunk": 4} if engine == "processes" else {}
    for multi in multis.values():
        expected, final, per_mode = sequential(multi, modes[:stop], FRAMES[:stop])
        multi.reset()
        outputs = multi.run_video(FRAMES, workers=2, modes=modes, engine=engine, **options)
        got = [next(outputs) for _ in range(stop)]
        outputs.close()
        assert all(same(x, y) for a, b in zip(got, expected) for x, y in zip(a, b))
        assert dict(multi.frames_per_mode) == per_mode
        state = multi.state
        assert state.keys() == final.keys()
        for name, value in final.items():
            assert same(state[name], value), f"state '{name}' differs after {stop} frames"


def test_a_profile_asked_of_an_engine_that_times_nothing_warns(multis):
    """Only the threads engine times its stages: `profile=True` on the processes engine says so rather than
    handing back an empty profile without a word; the run itself is unchanged."""
    multi = multis["trail"]
    modes = [MODES[k % 3] for k in range(4)]
    expected, _, _ = sequential(multi, modes, FRAMES[:4])
    multi.reset()
    with pytest.warns(RuntimeWarning, match="engine 'processes' does not time its stages"):
        got = list(multi.run_video(FRAMES[:4], workers=2, modes=modes, engine="processes", chunk=2, profile=True))
    assert all(same(x, y) for a, b in zip(got, expected) for x, y in zip(a, b))


def test_a_profile_asked_of_the_threads_engine_does_not_warn(multis):
    multi = multis["trail"]
    multi.reset()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(list(multi.run_video(FRAMES[:4], workers=2, modes=[MODES[0]] * 4, engine="threads", profile=True))) == 4
