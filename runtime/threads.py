"""Threads as executors: frames in flight on worker threads, and one frame's stages at once.

    for encoded, score in compiled.run_video(frames, workers=2):   # engine="threads"
    compiled = cortex.compile(module, workers=2)                    # stages of a frame concurrently

Frame n runs the frame split's parts (`cortex.passes.frame_split`):

    delayed(frame n, leading state of n-1) -> delayed inputs of n+1, leading recurrences  [worker threads,
                                                                                           chained in frame order]
    parallel(frame n, delayed inputs of n-1) -> the gate, the heavy stages                [worker threads]
    recurrence(parallel's values, recurrent state of n-1)                                 [caller, in order]
    tail(frame n, score n) -> outputs (the encoder)                                       [worker threads]

through the one frames-in-flight loop (`cortex.runtime.frames`). The values
are exactly those of calling `compiled(frame)` frame after frame: the same
ops, lowered and emitted the same way, on the same inputs.

With `workers` > 1 at compile time, one call runs every stage of the
delayed and parallel parts as soon as the stages it reads have finished
(the stage split, `cortex.passes.stage_split`), then the recurrence and
the tail; the frame's latency approaches the critical path.

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
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, ThreadPoolExecutor, wait
from typing import Any

import cv2

from cortex.runtime.blas import blas_limit
from cortex.runtime.frames import frames_in_flight
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
    re-finds every library on each entry (1.1 ms per call, measured)."""
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


# ---------------------------------------------------------------- frames in flight on threads


ThreadFront = tuple[int, Any, dict[str, Any], "Future[None]", "Future[dict[str, Any]]"]
"""A frame in flight on the threads engine: (index, its arguments, its values, the front's future, its
delayed part's updates)."""
ThreadTail = tuple[int, Any, dict[str, Any], "Future[Any]"]
"""A settled frame: (index, its arguments, its values, the tail's future)."""


class ThreadFrames:
    """The executor of `frames_in_flight` on a thread pool: one item is one frame.

    A frame's front (its delayed part, then its parallel part) is one task on
    the pool. The delayed part of frame n+1 reads frame n's delayed inputs and
    leading recurrences (the blur gate's history), so the fronts are chained
    by a small future per frame (`ahead`: the delayed part's updates): frame
    n+1's task waits for frame n's delayed part only, never for its parallel
    part, and the caller runs no delayed part at all (it was the bottleneck when it did). The pool takes tasks in submission order, so
    a task only ever waits for one that is already running or done.
    """

    def __init__(self, pipeline: Any, split: LoadedSplit, workers: int):
        """`pipeline`: the caller's object whose `state` (caller values) starts the run and follows each frame."""
        self.pipeline, self.split = pipeline, split
        self.state = split.internal_state(pipeline.state)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cortex-frame")
        self.index = 0
        self.ahead: Future[dict[str, Any]] = Future()  # the delayed part's updates as of the next frame read
        self.ahead.set_result({n: self.state.get(n) for n in split.ahead})  # a state only written is not read
        self.chain: list[Future[dict[str, Any]]] = [self.ahead]  # the `ahead` futures not yet settled (cancelled on close)

    def start(self, item: Any) -> ThreadFront:
        split, index = self.split, self.index
        args = as_args(item)
        env = split.inputs(args)  # a bad frame fails here, on the caller, as it is read
        ahead = set(split.ahead)
        env.update(split.state_env({n: self.state[n] for n in split.state_ports if n not in ahead}))
        before, mine = self.ahead, Future[dict[str, Any]]()
        self.ahead = mine
        self.chain.append(mine)
        self.index += 1
        return index, args, env, self.pool.submit(self._front, env, index, before, mine), mine

    def _front(self, env: dict[str, Any], index: int, before: Future, mine: Future) -> None:
        """On a worker: the delayed part once frame index-1's has given its updates, then the parallel part."""
        split = self.split
        try:
            previous = before.result()
            env.update(split.state_env({n: previous[n] for n in split.ahead if n in split.state_ports}))
            split.parts["delayed"](env, index)
        except BaseException as e:
            _settle_future(mine, exception=e)
            raise
        _settle_future(mine, result=split.updates(env, split.ahead))
        split.parts["parallel"](env, index)

    def settle(self, flight: ThreadFront) -> ThreadTail:
        i, args, env, future, mine = flight
        future.result()
        self.chain.remove(mine)
        split = self.split
        env.update(split.state_env({n: self.state[n] for n in split.recurrent}))
        split.parts["recurrence"](env, i)
        self.state.update(split.updates(env, split.recurrent))
        return i, args, env, self.pool.submit(split.parts["tail"], env, i)

    def done(self, flight: ThreadFront | ThreadTail) -> bool:
        return flight[3].done()

    def wait(self, flights: list[ThreadFront | ThreadTail]) -> None:
        wait([f[3] for f in flights], return_when=FIRST_COMPLETED)

    def finish(self, flight: ThreadTail) -> list[tuple[Any, ...]]:
        _, args, env, future = flight
        future.result()
        outputs, self.pipeline.state = self.split.outputs(env, args)
        return [outputs]

    def close(self, flights: Iterable[ThreadFront | ThreadTail]) -> None:
        for flight in flights:
            flight[3].cancel()
        for mine in self.chain:  # a front waiting for a cancelled one's delayed part stops waiting
            mine.cancel()
        self.pool.shutdown(wait=True, cancel_futures=True)


