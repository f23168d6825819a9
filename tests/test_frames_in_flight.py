"""The frames-in-flight loop on a simulated clock: order, the window, and no worker left idle behind a full window.

`cortex.runtime.engines.flight.frames_in_flight` drives both engines; here a fake
executor runs every front and tail at once for as long as the test says, on
a clock that moves only when the loop waits, so each test is exact and
instant. The engines themselves are tested against the sequential call in
test_frame_parallel.py and test_ray_engine.py.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.runtime.engines.flight import WAKE_SECONDS, frames_in_flight


class SimulatedExecutor:
    """Items run as soon as they start (unlimited workers): a front for `front[i]` time units, then a tail."""

    def __init__(self, front: list[float], tail: list[float]):
        self.front, self.tail = front, tail
        self.now = 0.0
        self.started: dict[int, float] = {}
        self.in_flight = 0
        self.most_in_flight = 0

    def start(self, item):
        self.started[item] = self.now
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        return {"item": item, "end": self.now + self.front[item]}

    def settle(self, flight):
        self.now = max(self.now, flight["end"])
        return {"item": flight["item"], "end": self.now + self.tail[flight["item"]]}

    def done(self, flight) -> bool:
        return flight["end"] <= self.now

    def wait(self, flights) -> None:
        self.now = max(self.now, min(f["end"] for f in flights))

    def finish(self, flight):
        self.now = max(self.now, flight["end"])
        self.in_flight -= 1
        return [(flight["item"],)]

    def close(self, flights) -> None:
        assert not flights


def test_a_finished_tail_lets_the_next_frame_start_while_a_long_front_runs():
    """Window 2: frame 1's front is long; frame 0's tail ends early. Frame 2 starts when that tail ends
    (time 2), not when frame 1's front does (time 10): blocking on the front kept the window full."""
    executor = SimulatedExecutor(front=[1, 10, 1], tail=[1, 1, 1])
    assert list(frames_in_flight(range(3), 2, executor)) == [(0,), (1,), (2,)]
    assert executor.started[2] == 2


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 12), window=st.integers(1, 5))
def test_outputs_in_order_within_the_window(data, n, window):
    times = st.lists(st.floats(0, 10, allow_nan=False), min_size=n, max_size=n)
    executor = SimulatedExecutor(data.draw(times), data.draw(times))
    assert list(frames_in_flight(range(n), window, executor)) == [(i,) for i in range(n)]
    assert executor.most_in_flight <= window


def test_a_window_under_one_still_runs_every_item_one_at_a_time():
    """A window of 0 (or less) means one item in flight: every output comes out, not none."""
    for window in (0, -3):
        executor = SimulatedExecutor(front=[1, 2, 1], tail=[1, 1, 1])
        assert list(frames_in_flight(range(3), window, executor)) == [(0,), (1,), (2,)]
        assert executor.most_in_flight == 1


class Closing(SimulatedExecutor):
    """Records what `close` is handed (what was still in flight when the loop ended)."""

    def __init__(self, front: list[float], tail: list[float]):
        super().__init__(front, tail)
        self.closed: list[int] | None = None

    def close(self, flights) -> None:
        self.closed = sorted(f["item"] for f in flights)


def test_a_caller_that_stops_early_has_every_front_and_tail_in_flight_closed():
    """The consumer closes the generator after the first output: items settled into tails (their encoders
    running) are cancelled as well as the fronts still running, none left to run on."""
    executor = Closing(front=[1, 1, 1, 1, 9], tail=[1, 5, 5, 5, 5])
    run = frames_in_flight(range(5), 5, executor)
    assert next(run) == (0,)
    run.close()
    assert executor.closed == [1, 2, 3, 4]


class FailingFront(SimulatedExecutor):
    """Item `bad`'s front fails; its tail-free neighbours run as before."""

    def __init__(self, front: list[float], tail: list[float], bad: int):
        super().__init__(front, tail)
        self.bad = bad

    def settle(self, flight):
        if flight["item"] == self.bad:
            self.now = max(self.now, flight["end"])
            raise ValueError(f"item {self.bad}")
        return super().settle(flight)

    def close(self, flights) -> None:
        pass


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(1, 12), window=st.integers(1, 5))
def test_a_failing_front_stops_the_run_after_every_item_before_it(data, n, window):
    """Whatever the timing, the items before the failing one come out (in order), then its error: a settle
    that raised while earlier tails still ran dropped their outputs."""
    times = st.lists(st.floats(0, 10, allow_nan=False), min_size=n, max_size=n)
    bad = data.draw(st.integers(0, n - 1))
    executor = FailingFront(data.draw(times), data.draw(times), bad)
    got = []
    try:
        for out in frames_in_flight(range(n), window, executor):
            got.append(out)
    except ValueError as e:
        assert str(e) == f"item {bad}"
    else:
        raise AssertionError("no error")
    assert got == [(i,) for i in range(bad)]


