"""The frames-in-flight loop: many frames at once, the recurrence in frame order, outputs in order.

One loop, whatever runs the work (`FlightExecutor`): worker threads
(`cortex.runtime.engines.threads.ThreadFrames`, an item is a frame), worker processes
(`cortex.runtime.engines.processes`) or Ray actors
(`cortex.runtime.engines.ray.RayFrames`, an item is a chunk of frames).
For each item read from the source, in order:

    start(item)    on the caller as the item is read: the cheap work that must
                   run in order (the delayed part, leading recurrences, checks),
                   then the front (the parallel part) handed to the executor;
    settle(flight) on the caller, in item order: wait for the front, run the
                   recurrence, hand the tail (the encoder) to the executor;
    finish(flight) wait for the tail; the item's outputs, in order.

At most `window` items are in flight (started, not finished), so memory is
bounded by the window, never by the video. A finished tail is handed back
as soon as it is first in line, and a finished front settled; while both
the oldest tail and the oldest front are still running, the caller waits
for whichever ends first (`wait`): blocking on the front alone left a
worker idle for the rest of that front whenever a tail ended meanwhile,
since the window stayed full (benchmarks/README.md, Engines). On the way out (the end, an error, the caller closing the
generator) `close(flights)` cancels what is still running. An item whose
front fails (its settle raises) stops the run after every item before it
has come out, as a sequential run stops at its first failing frame; the
executor's settle releases what that item held.

A source whose next item may not be there yet (a live stream) says so:
`items.ready(timeout)` waits at most `timeout` seconds for its next item (or
its end) and says whether reading it would not wait. The loop then reads an
item only while it is ready or nothing is in flight, so a finished item's
outputs come out as soon as it is first in line, never held until the next
item arrives. While both the source and the flights are pending, it looks at
either in turn, waiting `WAKE_SECONDS` on the source each time. A source
without `ready` (a file, a list) is read as soon as the window has room.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

ItemT = TypeVar("ItemT", contravariant=True)
FrontT = TypeVar("FrontT")
TailT = TypeVar("TailT")

WAKE_SECONDS = 0.002
"""While the source has no item ready and no flight has ended, how long the loop waits on the source before it
looks at the flights again: a finished item waits at most this long to come out."""


class FlightExecutor(Protocol[ItemT, FrontT, TailT]):
    """An engine's half of `frames_in_flight`: an item starts as a front, a settled front is a tail, a
    finished tail gives the item's outputs (one tuple per frame)."""

    def start(self, item: ItemT) -> FrontT: ...

    def settle(self, flight: FrontT) -> TailT: ...

    def done(self, flight: FrontT | TailT) -> bool: ...

    def wait(self, flights: list[FrontT | TailT]) -> None: ...

    def finish(self, flight: TailT) -> Iterable[tuple[Any, ...]]: ...

    def close(self, flights: list[FrontT | TailT]) -> None: ...


def frames_in_flight(items: Iterable[ItemT], window: int,
                     executor: FlightExecutor[ItemT, FrontT, TailT]) -> Iterator[tuple[Any, ...]]:
    """The outputs of every item of `items`, in order, at most `window` items in flight (see the module docstring)."""
    window = max(window, 1)
    fronts: deque[FrontT] = deque()
    tails: deque[TailT] = deque()
    ready = getattr(items, "ready", None)  # a source that may have no item yet (see the module docstring)
    source = iter(items)
    exhausted = False
    try:
        while True:
            while not exhausted and len(fronts) + len(tails) < window:
                if ready is not None and (fronts or tails) and not ready(0.0):
                    break  # nothing to read now: what is in flight goes on meanwhile
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                fronts.append(executor.start(item))
            waiting = ready is not None and not exhausted and len(fronts) + len(tails) < window
            if tails and executor.done(tails[0]):
                yield from executor.finish(tails.popleft())
            elif fronts and (executor.done(fronts[0]) or not (tails or waiting)):
                try:
                    settled = executor.settle(fronts.popleft())
                except Exception:
                    while tails:  # the items before the failing one still come out, then its error
                        yield from executor.finish(tails.popleft())
                    raise
                tails.append(settled)
            elif waiting and ready is not None:  # the source and the flights both pending: whichever first
                ready(WAKE_SECONDS)
            elif fronts:  # the oldest tail and the oldest front both running: whichever ends first
                executor.wait([tails[0], fronts[0]])
            elif tails:
                yield from executor.finish(tails.popleft())
            else:
                return
    finally:
        executor.close([*fronts, *tails])


__all__ = ["WAKE_SECONDS", "FlightExecutor", "frames_in_flight"]
