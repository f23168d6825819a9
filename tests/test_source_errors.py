"""A frame source that raises part-way: one contract for every engine.

The sequential loop `for f in frames: compiled(f)` delivers every frame read before the source failed, then
the error goes up. Every engine does the same: each result of a frame read before the error is delivered, in
order, then the source's own exception is raised, unchanged (the same object), and `compiled.state` is the
state after those frames (docs/running.md, "When the frame source fails"). The threads engine delivered
14-15 of 18, the processes engine 6-9: results already computed were thrown away.
"""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, compiled, frames_of, sequential
from helpers.shared_memory import private_shm_fixture  # noqa: F401 (a fixture)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex.runtime.engines import processes

FRAMES = frames_of(SMALL, 24)
A, B = compiled(small_l2_text()), compiled(small_l2_text())


class ReadError(OSError):
    """What a video reader raises part-way (a cut stream, a lost device)."""


def failing_source(at: int, error: BaseException):
    """FRAMES[:at], then `error`."""
    yield from FRAMES[:at]
    raise error


def check_contract(at: int, engine: str, **options) -> None:
    """`B.run_video` over a source that fails after `at` frames: the sequential loop's `at` results and state,
    then the source's exception itself."""
    A.reset()
    want = sequential(A, FRAMES[:at])
    B.reset()
    error = ReadError(f"cannot read frame {at}")
    got = []
    with pytest.raises(ReadError) as raised:
        for out in B.run_video(failing_source(at, error), engine=engine, **options):
            got.append(out)
    assert raised.value is error
    assert_same(got, want)
    assert_same_state(B.state, A.state)


@pytest.fixture(scope="module", autouse=True)
def _close_pools(private_shm):
    yield
    processes.close_pools()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(at=st.integers(0, len(FRAMES) - 1), workers=st.integers(1, 3), window=st.integers(1, 6))
def test_threads_deliver_every_frame_read_before_the_source_failed(at, workers, window):
    check_contract(at, "threads", workers=workers, window=window)


@settings(max_examples=12, deadline=None)
@given(at=st.integers(0, len(FRAMES) - 1), chunk=st.sampled_from([1, 3, 8]), window=st.sampled_from([1, 4]))
def test_processes_deliver_every_frame_read_before_the_source_failed(at, chunk, window):
    check_contract(at, "processes", workers=2, window=window, chunk=chunk)


@pytest.mark.parametrize("engine", ["threads", "processes"])
def test_the_frame_the_old_engines_dropped_is_delivered(engine):
    """The issue's case: the source fails at frame 18, with frames in flight."""
    check_contract(18, engine, workers=2, **({"chunk": 4} if engine == "processes" else {}))


@pytest.mark.parametrize("engine", ["threads", "processes"])
def test_ctrl_c_from_the_source_goes_through_at_once(engine):
    """What is not an `Exception` (KeyboardInterrupt) is not held back: the run stops there."""
    B.reset()
    got = []
    with pytest.raises(KeyboardInterrupt):
        for out in B.run_video(failing_source(18, KeyboardInterrupt()), engine=engine, workers=2):
            got.append(out)
    assert len(got) < 18


@pytest.mark.slow
@pytest.mark.xdist_group("ray")
@pytest.mark.parametrize("at", [0, 5, 18])
def test_ray_delivers_every_frame_read_before_the_source_failed(local_ray, at):
    from cortex.runtime.engines.ray import RaySession

    with RaySession() as session:
        for chunk in (1, 4):
            check_contract(at, "ray", workers=2, chunk=chunk, session=session)
