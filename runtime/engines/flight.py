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
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, TypeVar

ItemT = TypeVar("ItemT", contravariant=True)
FrontT = TypeVar("FrontT")
TailT = TypeVar("TailT")


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
    source = iter(items)
    exhausted = False
    try:
        while True:
            while not exhausted and len(fronts) + len(tails) < window:
                try:
                    item = next(source)
                except StopIteration:
                    exhausted = True
                    break
                fronts.append(executor.start(item))
            if tails and executor.done(tails[0]):
                yield from executor.finish(tails.popleft())
            elif fronts and (not tails or executor.done(fronts[0])):
                try:
                    settled = executor.settle(fronts.popleft())
                except Exception:
                    while tails:  # the items before the failing one still come out, then its error
                        yield from executor.finish(tails.popleft())
                    raise
                tails.append(settled)
            elif fronts:  # the oldest tail and the oldest front both running: whichever ends first
                executor.wait([tails[0], fronts[0]])
            elif tails:
                yield from executor.finish(tails.popleft())
            else:
                return
    finally:
        executor.close([*fronts, *tails])


__all__ = ["FlightExecutor", "frames_in_flight"]