def _settle_future(future: Future, result: Any = None, exception: BaseException | None = None) -> None:
    """Set `future` unless `close` cancelled it meanwhile (then nobody waits for it)."""
    try:
        if exception is not None:
            future.set_exception(exception)
        else:
            future.set_result(result)
    except InvalidStateError:
        pass


def run_threads(pipeline: Any, split: LoadedSplit, frames: Iterable[Any], workers: int, window: int) -> Iterator[tuple[Any, ...]]:
    """Outputs of `frames` through `split` on `workers` threads, `window` frames in flight; `pipeline.state` follows."""
    with thread_budget(workers):
        yield from frames_in_flight(frames, window, ThreadFrames(pipeline, split, workers))


def run_split_sequential(pipeline: Any, split: LoadedSplit, frames: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
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
    and while other stages held the GIL that took up to 0.6 ms each (measured on the L2 frame)."""

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
    (`workers` - 1 threads: the caller is one of the workers); the first failure is raised."""
    _StageGraph(stages, env, index, pool).run()


def stage_pool(workers: int) -> ThreadPoolExecutor:
    """The threads one call's stages run on besides the caller's own (`run_stages`)."""
    return ThreadPoolExecutor(max(workers - 1, 1), thread_name_prefix="cortex-stage")


def call_with_concurrent_stages(split: LoadedSplit, state: dict[str, Any], inputs: tuple[Any, ...],
                                workers: int, pool: ThreadPoolExecutor | None = None) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(outputs, state after) of one call with the frame's independent stages on `workers` threads.

    The delayed part's stages and the parallel part's are one dependency graph: what only the next
    frame needs (the reused blurs of the previous frame's gray) runs beside the heavy stages instead of
    before them. `pool` (kept by the caller across calls; a new one per call when None) runs them."""
    env = split.enter(inputs, state)
    run_concurrent_stages(split, env, workers, pool)
    return split.outputs(env, inputs)


def run_concurrent_stages(split: LoadedSplit, env: dict[str, Any], workers: int, pool: ThreadPoolExecutor | None = None) -> None:
    """One frame's parts on `env` (`CallBoundary.enter`), its independent stages on `workers` threads
    (`call_with_concurrent_stages`)."""
    parts = split.parts
    with thread_budget(workers), contextlib.ExitStack() as owned:
        if pool is None:
            pool = owned.enter_context(stage_pool(workers))
        # a program saved before the delayed part had stages runs that part as one stage of the graph
        delayed: list[PartFunction | InOrder] = [*split.delayed_stages] or [parts["delayed"]]
        run_stages([*delayed, *split.stages], env, None, pool)
        parts["recurrence"](env, None)
        parts["tail"](env, None)


__all__ = [
    "MAX_WINDOW",
    "MAX_WORKERS",
    "ThreadFrames",
    "as_args",
    "call_with_concurrent_stages",
    "machine_cores",
    "run_concurrent_stages",
    "run_split_sequential",
    "run_stages",
    "run_threads",
    "stage_pool",
    "thread_budget",
]
