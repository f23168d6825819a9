"""What one worker of a chunked engine runs: a loaded frame split, fed chunks of frames.

Ray actors (`cortex.runtime.engines.ray`) and worker processes (`cortex.runtime.engines.processes`) are the
same worker: sent the compiled `Program` (plain data) once, it loads the frame split and runs, for a chunk
of frames, the delayed and parallel parts (`front`), the delayed part alone (`ahead`: the chain of leading
recurrences that starts the next chunk, on an actor) and the tail (`tail`); the recurrence runs on the
caller, in frame order. The processes engine runs its chain on the caller (`prepass` then `chain`: the
leading stages alone, whose results the fronts take: the images in the chunk's block), and each of its
fronts computes the delayed inputs it starts from out of the frame before its chunk (`delayed_inputs`). It
never compiles anything: the compiler need not be importable where it runs.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from cortex.errors import CortexError
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
    """One worker's loaded frame split: a Ray actor (`ray_executor._actor_class`) or a worker process.

    A multi-mode program (`Program.variants`) is sent whole: a chunk then names each frame's mode (`modes`,
    None: the first), and each frame runs its own variant's split (loaded on first use, `variant`), over the
    states the variants share by name. A recomputable delayed input a frame's variant does not update is
    stale after it; the next frame whose variant reads it first recomputes it from the frame before, by the
    first variant (in order) that updates it, as a sequential switch does (`cortex.runtime.modes`)."""

    def __init__(self, program: Program, threads: int | None, setup: Callable[[], None] | None = None):
        """`program`: the compiled program, sent whole; `setup`, when given, runs first (a worker hook);
        `threads`: OpenCV's and BLAS's threads in this process (None: left as they are, in the caller)."""
        if setup is not None:
            setup()
        if threads is not None:
            limit_library_threads(threads)
        self.program = program
        self.split = LoadedSplit(program)
        self.modes = tuple(program.variants)
        self.recompute = frozenset(s for s, d in program.switch_states.items() if d == "recompute")
        self._variants: dict[str | None, FrameWorker] = {None: self}
        if self.modes:
            self._variants[self.modes[0]] = self  # the program's own fields are its first variant's
        self._delayed_stages: list[Any] | None = None  # loaded on first use (a worker without a chain needs none)
        self._leading_stages: list[Any] | None = None
        self._input_stages: list[Any] | None = None
        self._local_stages: list[Any] | None = None
        parts = self.split.parts
        wanted = dict.fromkeys([*parts["recurrence"].arg_keys, *parts["tail"].arg_keys])
        self.returned = [k for k in wanted if not k.startswith("input:")]
        variants = list(program.variants.values()) or [program]
        self.leading = list(dict.fromkeys(n for v in variants for n in v.states_of("leading")))
        """The leading recurrences of every variant."""

    def variant(self, mode: str | None) -> FrameWorker:
        """The worker of `mode`'s variant (None: the first), loaded on first use."""
        worker = self._variants.get(mode)
        if worker is None:
            if mode not in self.program.variants:
                raise CortexError(f"unknown mode {mode!r:.60} (this program has: {', '.join(self.modes) or 'one mode'})")
            worker = self._variants[mode] = FrameWorker(self.program.variants[mode], None)
        return worker

    def reads_stale(self, stale: frozenset[str]) -> frozenset[str]:
        """The stale states this variant reads."""
        return stale & self.split.state_ports.keys()

    def recomputed(self, names: frozenset[str], frame: Any, index: int, delayed: dict, fixed: dict) -> dict:
        """The stale delayed inputs `names` after `frame`, each computed by the first variant (in order) that
        updates it."""
        values: dict[str, Any] = {}
        for mode in self.modes:
            writer = self.variant(mode)
            got = (names - values.keys()) & writer.split.update_ports.keys()
            if got:
                leading = {n: v for n, v in delayed.items() if n in writer.split.leading}
                values.update({n: v for n, v in writer.delayed_inputs(frame, index, leading, fixed).items() if n in got})
        return values

    def front(self, frames: list, first: int, before: Any, delayed: dict | None, fixed: dict,
              returns_delayed: bool = True, givens: list[dict] | None = None,
              modes: tuple[str | None, ...] | None = None, before_mode: str | None = None) -> list[dict]:
        """Delayed and parallel parts of `frames` (numbered from `first`; frame k in `modes[k]`, `before` in
        `before_mode`; None: the first mode).

        `delayed`: the values the chunk starts from — every delayed input and leading recurrence of the first
        frame, or, with `before` (the frame before the chunk), the leading recurrences' alone (None where
        there are none): the delayed inputs are computed here from `before` (they read no state, so that
        frame's delayed part needs no history). `fixed`: read-only states. `givens`, when given: for each
        frame what the chain computed of its leading stages (`chain`), which do not run here again.
        """
        stale: frozenset[str] = frozenset()
        if before is not None:
            leading = {n: v for n, v in (delayed or {}).items() if n in self.leading}
            inputs = self.variant(before_mode).delayed_inputs(before, first - 1, leading, fixed)
            delayed, stale = {**inputs, **leading}, self.recompute - inputs.keys()
        assert delayed is not None
        values, previous = [], before
        for k, frame in enumerate(frames):
            worker = self.variant(modes[k] if modes is not None else None)
            split = worker.split
            if worker.reads_stale(stale):
                delayed = {**delayed, **self.recomputed(worker.reads_stale(stale), previous, first + k - 1, delayed, fixed)}
            env = worker._delayed(frame, first + k, delayed, fixed, givens[k] if givens is not None else None)
            split.parts["parallel"](env, first + k)
            written = split.updates(env, split.ahead)
            delayed, stale, previous = {**delayed, **written}, self.recompute - written.keys(), frame
            values.append({key: env[key] for key in worker.returned if key in env})
        if values and returns_delayed:  # (not for the processes engine: its caller never takes them)
            values[-1]["delayed"] = delayed
        return values

    def delayed_inputs(self, frame: Any, index: int, leading: dict, fixed: dict) -> dict:
        """The delayed inputs after `frame` (its gray frame and what temporal reuse derives from it): only the
        delayed stages they need run. `leading`: the leading recurrences' values, read only by a delayed part
        without stages (their updates here are dropped)."""
        split = self.split
        env = split.inputs((frame,))
        env.update(split.state_env({n: v for n, v in {**leading, **fixed}.items() if n in split.state_ports}))
        for stage in self.input_stages():
            stage(env, index)
        return split.updates(env, [n for n in split.ahead if n not in split.leading])

    def ahead(self, frames: list, first: int, delayed: dict, fixed: dict,
              modes: tuple[str | None, ...] | None = None) -> dict:
        """The delayed part alone over `frames`, from `delayed` (the values before the first frame): the
        values after the last one, which start the next chunk. The chain of leading recurrences (the blur
        gate's history) runs here, chunk after chunk on the actors, in its own thread of the actor, so
        it never waits behind a chunk's parallel part, and the caller runs none of it. With `modes` (frame k
        in `modes[k]`'s variant) only the leading recurrences' values, by `chain`: the next chunk's front
        computes its delayed inputs from the frame before it."""
        if modes is not None:
            return self.chain(frames, first, {n: v for n, v in delayed.items() if n in self.leading}, fixed, None, modes)[1]
        for k, frame in enumerate(frames):
            env = self._delayed(frame, first + k, delayed, fixed)
            delayed = self.split.updates(env, self.split.ahead)
        return delayed

    def prepass(self, frames: list, first: int, fixed: dict, hand: Callable[[int, dict], None] | None = None,
                modes: tuple[str | None, ...] | None = None) -> list[dict]:
        """The chain's frame-local share over `frames` (frame k in `modes[k]`'s variant): the leading stages that
        read no leading recurrence (the gray frame, its sharpness), which need no earlier frame, so chunks'
        prepasses run side by side; returns each frame's results that `chain` reads or hands on. The images
        among the results (the gray frame) go to `hand`, when given, with the frame's index in `frames`, as soon
        as they are computed: the processes engine writes them into the chunk's block for its front, which then
        does not compute them again. They are not kept: a chunk's would be held until its chain ran (a large
        image a frame), and keep the program's buffer pool from reusing their buffers for the next frame."""
        computed = []
        for k, frame in enumerate(frames):
            worker = self.variant(modes[k] if modes is not None else None)
            split, local = worker.split, worker.local_stages()
            env = {**split.inputs((frame,)), **split.state_env({n: v for n, v in fixed.items() if n in split.state_ports})}
            for stage in local:
                stage(env, first + k)
            results = {key: env[key] for stage in local for key in stage.result_keys if key in env}
            if hand is not None:
                hand(k, {key: v for key, v in results.items() if not handed_on(v)})
            read = worker.chain_reads()
            computed.append({key: v for key, v in results.items() if key in read or handed_on(v)})
            del env, results
        return computed

    def chain(self, frames: list, first: int, leading: dict, fixed: dict, computed: list[dict] | None = None,
              modes: tuple[str | None, ...] | None = None, each: list[dict] | None = None) -> tuple[list[dict], dict]:
        """The chain of leading recurrences over `frames` (frame k in `modes[k]`'s variant), from `leading` (their
        values before the first frame): only the delayed stages they read run (the blur gate's gray frame and
        sharpness) — only those that read the recurrences (the history's push) where `computed` gives the
        `prepass`'s results. Returns, for each frame, what the leading stages computed that is small
        (`handed_on`: the sharpness, the history; the gray frame reaches a front through `prepass`'s `hand`, or
        is computed again), and the leading values after the last frame, which the next chunk starts from;
        `each`, when given, gets the leading values after each frame (the state of a run stopped inside it)."""
        givens: list[dict] = []
        for k, frame in enumerate(frames):
            worker = self.variant(modes[k] if modes is not None else None)
            split, stages = worker.split, worker.leading_stages()
            local = set(worker.local_stages()) if computed is not None else set()
            env = {**split.inputs((frame,)), **split.state_env({n: v for n, v in fixed.items() if n in split.state_ports})}
            env.update(split.state_env({n: v for n, v in leading.items() if n in split.state_ports}))
            if computed is not None:
                env.update(computed[k])
            for stage in stages:
                if stage not in local:
                    stage(env, first + k)
            givens.append({key: env[key] for stage in stages for key in stage.result_keys
                           if key in env and handed_on(env[key])})
            leading = {**leading, **split.updates(env, split.leading)}
            if each is not None:
                each.append(leading)
        return givens, leading

    def chain_reads(self) -> set[str]:
        """What the chain's stages that are not the prepass's read (of the prepass's results)."""
        local = self.local_stages()
        return {key for stage in self.leading_stages() if stage not in local for key in stage.arg_keys}

    def delayed_stages(self) -> list[Any]:
        """The delayed part's stages, in order (the whole part as one where the program has no stages)."""
        if self._delayed_stages is None:
            self._delayed_stages = LoadedSplit(self.program, stages=True).delayed_stages or [self.split.parts["delayed"]]
        return self._delayed_stages

    def _slice(self, states: list[str]) -> list[Any]:
        """The delayed stages the updates of `states` depend on, in order."""
        needed = {self.split.boundary.update_keys[n] for n in states}
        kept: list[Any] = []
        for stage in reversed(self.delayed_stages()):
            if needed & set(stage.result_keys):
                kept.append(stage)
                needed |= set(stage.arg_keys)
        return kept[::-1]

    def leading_stages(self) -> list[Any]:
        """The delayed stages the leading recurrences' updates depend on: the chain's."""
        if self._leading_stages is None:
            self._leading_stages = self._slice(self.split.leading)
        return self._leading_stages

    def local_stages(self) -> list[Any]:
        """The leading stages that read no leading recurrence, not even through another stage: `prepass`'s."""
        if self._local_stages is None:
            recurrent = {f"state:{n}" for n in self.split.leading}
            local = []
            for stage in self.leading_stages():
                if recurrent & set(stage.arg_keys):
                    recurrent |= set(stage.result_keys)
                else:
                    local.append(stage)
            self._local_stages = local
        return self._local_stages

    def input_stages(self) -> list[Any]:
        """The delayed stages the delayed inputs' updates depend on: what computes them from the frame before
        a chunk."""
        if self._input_stages is None:
            self._input_stages = self._slice([n for n in self.split.ahead if n not in self.split.leading])
        return self._input_stages

    def _delayed(self, frame: Any, index: int, delayed: dict, fixed: dict, given: dict | None = None) -> dict:
        """A frame's delayed part; with `given` (the chain's results), a stage whose results are all given is
        skipped."""
        split = self.split
        env = split.inputs((frame,))
        env.update(split.state_env({n: v for n, v in {**delayed, **fixed}.items() if n in split.state_ports}))
        if given is None:
            split.parts["delayed"](env, index)
            return env
        env.update(given)
        for stage in self.delayed_stages():
            if not all(key in given for key in stage.result_keys):
                stage(env, index)
        return env

    def tail(self, frames: list, first: int, values: list[dict], modes: tuple[str | None, ...] | None = None) -> list[dict]:
        out = []
        for k, (frame, env) in enumerate(zip(frames, values)):
            split = self.variant(modes[k] if modes is not None else None).split
            env = {**env, **split.inputs((frame,))}
            split.parts["tail"](env, first + k)
            out.append({key: v for key, v in env.items() if key.startswith("output:")})
        return out


