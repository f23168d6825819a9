"""The processes engine's scheduler: chunks of frames through the frames-in-flight loop on a pool's workers.

A chunk's `front` (delayed and parallel parts) runs on a worker, the recurrence on the caller in frame order,
the chunk's `tail` (the encoder) on a worker; the frames (and what the chain hands on) lie in the chunk's
shared-memory block (`blocks.FrameBlock`). With leading recurrences (the blur gate's sharpness history) each
chunk's prepass (the leading stages that read no recurrence) runs on the caller's prepass threads, chunks side
by side, then its chain (the history's push) on the chain thread, chunk after chunk; the caller launches a
chunk's front as soon as its chain is done.
"""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any

from cortex.errors import CortexError, whole_number
from cortex.runtime.engines.base import EngineRun
from cortex.runtime.engines.chunk_worker import chunks_of, settle_chunk
from cortex.runtime.engines.flight import frames_in_flight
from cortex.runtime.engines.processes import pool as pools
from cortex.runtime.engines.processes.blocks import FrameBlock, SharedMemoryShortage
from cortex.runtime.engines.processes.pool import ProcessPool
from cortex.runtime.parts import LoadedSplit
from cortex.runtime.threads import MAX_WORKERS

CHUNK = 8
"""Frames a worker gets at once by default: fewer chunks, fewer hand-offs (each sends the values that start the
next chunk); benchmarks/README.md has the figures."""


@dataclass
class _Chunk:
    """A chunk in flight: its frames, the chain's future (with leading recurrences), then its block and front
    (launched when the chain is done), then the state after it and its tail."""

    at: int
    frames: list[Any]
    before: Any = None  # the frame before the chunk (None for the run's first chunk)
    modes: tuple[str | None, ...] | None = None  # each frame's mode, and first the one before it (with variants)
    prepass: Future | None = None
    chain: Future | None = None
    block: FrameBlock | None = None  # written by the chunk's prepass, or by the caller when it launches the chunk
    after: dict[str, Any] | None = None  # the leading recurrences' values after the chunk (the chain's)
    leading_each: list[dict[str, Any]] | None = None  # their values after each of its frames (the chain's)
    front: Future | None = None
    state_after: dict[str, Any] | None = None
    states: list[dict[str, Any]] | None = None  # the state after each frame (`state_after` the last)
    tail: Future | None = None

    @property
    def before_given(self) -> bool:
        """Whether the block holds the frame before the chunk, first (every chunk but the run's first)."""
        return self.before is not None

    @property
    def frame_modes(self) -> tuple[str | None, ...] | None:
        """Each frame's mode (None: every frame in the program's first)."""
        return self.modes[1:] if self.modes is not None and self.before_given else self.modes

    def running(self) -> Future | None:
        """The future the chunk waits on now (None: not launched yet)."""
        return self.tail or self.front


