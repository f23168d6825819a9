"""The threads engine: frames in flight on worker threads of the caller's process.

    for encoded, score in compiled.run_video(frames, workers=2):   # engine="threads"

Frame n runs the frame split's parts (`cortex.passes.frame_split`):

    delayed(frame n, leading state of n-1) -> delayed inputs of n+1, leading recurrences  [worker threads,
                                                                                           chained in frame order]
    parallel(frame n, delayed inputs of n-1) -> the gate, the heavy stages                [worker threads]
    recurrence(parallel's values, recurrent state of n-1)                                 [caller, in order]
    tail(frame n, score n) -> outputs (the encoder)                                       [worker threads]

through the one frames-in-flight loop (`cortex.runtime.engines.flight`). The values
are exactly those of calling `compiled(frame)` frame after frame: the same
ops, lowered and emitted the same way, on the same inputs. OpenCV and NumPy
release the GIL, which is what makes threads pay off; while a run goes, OpenCV
and BLAS get cores // workers threads each (`thread_budget`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, InvalidStateError, ThreadPoolExecutor, wait
from typing import Any

from cortex.runtime.engines.base import EngineRun, unknown_options
from cortex.runtime.engines.flight import frames_in_flight
from cortex.runtime.parts import LoadedSplit
from cortex.runtime.threads import as_args, thread_budget

ThreadFront = tuple[int, Any, dict[str, Any], "Future[None]", "Future[Ahead]", LoadedSplit]
"""A frame in flight on the threads engine: (index, its arguments, its values, the front's future, its
delayed part's updates, the split it runs)."""
ThreadTail = tuple[int, Any, dict[str, Any], "Future[Any]", LoadedSplit]
"""A settled frame: (index, its arguments, its values, the tail's future, the split it runs)."""
Ahead = tuple[dict[str, Any], frozenset[str], dict[str, Any]]
"""What a frame's delayed part leaves the next: the delayed inputs and leading recurrences by name, the
recomputable states it left stale, and its inputs (by wiring key) to recompute them from."""


class ThreadFrames:
    """The executor of `frames_in_flight` on a thread pool: one item is one frame.

    A frame's front (its delayed part, then its parallel part) is one task on
    the pool. The delayed part of frame n+1 reads frame n's delayed inputs and
    leading recurrences (the blur gate's history), so the fronts are chained
    by a small future per frame (`ahead`: the delayed part's updates): frame
    n+1's task waits for frame n's delayed part only, never for its parallel
    part, and the caller runs no delayed part at all (it was the bottleneck when it did). The pool takes tasks in submission order, so
    a task only ever waits for one that is already running or done.

    With `EngineRun.variants`, frame n runs its own mode's split: the states are held by name across the
    variants, and a stale recomputable state is recomputed in the front of the first frame that reads it.
    """

    def __init__(self, run: EngineRun):
        """`run`: its state starts the run, and each frame's is handed back as the frame is delivered."""
        self.run, self.split = run, run.split
        self.variants = run.variants
        splits = list(self.variants.splits.values()) if self.variants is not None else [run.split]
        workers = run.workers
        start = run.start_state()
        self.state: dict[str, Any] = {}
        for split in splits:
            self.state.update(split.internal_state(start))
        self.ahead_names = list(dict.fromkeys(n for split in splits for n in split.ahead))
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cortex-frame")
        self.index = 0
        self.ahead: Future[Ahead] = Future()  # the delayed part's updates as of the next frame read
        # a state only written is not read
        self.ahead.set_result(({n: self.state.get(n) for n in self.ahead_names}, frozenset(), {}))
        self.chain: list[Future[Ahead]] = [self.ahead]  # the `ahead` futures not yet settled (cancelled on close)

    def start(self, item: Any) -> ThreadFront:
        index = self.index
        split = self.split if self.variants is None else self.variants.splits[self.variants.mode_of(index)]
        args = as_args(item)
        env = split.inputs(args)  # a bad frame fails here, on the caller, as it is read
        inputs = dict(env) if self.variants is not None and self.variants.recompute else {}
        ahead = set(split.ahead)
        env.update(split.state_env({n: self.state[n] for n in split.state_ports if n not in ahead}))
        before, mine = self.ahead, Future[Ahead]()
        self.ahead = mine
        self.chain.append(mine)
        self.index += 1
        return index, args, env, self.pool.submit(self._front, split, env, inputs, index, before, mine), mine, split

    def _front(self, split: LoadedSplit, env: dict[str, Any], inputs: dict[str, Any], index: int,
               before: Future[Ahead], mine: Future[Ahead]) -> None:
        """On a worker: the delayed part once frame index-1's has given its updates, then the parallel part."""
        try:
            previous, stale, last = before.result()
            reads = [n for n in split.ahead if n in split.state_ports]
            if stale & set(reads):
                previous = {**previous, **self._recomputed(stale & set(reads), last, previous)}
            env.update(split.state_env({n: previous[n] for n in reads}))
            split.parts["delayed"](env, index)
            written = split.updates(env, split.ahead)
        except BaseException as e:
            _settle_future(mine, exception=e)
            raise
        left: frozenset[str] = frozenset()
        if self.variants is not None:
            left = self.variants.recompute - written.keys()  # what this frame does not update is stale after it
        _settle_future(mine, result=({**previous, **written}, left, inputs if left else {}))
        split.parts["parallel"](env, index)

    def _recomputed(self, names: frozenset[str], inputs: dict[str, Any], previous: dict[str, Any]) -> dict[str, Any]:
        """The stale states `names` after the frame of `inputs`, by the delayed part of the first variant (in
        order) that writes each (what `ModeSwitch` recomputes them with on a sequential switch)."""
        assert self.variants is not None
        values: dict[str, Any] = {}
        for writer in self.variants.splits.values():
            got = (names - values.keys()) & set(writer.ahead) & writer.update_ports.keys()
            if not got:
                continue
            env = dict(inputs)
            env.update(writer.state_env({n: previous[n] for n in writer.state_ports if n in previous}))
            writer.parts["delayed"](env, None)
            values.update(writer.updates(env, got))
        return values

    def settle(self, flight: ThreadFront) -> ThreadTail:
        i, args, env, future, mine, split = flight
        future.result()
        self.chain.remove(mine)
        env.update(split.state_env({n: self.state[n] for n in split.recurrent}))
        split.parts["recurrence"](env, i)
        self.state.update(split.updates(env, split.recurrent))
        return i, args, env, self.pool.submit(split.parts["tail"], env, i), split

    def done(self, flight: ThreadFront | ThreadTail) -> bool:
        return flight[3].done()

    def wait(self, flights: list[ThreadFront | ThreadTail]) -> None:
        wait([f[3] for f in flights], return_when=FIRST_COMPLETED)

    def finish(self, flight: ThreadTail) -> list[tuple[Any, ...]]:
        _, args, env, future, split = flight
        future.result()
        outputs, state = split.outputs(env, args)
        self.run.hand_back(state)
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


def run_threads(run: EngineRun) -> Iterator[tuple[Any, ...]]:
    """Outputs of the run's frames through its split on `workers` threads, `window` frames in flight; each
    frame's state handed back as it is delivered."""
    with thread_budget(run.workers):
        yield from frames_in_flight(run.frames, run.window, ThreadFrames(run))


class Threads:
    """`run_video(engine="threads")`: no options; `profile=True` times its stages."""

    name = "threads"
    options: tuple[str, ...] = ()
    profiles = True
    variants = True

    def check(self, options: dict[str, Any]) -> None:
        unknown_options(self.name, options, self.options)

    def run(self, run: EngineRun, **options: Any) -> Iterator[tuple[Any, ...]]:
        return run_threads(run)


ENGINE = Threads()


__all__ = ["ENGINE", "ThreadFrames", "Threads", "run_threads"]
