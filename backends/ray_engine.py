"""The Ray engine of `run_video`: frame chunks on Ray actors, the recurrence in order on the caller.

    for encoded, score in compiled.run_video(frames, workers=4, engine="ray"):            # a local Ray
    for out in compiled.run_video(frames, workers=16, engine="ray", address="ray://head:10001"):

Each actor (`FrameWorker`, one CPU) compiles the frame-split pipeline once,
from the optimised cortex module's text, and then runs chunks of frames:

- `front(chunk)`: the delayed and parallel parts of every frame of the
  chunk. A chunk starts from the frame before it (the previous chunk's last
  frame), whose delayed part gives the first frame's delayed inputs
  exactly; the very first chunk gets the caller's state instead. When the
  entry has leading recurrences (the blur gate's sharpness history), the
  caller runs the delayed part over every frame as it reads them and hands
  each chunk its starting values;
- `tail(chunk, values)`: the tail part (the encoder) of every frame, once
  the caller has run the recurrence over the chunk in frame order.

At most `window` chunks are in flight. `compiled.state` is brought up to
date at the end of each chunk (so the final state equals the sequential
run's). The first failure stops the run (`CortexError` naming the frame);
actors are killed on the way out, and a Ray the engine started itself is
shut down. Ray is an optional extra (`pip install cortex[ray]`).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from cortex.backends.frame_parallel import machine_cores, split_program_for
from cortex.errors import CortexError
from cortex.ir import to_text


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
    """One actor's compiled frame-split pipeline (a Ray actor class through `_actor_class`)."""

    def __init__(self, compile_fn, module_text: str, entry: str, weights: dict[str, float], threads: int,
                 post_passes: str | None, backend: str = "numpy", device: str = "cpu"):
        """`compile_fn`: the driver's `compile_pipeline` (handed down, so this level never imports the driver).
        On the IREE backend the actor's compile reads the disk cache the driver's compile filled."""
        limit_library_threads(threads)
        self.compiled = compile_fn(module_text, entry=entry, mode=None, weights=weights, post_passes=post_passes,
                                   backend=backend, device=device)
        self.program = split_program_for(self.compiled)
        parts = self.program.parts
        wanted = dict.fromkeys([*parts["recurrence"].arg_keys, *parts["tail"].arg_keys])
        self.returned = [k for k in wanted if not k.startswith("input:")]

    def front(self, frames: list, first: int, before: Any, delayed: dict | None, fixed: dict) -> list[dict]:
        """Delayed and parallel parts of `frames` (numbered from `first`).

        `delayed`: the delayed inputs of the first frame, or None to compute
        them from `before`, the frame before the chunk. `fixed`: read-only states.
        """
        program, entry = self.program, self.compiled.entry
        if delayed is None:
            env = {**program.inputs((before,), entry), **{f"state:{n}": v for n, v in fixed.items()}}
            program.parts["delayed"](env, first - 1)
            delayed = {n: env[f"update:{n}"] for n in program.ahead}
        values = []
        for k, frame in enumerate(frames):
            env = program.inputs((frame,), entry)
            env.update({f"state:{n}": v for n, v in {**delayed, **fixed}.items()})
            program.parts["delayed"](env, first + k)
            program.parts["parallel"](env, first + k)
            delayed = {n: env[f"update:{n}"] for n in program.ahead}
            values.append({key: env[key] for key in self.returned if key in env})
        if values:
            values[-1]["delayed"] = delayed
        return values

    def tail(self, frames: list, first: int, values: list[dict]) -> list[dict]:
        program, out = self.program, []
        for k, (frame, env) in enumerate(zip(frames, values)):
            env = {**env, **program.inputs((frame,), self.compiled.entry)}
            program.parts["tail"](env, first + k)
            out.append({key: v for key, v in env.items() if key.startswith("output:")})
        return out


def _actor_class(ray):
    return ray.remote(num_cpus=1)(FrameWorker)


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


def run_video_ray(compiled, frames: Iterable[Any], workers: int, window: int | None = None, address: str | None = None,
                  chunk: int = 8, num_cpus: int | None = None) -> Iterator[tuple[Any, ...]]:
    """`compiled.run_video(..., engine="ray")`: see the module docstring."""
    if chunk < 1:
        raise CortexError(f"chunk must be >= 1, got {chunk}")
    program = split_program_for(compiled)  # a pipeline that cannot be split fails here, before Ray starts
    return _run(compiled, program, frames, workers, max(window or 2 * workers, 1), address, chunk, num_cpus)


