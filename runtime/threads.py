"""Threads within one call: one frame's independent stages at once, and the bounds every engine shares.

    compiled = cortex.compile(module)
    compiled.stage_threads = 2                                      # stages of a frame concurrently

With `stage_threads` > 1, one call runs every stage of the
delayed and parallel parts as soon as the stages it reads have finished
(the stage split, `cortex.passes.stage_split`), then the recurrence and
the tail; the frame's latency approaches the critical path. Frames in
flight on threads are an engine: `cortex.runtime.engines.threads`.

OpenCV and NumPy release the GIL, which is what makes threads pay off.
While a run is going, OpenCV and BLAS get cores // workers threads each
(`thread_budget`), so workers × library threads never exceed the cores.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import threading
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol

import cv2

from cortex.runtime.blas import blas_limit
from cortex.runtime.parts import InOrder, LoadedSplit, PartFunction

MAX_WORKERS = 4096
"""The most workers (threads, or Ray actors) one run or one call may ask for: far beyond any machine's
cores, and small enough that a typo (`workers=2**63-1`) is refused instead of exhausting memory."""

MAX_WINDOW = 4096
"""The most items (frames, or chunks on Ray) `run_video` keeps in flight: each holds a frame and its
intermediate values, so the window bounds the run's memory."""


def machine_cores() -> int:
    """Cores this process may use (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_BUDGET_LOCK = threading.Lock()


@contextlib.contextmanager
def thread_budget(workers: int, cores: int | None = None) -> Iterator[int]:
    """OpenCV and BLAS limited to cores // workers threads each while the block runs (restored after).

    Cheap enough for every call of a concurrent-stage pipeline: BLAS goes through `blas_limit` (a read,
    and a set and restore only where the count differs: µs), where threadpoolctl's `threadpool_limits`
    re-finds every library on each entry (benchmarks/README.md, Engines)."""
    per_worker = max(1, (cores or machine_cores()) // max(workers, 1))
    with _BUDGET_LOCK:
        previous = cv2.getNumThreads()
        cv2.setNumThreads(per_worker)
    try:
        with blas_limit(per_worker):
            yield per_worker
    finally:
        with _BUDGET_LOCK:
            cv2.setNumThreads(previous)


def as_args(item: Any) -> tuple[Any, ...]:
    """A frame source's item as the entry's arguments (a tuple passes several inputs)."""
    return item if isinstance(item, tuple) else (item,)


class HasState(Protocol):
    """What `run_split_sequential` runs for: an object whose `state` starts the run and follows each frame."""

    state: dict[str, Any]


def run_split_sequential(pipeline: HasState, split: LoadedSplit, frames: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """The four parts one frame after the other, no threads: the split's own semantics, for tests."""
    for index, item in enumerate(frames):
        args = as_args(item)
        env = split.enter(args, pipeline.state)
        split.step(env, index)
        outputs, pipeline.state = split.outputs(env, args)
        yield outputs


# ---------------------------------------------------------------- one frame's stages at once


class _StageGraph:
    """One call's stages and what each waits for: run by the caller and the pool's threads together.

    A thread that finishes a stage goes straight on with a stage that became ready (the lowest-numbered:
    program order puts the delayed part's short chain to the gate first), and hands any others to the
    pool; nothing passes through a dispatcher. A dispatching caller had to be woken for every hand-off,
    and while other stages held the GIL that took long (benchmarks/README.md, Engines)."""

    def __init__(self, stages: Sequence[PartFunction | InOrder], env: dict[str, Any], index: int | None, pool: ThreadPoolExecutor):
        producer = {key: k for k, s in enumerate(stages) for key in s.result_keys}
        needs = [{producer[key] for key in s.arg_keys if key in producer and producer[key] != k} for k, s in enumerate(stages)]
        self.readers: list[list[int]] = [[] for _ in stages]
        for k, ks in enumerate(needs):
            for n in ks:
                self.readers[n].append(k)
        self.waiting = [len(ks) for ks in needs]
        self.ready = [k for k, w in enumerate(self.waiting) if w == 0]
        self.left = len(stages)
        self.stages, self.env, self.index, self.pool = stages, env, index, pool
        self.lock = threading.Lock()
        self.over = threading.Event()
        self.failure: BaseException | None = None
        if not stages:
            self.over.set()

    def drain(self) -> None:
        """Run ready stages until none is left to this thread."""
        while True:
            with self.lock:
                if self.failure is not None or not self.ready:
                    return
                k = heapq.heappop(self.ready)
            try:
                self.stages[k](self.env, self.index)
            except BaseException as e:  # noqa: BLE001 - handed to the caller, which raises it
                with self.lock:
                    if self.failure is None:
                        self.failure = e
                self.over.set()
                return
            with self.lock:
                self.left -= 1
                woken = 0
                for r in self.readers[k]:
                    self.waiting[r] -= 1
                    if self.waiting[r] == 0:
                        heapq.heappush(self.ready, r)
                        woken += 1
                if self.left == 0:
                    self.over.set()
            for _ in range(woken - 1):  # this thread takes one; an idle thread may take each other
                self.pool.submit(self.drain)

    def run(self) -> None:
        heapq.heapify(self.ready)
        for _ in range(len(self.ready) - 1):
            self.pool.submit(self.drain)
        self.drain()
        self.over.wait()
        if self.failure is not None:
            raise self.failure


def run_stages(stages: Sequence[PartFunction | InOrder], env: dict[str, Any], index: int | None, pool: ThreadPoolExecutor) -> None:
    """Each stage as soon as the stages whose results it reads are done, on the calling thread and `pool`'s
    (the stage threads but one: the caller is one of them); the first failure is raised."""
    _StageGraph(stages, env, index, pool).run()


def stage_pool(threads: int) -> ThreadPoolExecutor:
    """The threads one call's stages run on besides the caller's own (`run_stages`; `threads`: the stage threads)."""
    return ThreadPoolExecutor(max(threads - 1, 1), thread_name_prefix="cortex-stage")


def call_with_concurrent_stages(split: LoadedSplit, state: dict[str, Any], inputs: tuple[Any, ...],
                                threads: int, pool: ThreadPoolExecutor | None = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(outputs, state after) of one call with the frame's independent stages on `threads` stage threads.

    The delayed part's stages and the parallel part's are one dependency graph: what only the next
    frame needs (the reused blurs of the previous frame's gray) runs beside the heavy stages instead of
    before them. `pool` (kept by the caller across calls; a new one per call when None) runs them."""
    env = split.enter(inputs, state)
    run_concurrent_stages(split, env, threads, pool)
    return split.outputs(env, inputs)


def run_concurrent_stages(split: LoadedSplit, env: dict[str, Any], threads: int, pool: ThreadPoolExecutor | None = None) -> None:
    """One frame's parts on `env` (`CallBoundary.enter`), its independent stages on `threads` stage threads
    (`call_with_concurrent_stages`)."""
    parts = split.parts
    with thread_budget(threads), contextlib.ExitStack() as owned:
        if pool is None:
            pool = owned.enter_context(stage_pool(threads))
        # a program saved before the delayed part had stages runs that part as one stage of the graph
        delayed: list[PartFunction | InOrder] = [*split.delayed_stages] or [parts["delayed"]]
        run_stages([*delayed, *split.stages], env, None, pool)
        parts["recurrence"](env, None)
        parts["tail"](env, None)


__all__ = [
    "MAX_WINDOW",
    "MAX_WORKERS",
    "as_args",
    "call_with_concurrent_stages",
    "machine_cores",
    "run_concurrent_stages",
    "run_split_sequential",
    "run_stages",
    "stage_pool",
    "thread_budget",
]