GIVEN_BYTES = 64 << 10
"""The largest array the chain hands on to a front by value (`handed_on`): a larger one is an image (the gray
frame), which goes from the prepass to the front in the chunk's shared-memory block instead,
never through the pool's pipes."""


def handed_on(value: Any) -> bool:
    """Whether the chain sends `value` on to the front by value (a scalar or a small array), not as an image."""
    return getattr(value, "nbytes", 0) <= GIVEN_BYTES


def chunks_of(frames: Iterable[Any], size: int) -> Iterator[list[Any]]:
    it = iter(frames)
    while chunk := list(itertools.islice(it, size)):
        yield chunk


def settle_chunk(split: LoadedSplit, state: dict[str, Any], values: list[dict[str, Any]], first: int,
                 splits: list[LoadedSplit] | None = None, each: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """The caller's share of a chunk whose front came back as `values`: the recurrence over its frames in
    frame order (updating `state`; frame k by `splits[k]`, when given, else `split`), then the delayed values
    that start the next chunk taken into `state`; returns the tail's arguments, one dict per frame. `each`, when
    given, gets a copy of `state` after each frame's recurrence (before the delayed values are taken in)."""
    for k, env in enumerate(values):
        frame_split = splits[k] if splits is not None else split
        env.update(frame_split.state_env({n: state[n] for n in frame_split.recurrent}))
        frame_split.parts["recurrence"](env, first + k)
        state.update(frame_split.updates(env, frame_split.recurrent))
        if each is not None:
            each.append(dict(state))
    state.update(values[-1].pop("delayed"))
    return [{key: env[key] for key in (splits[k] if splits is not None else split).parts["tail"].arg_keys if key in env}
            for k, env in enumerate(values)]


__all__ = ["FrameWorker", "chunks_of", "limit_library_threads", "settle_chunk"]
