"""What one worker of a chunked engine runs: a loaded frame split, fed chunks of frames.

Ray actors (`cortex.runtime.ray_executor`) and worker processes (`cortex.runtime.processes`) are the
same worker: sent the compiled `Program` (plain data) once, it loads the frame split and runs, for a chunk
of frames, the delayed and parallel parts (`front`), the delayed part alone (`ahead`: the chain of leading
recurrences that starts the next chunk, on an actor) and the tail (`tail`); the recurrence runs on the
caller, in frame order. The processes engine runs its chain on the caller (`chain`: the leading stages
alone, whose results the fronts take). It never compiles anything: the compiler need not be importable
where it runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cortex.runtime.parts import LoadedSplit
from cortex.runtime.program import Program


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
    """One worker's loaded frame split: a Ray actor (`ray_executor._actor_class`) or a worker process."""

    def __init__(self, program: Program, threads: int | None, setup: Callable[[], None] | None = None):
        """`program`: the compiled program, sent whole; `setup`, when given, runs first (a worker hook);
        `threads`: OpenCV's and BLAS's threads in this process (None: left as they are, in the caller)."""
        if setup is not None:
            setup()
        if threads is not None:
            limit_library_threads(threads)
        self.program = program
        self.split = LoadedSplit(program)
        self._leading_stages: list[Any] | None = None  # the chain's slice of the delayed part, on first use
        self._rest_stages: list[Any] = []  # the rest of the delayed part (the fronts' share), with it
        parts = self.split.parts
        wanted = dict.fromkeys([*parts["recurrence"].arg_keys, *parts["tail"].arg_keys])
        self.returned = [k for k in wanted if not k.startswith("input:")]

    def front(self, frames: list, first: int, before: Any, delayed: dict | None, fixed: dict,
              returns_delayed: bool = True, givens: list[dict] | None = None) -> list[dict]:
        """Delayed and parallel parts of `frames` (numbered from `first`).

        `delayed`: the delayed inputs and leading recurrences of the first frame, or None to compute them
        from `before`, the frame before the chunk (only without leading recurrences: the delayed inputs read
        no state, so that frame's delayed part needs no history). `fixed`: read-only states. `givens`, when
        given: for each frame what its leading stages computed (`chain`), so only the rest of its delayed
        part runs here.
        """
        split = self.split
        if delayed is None:
            env = {**split.inputs((before,)), **split.state_env({n: v for n, v in fixed.items() if n in split.state_ports})}
            split.parts["delayed"](env, first - 1)
            delayed = split.updates(env, split.ahead)
        values = []
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed, givens[k] if givens is not None else None)
            split.parts["parallel"](env, first + k)
            delayed = split.updates(env, split.ahead)
            values.append({key: env[key] for key in self.returned if key in env})
        if values and returns_delayed:  # (not when the caller has them: `chain`)
            values[-1]["delayed"] = delayed
        return values

    def ahead(self, frames: list, first: int, delayed: dict, fixed: dict) -> dict:
        """The delayed part alone over `frames`, from `delayed` (the values before the first frame): the
        values after the last one, which start the next chunk. The chain of leading recurrences (the blur
        gate's history) runs here, chunk after chunk on the actors, in its own thread of the actor, so
        it never waits behind a chunk's parallel part, and the caller runs none of it."""
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed)
            delayed = self.split.updates(env, self.split.ahead)
        return delayed

    def chain(self, frames: list, first: int, leading: dict, fixed: dict) -> tuple[list[dict], dict]:
        """The chain of leading recurrences over `frames`, from `leading` (their values before the first frame),
        where the caller holds the frames: for each frame what its leading stages computed (the fronts take
        it instead of computing it again: the blur gate's gray frame and sharpness), and every delayed value
        after the last frame (the rest of the delayed part runs for that frame alone), which the next chunk
        starts from and the caller's state takes."""
        split = self.split
        stages, rest = self.leading_stages(), self.rest_stages()
        givens: list[dict] = []
        env: dict = {}
        for k, frame in enumerate(frames):
            env = split.inputs((frame,))
            env.update(split.state_env({n: v for n, v in {**leading, **fixed}.items() if n in split.state_ports}))
            for stage in stages:
                stage(env, first + k)
            givens.append({key: env[key] for stage in stages for key in stage.result_keys if key in env})
            leading = split.updates(env, split.leading)
        for stage in rest:
            stage(env, first + len(frames) - 1)
        return givens, split.updates(env, split.ahead)

    def leading_stages(self) -> list[Any]:
        """The stages of the delayed part that the leading recurrences' updates depend on, in order (the whole
        delayed part where the program has no stages)."""
        if self._leading_stages is None:
            staged = LoadedSplit(self.program, stages=True).delayed_stages
            needed = {self.split.boundary.update_keys[n] for n in self.split.leading}
            kept: list[Any] = []
            for stage in reversed(staged):
                if needed & set(stage.result_keys):
                    kept.append(stage)
                    needed |= set(stage.arg_keys)
            self._leading_stages = kept[::-1] if staged else [self.split.parts["delayed"]]
            self._rest_stages = [stage for stage in staged if stage not in kept]
        return self._leading_stages

    def rest_stages(self) -> list[Any]:
        """The delayed part's other stages, in order: what a front runs of a frame whose leading stages ran in
        the chain (none where the program has no stages: the chain ran the whole delayed part)."""
        self.leading_stages()
        return self._rest_stages

    def _delayed(self, frame: Any, index: int, delayed: dict, fixed: dict, given: dict | None = None) -> dict:
        split = self.split
        env = split.inputs((frame,))
        env.update(split.state_env({n: v for n, v in {**delayed, **fixed}.items() if n in split.state_ports}))
        if given is None:
            split.parts["delayed"](env, index)
            return env
        env.update(given)
        for stage in self.rest_stages():
            stage(env, index)
        return env

    def tail(self, frames: list, first: int, values: list[dict]) -> list[dict]:
        split, out = self.split, []
        for k, (frame, env) in enumerate(zip(frames, values)):
            env = {**env, **split.inputs((frame,))}
            split.parts["tail"](env, first + k)
            out.append({key: v for key, v in env.items() if key.startswith("output:")})
        return out


def chunks_of(frames: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(frames)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def settle_chunk(split: LoadedSplit, state: dict[str, Any], values: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """The caller's share of a chunk whose front came back as `values`: the recurrence over its frames in
    frame order (updating `state`), then the delayed values that start the next chunk taken into `state`;
    returns the tail's arguments, one dict per frame."""
    for k, env in enumerate(values):
        env.update(split.state_env({n: state[n] for n in split.recurrent}))
        split.parts["recurrence"](env, first + k)
        state.update(split.updates(env, split.recurrent))
    state.update(values[-1].pop("delayed"))
    return [{key: env[key] for key in split.parts["tail"].arg_keys if key in env} for env in values]


__all__ = ["FrameWorker", "chunks_of", "limit_library_threads", "settle_chunk"]
