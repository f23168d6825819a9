"""Ray actors as executors of the frames-in-flight loop: frame chunks on actors, the recurrence on the caller.

    for encoded, score in compiled.run_video(frames, workers=4, engine="ray"):            # a local Ray
    for out in compiled.run_video(frames, workers=16, engine="ray", address="ray://head:10001"):

Each actor (`FrameWorker`, one CPU) is sent the compiled `Program` (plain
data) and loads its frame split; it never compiles anything, and the
compiler need not even be importable where it runs. An item of the loop
(`cortex.runtime.frames`) is a chunk of frames:

- `front(chunk)` on an actor: the delayed and parallel parts of every frame
  of the chunk. A chunk starts from the frame before it (the previous
  chunk's last frame), whose delayed part gives the first frame's delayed
  inputs exactly; the very first chunk gets the caller's state instead.
  When the entry has leading recurrences (the blur gate's sharpness
  history), each chunk's starting values come from `ahead(previous chunk)`
  on an actor: the delayed part alone, chained chunk after chunk (issue 21
  item 6; the caller used to run it for every frame as it read them);
- the recurrence over the chunk, on the caller, in frame order;
- `tail(chunk, values)` on the same actor: the tail part (the encoder).

`compiled.state` is brought up to date at the end of each chunk (so the
final state equals the sequential run's). The first failure stops the run
(`CortexError` naming the frame); actors are killed on the way out, and a
Ray the engine started itself is shut down. Ray is an optional extra
(`pip install cortex[ray]`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cortex.errors import CortexError
from cortex.runtime.frames import frames_in_flight
from cortex.runtime.parts import LoadedSplit
from cortex.runtime.program import Program
from cortex.runtime.threads import machine_cores


def _ray():
    try:
        import ray
    except ImportError:  # pragma: no cover - ray is in the test extra
        raise CortexError("engine 'ray' needs Ray: pip install 'cortex[ray]'") from None
    return ray


def limit_library_threads(threads: int) -> None:
    """OpenCV and BLAS threads of this (worker) process."""
    import cv2

    cv2.setNumThreads(threads)
    try:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")
    except ImportError:  # pragma: no cover
        pass


class FrameWorker:
    """One actor's loaded frame split (a Ray actor class through `_actor_class`)."""

    def __init__(self, program: Program, threads: int, setup: Callable[[], None] | None = None):
        """`program`: the compiled program, sent whole; `setup`, when given, runs first (a worker hook)."""
        if setup is not None:
            setup()
        limit_library_threads(threads)
        self.split = LoadedSplit(program)
        parts = self.split.parts
        wanted = dict.fromkeys([*parts["recurrence"].arg_keys, *parts["tail"].arg_keys])
        self.returned = [k for k in wanted if not k.startswith("input:")]

    def front(self, frames: list, first: int, before: Any, delayed: dict | None, fixed: dict) -> list[dict]:
        """Delayed and parallel parts of `frames` (numbered from `first`).

        `delayed`: the delayed inputs (and leading recurrences) of the first frame, or None to compute
        them from `before`, the frame before the chunk. `fixed`: read-only states.
        """
        split = self.split
        if delayed is None:
            env = {**split.inputs((before,)), **{f"state:{n}": v for n, v in fixed.items()}}
            split.parts["delayed"](env, first - 1)
            delayed = {n: env[f"update:{n}"] for n in split.ahead}
        values = []
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed)
            split.parts["parallel"](env, first + k)
            delayed = {n: env[f"update:{n}"] for n in split.ahead}
            values.append({key: env[key] for key in self.returned if key in env})
        if values:
            values[-1]["delayed"] = delayed
        return values

    def ahead(self, frames: list, first: int, delayed: dict, fixed: dict) -> dict:
        """The delayed part alone over `frames`, from `delayed` (the values before the first frame): the
        values after the last one, which start the next chunk. The chain of leading recurrences (the blur
        gate's history) runs here, chunk after chunk on the actors, in its own thread of the actor, so
        it never waits behind a chunk's parallel part, and the caller runs none of it."""
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed)
            delayed = {n: env[f"update:{n}"] for n in self.split.ahead}
        return delayed

    def _delayed(self, frame: Any, index: int, delayed: dict, fixed: dict) -> dict:
        split = self.split
        env = split.inputs((frame,))
        env.update({f"state:{n}": v for n, v in {**delayed, **fixed}.items() if n in split.state_ports})
        split.parts["delayed"](env, index)
        return env

    def tail(self, frames: list, first: int, values: list[dict]) -> list[dict]:
        split, out = self.split, []
        for k, (frame, env) in enumerate(zip(frames, values)):
            env = {**env, **split.inputs((frame,))}
            split.parts["tail"](env, first + k)
            out.append({key: v for key, v in env.items() if key.startswith("output:")})
        return out


CHAIN = "chain"
"""The actor's concurrency group of `FrameWorker.ahead` (one thread): the leading-recurrence chain runs
beside the chunk in progress (`front`, `tail`: the default group, one at a time, in order)."""


def _actor_class(ray):
    return ray.remote(num_cpus=1, concurrency_groups={CHAIN: 1})(FrameWorker)