class ProcessFrames:
    """The executor of `frames_in_flight` on worker processes: one item is a chunk of frames.

    With leading recurrences a chunk's chain runs on the pool's chain thread, chunk after chunk, as chunks are
    read, after the chunk's prepass on the prepass threads; the caller launches a chunk (writes its block, hands
    its front to a worker) as soon as its chain is done, whenever it would otherwise wait (`_launch_ready`).
    The prepass threads, the chain thread and the caller's thread thus share the caller's work: the frame-local
    stages, the history's push, the blocks.

    With `EngineRun.variants` each frame runs its own mode's variant (the chunk names its frames' modes and
    the mode of the frame before it, `FrameWorker`), over the states the variants share by name."""

    def __init__(self, run: EngineRun, pool: ProcessPool):
        self.run, self.split, self.pool = run, run.split, pool
        self.variants = run.variants
        splits = variant_splits(run)
        start = run.start_state()
        self.state: dict[str, Any] = {}
        for split in splits:
            self.state.update(split.internal_state(start))
        self.fixed = {n: self.state[n] for split in splits for n in split.read_only}
        ahead = dict.fromkeys(n for split in splits for n in split.ahead)
        self.start_values: dict[str, Any] = {n: self.state.get(n) for n in ahead}  # the run's first chunk's
        self.leading_names = list(dict.fromkeys(n for split in splits for n in split.leading))
        self.leading: dict[str, Any] = {n: self.state.get(n) for n in self.leading_names}  # the chain's next start
        self.before_mode: str | None = None
        self.chain_failed = False
        self.first, self.before = 0, None
        self.waiting: list[_Chunk] = []  # started, not launched, in order
        self.last: tuple[dict[str, Any], tuple[Any, ...], Any, int, str | None] | None = None  # `up_to_date`'s

    def start(self, frames_chunk: list) -> _Chunk:
        modes = None
        if self.variants is not None:  # asked in frame order, as the chunk is read
            mine = tuple(self.variants.mode_of(self.first + k) for k in range(len(frames_chunk)))
            modes = (self.before_mode, *mine) if self.before is not None else mine
            self.before_mode = mine[-1]
        chunk = _Chunk(self.first, frames_chunk, self.before, modes)
        self.first += len(frames_chunk)
        self.before = frames_chunk[-1]
        if self.leading_names:
            assert self.pool.chain_thread is not None and self.pool.prepass is not None
            chunk.prepass = self.pool.prepass.submit(self._prepass, chunk)
            chunk.chain = self.pool.chain_thread.submit(self._chain, chunk, chunk.prepass)
            self.waiting.append(chunk)
            self._launch_ready()
        else:  # each chunk after the first starts from the frame before it: chunks never wait for each other
            self._launch(chunk, {}, None)
        return chunk

    def _prepass(self, chunk: _Chunk) -> list[dict[str, Any]]:
        """On a prepass thread: the chunk's prepass, which writes the chunk's block as it goes — the frames (and
        the values the run's first chunk starts from) when its first frame is done, then each frame's images
        (the gray frame), which the front takes rather than computing them again."""
        frames = [chunk.before, *chunk.frames] if chunk.before_given else chunk.frames
        start = None if chunk.before_given else self.start_values

        def hand(k: int, images: dict[str, Any]) -> None:
            if chunk.block is None:
                chunk.block = FrameBlock(frames, self.pool.blocks, start, slots=(len(chunk.frames), images))
            chunk.block.put(k, images)

        computed = self.pool.local.prepass(chunk.frames, chunk.at, self.fixed, hand, chunk.frame_modes)
        assert chunk.block is not None  # `hand` runs for every frame, and a chunk has frames
        return computed

    def _chain(self, chunk: _Chunk, prepass: Future) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any],
                                                             list[dict[str, Any]]]:
        """On the chain thread, once the chunk's prepass is done: the leading values the chunk starts from, what
        the chain hands on of each frame's leading stages, the leading values after the chunk (the next
        chunk's start) and those after each of its frames."""
        if self.chain_failed:  # never raised: the failed chunk before settles (and raises) first
            raise CortexError("a chunk before this one failed")
        start = self.leading
        each: list[dict[str, Any]] = []
        try:
            givens, after = self.pool.local.chain(chunk.frames, chunk.at, start, self.fixed, prepass.result(),
                                                  chunk.frame_modes, each)
        except BaseException:
            self.chain_failed = True
            raise
        self.leading = after
        return start, givens, after, each

    def _launch_ready(self) -> None:
        """Launch, in order, every waiting chunk whose chain is done."""
        while self.waiting and self.waiting[0].chain is not None and self.waiting[0].chain.done():
            chunk = self.waiting.pop(0)
            assert chunk.chain is not None
            try:
                start, givens, chunk.after, chunk.leading_each = chunk.chain.result()
            except Exception as e:  # raised in frame order, when this chunk settles
                chunk.front = Future()
                chunk.front.set_exception(e)
                continue
            self._launch(chunk, start, givens)

    def _launch(self, chunk: _Chunk, leading: dict[str, Any], givens: list[dict[str, Any]] | None) -> None:
        """The chunk's front on a worker, with its block (the caller writes it now where no prepass did). The
        run's first chunk starts from the run's values; any other from `leading` (the leading recurrences') and
        the frame before it, first in the block, from which the front computes the delayed inputs — rather than
        the caller sending them (all of temporal reuse's derived states: megabytes a chunk)."""
        if chunk.block is None:
            start = leading if chunk.before_given else self.start_values
            frames = [chunk.before, *chunk.frames] if chunk.before_given else chunk.frames
            chunk.block = FrameBlock(frames, self.pool.blocks, start, givens)
            spec = chunk.block.spec
        else:
            spec = chunk.block.spec_with(leading if chunk.before_given else None, givens)
        chunk.front = self._submit(self.pool.fronts, "front", spec, chunk.at, chunk.before_given, self.fixed, chunk.modes)

    def _until_done(self, chunk: _Chunk) -> Future:
        """Wait for the chunk's front to be launched and done, launching others as their chains end."""
        while True:
            self._launch_ready()
            future = chunk.front
            if future is not None and future.done():
                return future
            chains = [c.chain for c in self.waiting if c.chain is not None]
            wait([*chains, *([future] if future is not None else [])], return_when=FIRST_COMPLETED)

    def settle(self, chunk: _Chunk) -> _Chunk:
        split, state = self.split, self.state
        future = self._until_done(chunk)
        try:
            values = self._result(future, chunk.at, len(chunk.frames))
        except BaseException:
            if chunk.block is not None:
                chunk.block.free()
            raise
        values[-1]["delayed"] = chunk.after or {}  # the state's delayed inputs: `up_to_date`, at the run's end
        each: list[dict[str, Any]] = []
        tail_args = settle_chunk(split, state, values, chunk.at, self._splits(chunk), each)
        assert chunk.block is not None
        chunk.tail = self._submit(self.pool.fronts, "tail", chunk.block.spec, chunk.at, chunk.before_given, tail_args,
                                  chunk.modes)
        chunk.state_after = dict(state)
        leading = chunk.leading_each or [{}] * len(each)  # a run stopped inside the chunk: the chain's values then
        chunk.states = [*({**s, **lead} for s, lead in zip(each[:-1], leading)), chunk.state_after]
        return chunk

    def _splits(self, chunk: _Chunk) -> list[LoadedSplit] | None:
        """Each frame's split (None: every frame runs the run's split)."""
        if self.variants is None or chunk.frame_modes is None:
            return None
        return [self.variants.splits[m] if m is not None else self.split for m in chunk.frame_modes]

    def done(self, chunk: _Chunk) -> bool:
        self._launch_ready()
        future = chunk.running()
        return future is not None and future.done()

    def wait(self, chunks: list[_Chunk]) -> None:
        self._launch_ready()
        futures = [f for f in (c.running() for c in chunks) if f is not None]
        chains = [c.chain for c in self.waiting if c.chain is not None]
        wait([*futures, *chains], return_when=FIRST_COMPLETED)
        self._launch_ready()

    def finish(self, chunk: _Chunk) -> Iterator[tuple[Any, ...]]:
        assert chunk.tail is not None and chunk.block is not None and chunk.states is not None
        splits = self._splits(chunk) or [self.split] * len(chunk.frames)
        try:
            outputs = [s.caller_outputs(out) for s, out in zip(splits, self._result(chunk.tail, chunk.at, len(chunk.frames)))]
        finally:
            chunk.block.free()
        modes = chunk.frame_modes or (None,) * len(chunk.frames)
        for k, (frame, result) in enumerate(zip(chunk.frames, outputs)):
            self.last = (chunk.states[k], result, frame, chunk.at + k, modes[k])  # a consumer may stop at any frame
            yield result

    def up_to_date(self) -> None:
        """The state after the last frame delivered, handed back when the run ends (whatever ends it, a consumer
        that stops inside a chunk too). The caller holds the recurrences and leading values after each frame of a
        chunk; only the fronts compute the delayed inputs (the gray frame, temporal reuse's derived states), so
        the caller computes them here, once, for that frame."""
        if self.last is None:
            return
        state, result, frame, index, mode = self.last
        self.last = None
        worker = self.pool.local.variant(mode)
        split = self.variants.splits[mode] if self.variants is not None and mode is not None else self.split
        inputs = worker.delayed_inputs(frame, index, {n: state[n] for n in split.leading}, self.fixed)
        self.run.hand_back(split.caller_state({**state, **inputs}, result, (frame,)))

    def close(self, chunks: list[_Chunk]) -> None:
        self.chain_failed = True  # a chain still queued stops at once
        for chunk in chunks:
            for future in (chunk.prepass, chunk.chain, chunk.running()):
                if future is not None:
                    future.cancel()
        running = [f for c in chunks for f in (c.prepass, c.chain, c.running()) if f is not None]
        if wait(running, timeout=pools.CLOSE_GRACE).not_done:  # a task that hangs: its pool goes (its blocks with it)
            pools.drop_pool(self.run.owner)
        self.waiting.clear()
        for chunk in chunks:
            if chunk.block is not None:
                chunk.block.free()

    def _submit(self, pool: ProcessPoolExecutor, method: str, *args: Any) -> Future:
        try:
            return pool.submit(pools.task, method, *args)
        except BrokenProcessPool:
            pools.drop_pool(self.run.owner)
            raise CortexError("a worker process died (the pool is restarted on the next run)") from None

    def _result(self, future: Future, first: int, count: int) -> Any:
        """The task's result; a worker's CortexError as itself, anything else naming the chunk's frames."""
        try:
            return future.result()
        except SharedMemoryShortage as e:
            raise SharedMemoryShortage(str(e)) from None
        except CortexError as e:
            if str(e).startswith("frame "):
                raise CortexError(str(e)) from None
            frames = f"frame {first}" if count == 1 else f"frames {first} to {first + count - 1}"
            raise CortexError(f"{frames}: {e}") from None
        except BrokenProcessPool:
            pools.drop_pool(self.run.owner)
            raise CortexError("a worker process died (the pool is restarted on the next run)") from None


def variant_splits(run: EngineRun) -> list[LoadedSplit]:
    """The splits the run's frames run: every variant's, or the run's own."""
    return list(run.variants.splits.values()) if run.variants is not None else [run.split]


def run_processes(run: EngineRun, chunk: int = CHUNK) -> Iterator[tuple[Any, ...]]:
    """`compiled.run_video(..., engine="processes")`: see the package docstring."""
    whole_number("workers", run.workers, 1, MAX_WORKERS)
    chain = any(split.leading for split in variant_splits(run))
    pool = pools.pool_for(run.owner, run.program, run.workers, chain=chain)
    executor = ProcessFrames(run, pool)
    with pool.blocks.run(run.window):
        try:
            yield from frames_in_flight(chunks_of(run.frames, chunk), run.window, executor)
        finally:
            executor.up_to_date()


__all__ = ["CHUNK", "ProcessFrames", "run_processes"]