def _run(compiled, program, frames, workers, window, address, chunk, num_cpus):
    ray = _ray()
    started = start_ray(address, num_cpus)
    actors: list = []
    try:
        cores = int(ray.cluster_resources().get("CPU", machine_cores()))
        weights = {p.name: float(compiled._weights[p.index]) for p in compiled.args if p.kind == "weight"}
        text = to_text(compiled.cortex_module)
        worker_class = _actor_class(ray)
        threads = max(1, cores // workers)
        if compiled.compile_fn is None:
            raise CortexError("engine 'ray' needs a pipeline compiled by cortex.compile (its actors compile it again)")
        actors = [
            worker_class.remote(compiled.compile_fn, text, compiled.entry, weights, threads, compiled.post_passes,
                                compiled.backend, compiled.device)
            for _ in range(workers)
        ]
        state = program.internal_state(compiled.state)
        fixed = {n: state[n] for n in program.read_only}
        ahead = {n: state.get(n) for n in program.ahead}  # delayed inputs and leading recurrences, as of the next frame read
        fronts: deque = deque()
        tails: deque = deque()
        source = _chunks(frames, chunk)
        first, before, exhausted, turn = 0, None, False, itertools.count()
        while True:
            while not exhausted and len(fronts) + len(tails) < window:
                frames_chunk = next(source, None)
                if frames_chunk is None:
                    exhausted = True
                    break
                # the leading recurrences (the blur gate's history) run here, in order, as frames are read:
                # each chunk starts from their exact value, so chunks never wait for each other
                delayed = {n: ahead[n] for n in program.ahead} if first == 0 or program.leading else None
                for k, f in enumerate(frames_chunk):  # a bad frame fails here, on the caller, with the caller's words
                    env = program.inputs((f,), compiled.entry)
                    if program.leading:
                        env.update({f"state:{n}": v for n, v in {**ahead, **fixed}.items()})
                        program.parts["delayed"](env, first + k)
                        ahead.update({n: env[f"update:{n}"] for n in program.ahead})
                actor = actors[next(turn) % len(actors)]
                ref = ray.put(frames_chunk)
                fronts.append((first, frames_chunk, ref, actor, actor.front.remote(ref, first, before, delayed, fixed)))
                first += len(frames_chunk)
                before = frames_chunk[-1]
            if tails and _ready(ray, tails[0][-1]):
                yield from _finish(ray, compiled, program, tails.popleft())
            elif fronts:
                at, frames_chunk, ref, actor, future = fronts.popleft()
                values = _get(ray, future)
                for k, env in enumerate(values):
                    env.update({f"state:{n}": state[n] for n in program.recurrent})
                    program.parts["recurrence"](env, at + k)
                    state.update({n: env[f"update:{n}"] for n in program.recurrent})
                state.update(values[-1].pop("delayed"))
                tail_args = [{key: env[key] for key in program.parts["tail"].arg_keys if key in env} for env in values]
                tails.append((frames_chunk, dict(state), actor.tail.remote(ref, at, tail_args)))
            elif tails:
                yield from _finish(ray, compiled, program, tails.popleft())
            else:
                return
    finally:
        for actor in actors:
            ray.kill(actor)
        if started:
            ray.shutdown()


def _ready(ray, ref) -> bool:
    done, _ = ray.wait([ref], timeout=0)
    return bool(done)


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
        raise CortexError(f"a Ray worker died: {' '.join(str(e).split())[:300]}") from None


def _finish(ray, compiled, program, entry) -> Iterator[tuple[Any, ...]]:
    frames_chunk, state_after, future = entry
    outputs = [program.caller_outputs(out) for out in _get(ray, future)]
    for k, (frame, result) in enumerate(zip(frames_chunk, outputs)):
        if k == len(outputs) - 1:
            compiled.state = program.caller_state(state_after, result, (frame,))
        yield result


__all__ = ["FrameWorker", "limit_library_threads", "run_video_ray", "start_ray"]
