"""What one worker of a chunked engine runs: a loaded frame split, fed chunks of frames.

Ray actors (`cortex.runtime.ray_executor`) and worker processes (`cortex.runtime.processes`) are the
same worker: sent the compiled `Program` (plain data) once, it loads the frame split and runs, for a chunk
of frames, the delayed and parallel parts (`front`), the delayed part alone (`ahead`: the chain of leading
recurrences that starts the next chunk) and the tail (`tail`); the recurrence runs on the caller, in frame
order. It never compiles anything: the compiler need not be importable where it runs.
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
        parts = self.split.parts
        wanted = dict.fromkeys([*parts["recurrence"].arg_keys, *parts["tail"].arg_keys])
        self.returned = [k for k in wanted if not k.startswith("input:")]

    def front(self, frames: list, first: int, before: Any, delayed: dict | None, fixed: dict,
              returns_delayed: bool = True) -> list[dict]:
        """Delayed and parallel parts of `frames` (numbered from `first`).

        `delayed`: the delayed inputs (and leading recurrences) of the first frame, or None to compute
        them from `before`, the frame before the chunk; given without the delayed inputs (only the
        leading recurrences, as `leading` returns them), those are computed from `before` — they read no
        state, so this frame's delayed part needs no history. `fixed`: read-only states.
        """
        split = self.split
        missing = [n for n in split.ahead if delayed is None or n not in delayed]
        if delayed is None or missing:
            given = {**fixed, **(delayed or {})}
            env = {**split.inputs((before,)), **split.state_env({n: v for n, v in given.items() if n in split.state_ports})}
            split.parts["delayed"](env, first - 1)
            delayed = {**(delayed or {}), **split.updates(env, missing)}
        values = []
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed)
            split.parts["parallel"](env, first + k)
            delayed = split.updates(env, split.ahead)
            values.append({key: env[key] for key in self.returned if key in env})
        if values and returns_delayed:  # (not when the caller has them: `after`)
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

    def leading(self, frames: list, first: int, leading: dict, fixed: dict) -> dict:
        """The leading recurrences alone over `frames`, from `leading` (their values before the first frame):
        their values after the last frame, which start the next chunk. Only the delayed part's stages they
        need run (the blur gate's sharpness, not the delayed inputs' derived states), so the chain costs a
        fraction of the delayed part; the fronts compute the delayed inputs from the frame before them."""
        split = self.split
        stages = self.leading_stages()
        for k, frame in enumerate(frames):
            env = split.inputs((frame,))
            env.update(split.state_env({n: v for n, v in {**leading, **fixed}.items() if n in split.state_ports}))
            for stage in stages:
                stage(env, first + k)
            leading = split.updates(env, split.leading)
        return leading

    def after(self, frames: list, first: int, leading: dict, fixed: dict) -> dict:
        """Every delayed value after `frames` (the leading recurrences chained from `leading`, the delayed inputs
        from the last frame): what the next chunk starts from, computed where the caller holds the frames,
        so a front need not send its delayed values back (at 480x640 with temporal reuse, 11 MB a chunk)."""
        leading = self.leading(frames[:-1], first, leading, fixed)
        env = self._delayed(frames[-1], first + len(frames) - 1, leading, fixed)
        return self.split.updates(env, self.split.ahead)

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
        return self._leading_stages

    def _delayed(self, frame: Any, index: int, delayed: dict, fixed: dict) -> dict:
        split = self.split
        env = split.inputs((frame,))
        env.update(split.state_env({n: v for n, v in {**delayed, **fixed}.items() if n in split.state_ports}))
        split.parts["delayed"](env, index)
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