def _chunks(frames: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(frames)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def start_ray(address: str | None = None, num_cpus: int | None = None) -> bool:
    """Join `address` or start a local Ray (unless one is running); True when this call started it."""
    ray = _ray()
    if ray.is_initialized():
        return False
    ray.init(address=address, num_cpus=num_cpus if address is None else None, include_dashboard=False,
             log_to_driver=False, configure_logging=False)
    return True


class RayFrames:
    """The executor of `frames_in_flight` on Ray actors: one item is a chunk of frames."""

    def __init__(self, ray, pipeline: Any, split: LoadedSplit, actors: list):
        self.ray, self.pipeline, self.split, self.actors = ray, pipeline, split, actors
        self.state = split.internal_state(pipeline.state)
        self.fixed = {n: self.state[n] for n in split.read_only}
        # delayed inputs and leading recurrences before the next chunk: values, then an object ref (`ahead`)
        self.ahead: Any = {n: self.state.get(n) for n in split.ahead}
        self.first, self.before, self.turn = 0, None, itertools.count()

    def start(self, frames_chunk: list):
        split, first = self.split, self.first
        for f in frames_chunk:  # a bad frame fails here, on the caller, with the caller's words
            split.inputs((f,))
        actor = self.actors[next(self.turn) % len(self.actors)]
        ref = self.ray.put(frames_chunk)
        # With leading recurrences (the blur gate's sharpness history) a chunk starts from their exact
        # value after the previous chunk: `ahead` runs the delayed part over each chunk on an actor,
        # chained chunk after chunk (its result, an object ref, is the next chunk's start), so the
        # caller runs no delayed part and a chunk's front waits only for that short chain. Without
        # them a chunk starts from the frame before it, and chunks never wait for each other.
        delayed = self.ahead if first == 0 or split.leading else None
        future = actor.front.remote(ref, first, self.before, delayed, self.fixed)
        if split.leading:
            self.ahead = actor.ahead.options(concurrency_group=CHAIN).remote(ref, first, delayed, self.fixed)
        self.first += len(frames_chunk)
        self.before = frames_chunk[-1]
        return first, frames_chunk, ref, actor, future

    def settle(self, flight):
        at, frames_chunk, ref, actor, future = flight
        split, state = self.split, self.state
        values = _get(self.ray, future)
        for k, env in enumerate(values):
            env.update({f"state:{n}": state[n] for n in split.recurrent})
            split.parts["recurrence"](env, at + k)
            state.update({n: env[f"update:{n}"] for n in split.recurrent})
        state.update(values[-1].pop("delayed"))
        tail_args = [{key: env[key] for key in split.parts["tail"].arg_keys if key in env} for env in values]
        return frames_chunk, dict(state), actor.tail.remote(ref, at, tail_args)

    def done(self, flight) -> bool:
        ready, _ = self.ray.wait([flight[-1]], timeout=0)
        return bool(ready)

    def finish(self, flight) -> Iterator[tuple[Any, ...]]:
        frames_chunk, state_after, future = flight
        outputs = [self.split.caller_outputs(out) for out in _get(self.ray, future)]
        for k, (frame, result) in enumerate(zip(frames_chunk, outputs)):
            if k == len(outputs) - 1:
                self.pipeline.state = self.split.caller_state(state_after, result, (frame,))
            yield result

    def close(self, flights) -> None:
        pass  # the actors are killed by run_ray, whatever is still running on them goes with them


def check_chunk(chunk: int) -> None:
    if chunk < 1:
        raise CortexError(f"chunk must be >= 1, got {chunk}")


def run_ray(pipeline: Any, program: Program, split: LoadedSplit, frames: Iterable[Any], workers: int, window: int,
            address: str | None = None, chunk: int = 8, num_cpus: int | None = None,
            worker_setup: Callable[[], None] | None = None) -> Iterator[tuple[Any, ...]]:
    """`compiled.run_video(..., engine="ray")`: see the module docstring. `worker_setup`: run first in each actor."""
    ray = _ray()
    started = start_ray(address, num_cpus)
    actors: list = []
    try:
        cores = int(ray.cluster_resources().get("CPU", machine_cores()))
        worker_class = _actor_class(ray)
        threads = max(1, cores // workers)
        program_ref = ray.put(program)
        actors = [worker_class.remote(program_ref, threads, worker_setup) for _ in range(workers)]
        yield from frames_in_flight(_chunks(frames, chunk), window, RayFrames(ray, pipeline, split, actors))
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()


def _get(ray, ref):
    """`ray.get`, with a worker's CortexError raised again here as itself (one line)."""
    try:
        return ray.get(ref)
    except ray.exceptions.RayTaskError as e:
        cause = getattr(e, "cause", None)
        if isinstance(cause, CortexError):
            raise CortexError(str(cause)) from None
        raise CortexError(f"a Ray worker failed: {' '.join(str(cause or e).split())[:300]}") from None
    except ray.exceptions.RayActorError as e:
        text = str(e)
        if getattr(e, "actor_init_failed", False):  # the error is the traceback's last line: "module.Error: message"
            last = text.strip().splitlines()[-1] if text.strip() else text
            name, _, message = last.partition(": ")
            said = message if name.rpartition(".")[2] == "CortexError" else last
            raise CortexError(f"a Ray worker could not start: {' '.join(said.split())[:300]}") from None
        raise CortexError(f"a Ray worker died: {' '.join(text.split())[:300]}") from None


__all__ = ["CHAIN", "FrameWorker", "RayFrames", "check_chunk", "limit_library_threads", "run_ray", "start_ray"]
