"""The frames-in-flight loop on a simulated clock: order, the window, and no worker left idle behind a full window.

`cortex.runtime.engines.flight.frames_in_flight` drives both engines; here a fake
executor runs every front and tail at once for as long as the test says, on
a clock that moves only when the loop waits, so each test is exact and
instant. The engines themselves are tested against the sequential call in
test_frame_parallel.py and test_ray_engine.py.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.runtime.engines.flight import frames_in_flight


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
