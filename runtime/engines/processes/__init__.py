"""The processes engine: worker processes as executors of the frames-in-flight loop, past the GIL, on one
machine.

    for encoded, score in compiled.run_video(frames, workers=16, engine="processes"):

The generated code of a frame is Python between NumPy and OpenCV calls, so threads stop scaling where the
interpreter's share of a frame saturates one GIL. Here each worker is a process with its own interpreter:
it is sent the compiled `Program` (plain data) once, when the pool starts, and loads its frame split
(`chunk_worker.FrameWorker`, the same worker a Ray actor is); it never compiles. Three modules, one job each:

- `blocks`: shared memory. Frames go to the workers in chunks through shared-memory blocks — a block per
  chunk in flight, written once by the caller and mapped by the workers, never pickled, reserved when made
  (a `/dev/shm` too small is one line before any frame); the blocks are reused by the next chunks and runs
  (`BlockCache`; the workers keep their mappings, `Maps`). Only the small values between the parts (the
  score map, the gate's scalars, the encoded bytes) come back through the pool's pipes.
- `pool`: the worker processes — started once from the fork server, ended with their caller however it
  ends, kept with the pipeline and reused by its next `run_video` with the same worker count;
  `close_pools()` ends them (also at exit).
- `scheduler`: the loop every engine runs (`cortex.runtime.engines.flight`), with the Ray engine's
  protocol: a chunk's `front` (delayed and parallel parts) on a worker, the recurrence on the caller in
  frame order, the chunk's `tail` (the encoder) on a worker. With leading recurrences (the blur gate's
  sharpness history) each chunk's starting values are chained over the chunks before it on a thread of the
  caller (only the history's push: the stages that read no recurrence run first as the chunk's prepass, on
  the caller's prepass threads, and write their images into the chunk's block, where the front takes
  them). A front computes the delayed inputs it starts from out of the frame before its chunk, first in its
  block; the caller computes them once, for the last frame delivered, when the run ends, and hands the
  state back then.

A multi-mode program's `run_video(modes=...)` keeps frames in flight across switches here too
(`Engine.variants`): the workers are sent the whole program, load each mode's split on first use, and a
chunk names each frame's mode (`chunk_worker.FrameWorker`); the caller runs each frame's recurrence, and
its prepass and chain each frame's leading stages, in that frame's variant.

Outputs and state equal `[compiled(f) for f in frames]` bit for bit, as with every engine. The caller's
CPU a frame, the blocks' costs and the chunk size's effect are in benchmarks/README.md.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from cortex.errors import whole_number
from cortex.runtime.engines.base import EngineRun, unknown_options
from cortex.runtime.engines.processes.pool import close_pools, drop_pool, pool_for, prepass_threads, worker_cpu_seconds
from cortex.runtime.engines.processes.scheduler import CHUNK, ProcessFrames, run_processes

PROCESS_OPTIONS = ("chunk",)
MAX_CHUNK = 4096


def check_process_options(options: dict[str, Any]) -> None:
    """A CortexError for an option `run_video(engine="processes")` does not take (before any process starts)."""
    unknown_options("processes", options, PROCESS_OPTIONS)
    whole_number("chunk", options.get("chunk", CHUNK), 1, MAX_CHUNK)


class Processes:
    """`run_video(engine="processes")`: option `chunk` (frames a worker gets at once)."""

    name = "processes"
    options = PROCESS_OPTIONS
    profiles = False
    variants = True

    def check(self, options: dict[str, Any]) -> None:
        check_process_options(options)

    def run(self, run: EngineRun, **options: Any) -> Iterator[tuple[Any, ...]]:
        return run_processes(run, **options)


ENGINE = Processes()


__all__ = [
    "CHUNK", "ENGINE", "PROCESS_OPTIONS", "ProcessFrames", "Processes", "check_process_options", "close_pools",
    "drop_pool", "pool_for", "prepass_threads", "run_processes", "worker_cpu_seconds",
]