# ----------------------------------------------------------------------- a source whose next item is not there yet


class Arrivals:
    """Items arriving at times `at` on the executor's clock (a live stream): reading one not there yet waits
    for it; `ready(timeout)` waits at most `timeout` for it. `log` records ("read" | "out", item, time)."""

    def __init__(self, executor: SimulatedExecutor, at: list[float]):
        self.executor, self.at = executor, at
        self.taken = 0
        self.log: list[tuple[str, int, float]] = []

    def __iter__(self):
        for i, t in enumerate(self.at):
            self.executor.now = max(self.executor.now, t)
            self.taken = i + 1
            self.log.append(("read", i, self.executor.now))
            yield i

    def ready(self, timeout: float) -> bool:
        if self.taken >= len(self.at):
            return True  # the end: reading it does not wait
        now = self.executor.now
        self.executor.now = max(now, min(self.at[self.taken], now + timeout))
        return self.at[self.taken] <= self.executor.now

    def run(self, window: int) -> list[tuple]:
        outs = []
        for out in frames_in_flight(self, window, self.executor):
            self.log.append(("out", out[0], self.executor.now))
            outs.append(out)
        return outs


def test_a_finished_frame_comes_out_before_the_next_one_arrives():
    """Frames 10 apart, each done 2 after it arrives, window 3: frame k's output comes out at 10k + 2, before
    frame k+1 is read (reading it first held the output until frame k+1 arrived, 8 later)."""
    executor = SimulatedExecutor(front=[1] * 4, tail=[1] * 4)
    source = Arrivals(executor, [0, 10, 20, 30])
    assert source.run(3) == [(0,), (1,), (2,), (3,)]
    assert [(kind, i) for kind, i, _ in source.log] == [(kind, i) for i in range(4) for kind in ("read", "out")]
    for kind, i, t in source.log:  # the end of each of its two stages seen within WAKE_SECONDS
        assert t == (10 * i if kind == "read" else pytest.approx(10 * i + 2, abs=2 * WAKE_SECONDS))


def test_a_short_frame_is_not_held_behind_a_look_at_the_source():
    """Frames done a quarter after each stage: with frames in flight the loop only glances at the source (it
    never waits there longer than WAKE_SECONDS), so frame k comes out at 10k + 0.5, not a whole time unit later."""
    executor = SimulatedExecutor(front=[0.25] * 3, tail=[0.25] * 3)
    source = Arrivals(executor, [0, 10, 20])
    assert source.run(3) == [(0,), (1,), (2,)]
    outs = [t for kind, _, t in source.log if kind == "out"]
    assert outs == [pytest.approx(10 * k + 0.5, abs=2 * WAKE_SECONDS) for k in range(3)]


def test_frames_that_arrive_together_are_in_flight_together():
    """A burst: the source is ready, so the window fills as with a file (every frame starts at once)."""
    executor = SimulatedExecutor(front=[5] * 4, tail=[1] * 4)
    source = Arrivals(executor, [0, 0, 0, 0])
    assert source.run(4) == [(0,), (1,), (2,), (3,)]
    assert executor.most_in_flight == 4 and set(executor.started.values()) == {0}


@settings(max_examples=100, deadline=None)
@given(data=st.data(), n=st.integers(0, 10), window=st.integers(1, 5))
def test_a_live_source_gives_every_output_in_order_within_the_window(data, n, window):
    times = st.lists(st.floats(0, 10, allow_nan=False), min_size=n, max_size=n)
    gaps = data.draw(times)
    executor = SimulatedExecutor(data.draw(times), data.draw(times))
    source = Arrivals(executor, [sum(gaps[: i + 1]) for i in range(n)])
    assert source.run(window) == [(i,) for i in range(n)]
    assert executor.most_in_flight <= window
