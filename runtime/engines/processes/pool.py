"""The processes engine's pool: worker processes that start once, end with their caller, and are kept with
the pipeline for its next run.

A worker is started from the fork server (Linux; spawn elsewhere), sent the compiled `Program` once and
loads its frame split (`chunk_worker.FrameWorker`); it never compiles. It ends as soon as its caller does,
however that ends (`exit_with`), and runs tasks on chunks whose frames lie in shared-memory blocks
(`task`, `blocks.Mapped`). A pool is kept with its owner (the compiled pipeline) and reused by its next
run with the same worker count; `close_pools()` ends them all (also at exit).
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib.machinery
import multiprocessing
import os
import select
import signal
import sys
import threading
import weakref
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from cortex.errors import CortexError
from cortex.runtime.engines.chunk_worker import FrameWorker
from cortex.runtime.engines.processes.blocks import KEEP_BYTES, BlockCache, BlockSpec, Mapped, Maps, check_usable
from cortex.runtime.memory_policy import keep_freed_memory
from cortex.runtime.program import Program
from cortex.runtime.threads import machine_cores

_WORKER: FrameWorker | None = None


_MAPS: Maps | None = None


def _start_worker(program: Program, threads: int, workers: int, caller: int) -> None:
    global _WORKER, _MAPS
    exit_with(caller)
    keep_freed_memory()  # the worker's own process: a frame's freed memory kept for the next
    _WORKER = FrameWorker(program, threads)
    _MAPS = Maps(4 * workers + 4, KEEP_BYTES // workers)


def exit_with(caller: int) -> None:
    """This worker ends as soon as `caller` (the process whose pool it is) does, however that ends (SIGKILL, the
    OOM killer): a thread waits on the caller's pidfd; where there is none, the kernel's parent-death signal
    (the worker's parent, the fork server, ends with the caller)."""
    if not sys.platform.startswith("linux"):  # pragma: no cover
        return
    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # the parent ended before the signal was asked for
        os._exit(1)
    try:
        watched = os.pidfd_open(caller)
    except (OSError, AttributeError):  # pragma: no cover - Linux before 5.3, or the caller is gone
        if not _alive(caller):
            os._exit(1)
        return
    threading.Thread(target=_exit_when_ended, args=(watched,), name="cortex-caller-watch", daemon=True).start()


PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover
        pass
    return True


def _exit_when_ended(pidfd: int) -> None:
    """On the worker's watch thread: a pidfd turns readable when its process has ended; then this process ends
    at once (what it was running is nobody's any more; its mappings of the caller's blocks go with it)."""
    select.select([pidfd], [], [])
    os._exit(1)


def task(method: str, spec: BlockSpec, *args: Any) -> Any:
    """Run `FrameWorker.<method>` over the chunk in `spec`; results are pickled copies (no view escapes)."""
    assert _WORKER is not None
    mapped = Mapped(spec, _MAPS)
    try:
        frames = mapped.frames
        first, before_given, given, modes = args  # `modes`: each frame's in the block (None: the first mode's)
        chunk = frames[1:] if before_given else frames
        chunk_modes = modes[1:] if modes is not None and before_given else modes
        if method == "front":  # the block holds the frame before the chunk first, when there is one
            before = frames[0] if before_given else None  # the values the chunk starts from: in the block
            before_mode = modes[0] if modes is not None and before_given else None
            return mapped.detached(_WORKER.front(chunk, first, before, mapped.delayed, given, False, mapped.givens,
                                                 chunk_modes, before_mode))
        return mapped.detached(_WORKER.tail(chunk, first, given, chunk_modes))
    finally:
        del frames
        mapped.close()


# ---------------------------------------------------------------- the pools, kept with their owner


@contextlib.contextmanager
def _main_not_rerun() -> Iterator[None]:
    """While worker processes start: they must not run the caller's script again.

    A forkserver or spawned child imports the parent's `__main__` from its path, which runs a script
    without an `if __name__ == "__main__":` guard a second time (and its `run_video` would start processes
    of its own). A worker needs nothing from `__main__` (its functions live in this module), so while the
    pool starts `__main__` is described by name as "__main__", which multiprocessing never imports."""
    main = sys.modules.get("__main__")
    if main is None or getattr(main, "__spec__", None) is not None:
        yield
        return
    main.__spec__ = importlib.machinery.ModuleSpec("__main__", None)
    try:
        yield
    finally:
        main.__spec__ = None


def worker_context() -> multiprocessing.context.BaseContext:
    """Linux: the fork server, which imports this module (NumPy, OpenCV, the runtime) once and forks each
    worker from that clean, single-threaded process — a worker starts in milliseconds, and nothing of the
    caller's threads (BLAS, OpenCV, the engines') is forked. Elsewhere: spawn."""
    if not sys.platform.startswith("linux"):
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload([__name__])
    return context


def _ready() -> None:
    """A task that only makes the pool start one more process."""


def prepass_threads(workers: int) -> int:
    """Threads of the caller that run chunks' prepasses side by side (`FrameWorker.prepass`: OpenCV and NumPy
    calls, which release the GIL): one per 4 workers. A prepass runs the chain's frame-local stages and writes
    its chunk's block; on one thread it would start many workers' first chunks one after the other and bound
    the engine's rate (benchmarks/README.md, Engines)."""
    return max(1, workers // 4)


class ProcessPool:
    """`workers` processes that run chunks, all started at once, now (a process per task submitted while none is
    idle: `workers` empty tasks start them all), and the caller's own loaded split (`local`), which runs the
    chain of leading recurrences (on `chain_thread`, with `chain`) and brings the state up at a run's end."""

    def __init__(self, program: Program, workers: int, chain: bool):
        context = worker_context()
        threads = max(1, machine_cores() // workers)
        self.workers = workers
        check_usable()  # a missing or read-only /dev/shm: one line, before any process starts
        try:
            self.fronts = ProcessPoolExecutor(workers, mp_context=context, initializer=_start_worker,
                                              initargs=(program, threads, workers, os.getpid()))
        except OSError as e:  # the pool's own locks live in /dev/shm too
            raise CortexError(f"the worker processes could not start: their locks need /dev/shm ({e.strerror or e}); "
                              "use --engine threads") from None
        self.local = FrameWorker(program, None)
        self.chain_thread = ThreadPoolExecutor(1, thread_name_prefix="cortex-chain") if chain else None
        self.prepass = ThreadPoolExecutor(prepass_threads(workers), thread_name_prefix="cortex-prepass") if chain else None
        self.blocks = BlockCache(keep=2 * workers + 2)
        with _main_not_rerun():
            started = [self.fronts.submit(_ready) for _ in range(workers)]
        try:
            for future in started:
                future.result()
        except BrokenProcessPool as e:
            self.close()
            raise CortexError(f"the worker processes could not start: {e}") from None

    def pids(self) -> list[int]:
        """The worker processes' ids (the executor's table of its processes)."""
        return sorted(self.fronts._processes)

    def close(self) -> None:
        """End the workers (one still running a task after `CLOSE_GRACE` seconds is killed: a hung task must
        not hang its caller's exit), the caller's threads, and the blocks."""
        processes = list((self.fronts._processes or {}).values())  # (none once shut down)
        self.fronts.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.join(CLOSE_GRACE)
            if process.exitcode is None:
                process.kill()
        for pool in (self.fronts, self.prepass, self.chain_thread):
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        self.blocks.close()


CLOSE_GRACE = 60.0
"""Seconds a closing pool (or a run that ends early) waits for a task still running before its workers are
killed."""


_POOLS: weakref.WeakKeyDictionary[Any, ProcessPool] = weakref.WeakKeyDictionary()
_POOLS_LOCK = threading.Lock()


def pool_for(pipeline: object, program: Program, workers: int, chain: bool) -> ProcessPool:
    """The pipeline's pool of `workers` processes: the one its last run used when the count is the same."""
    with _POOLS_LOCK:
        pool = _POOLS.get(pipeline)
        if pool is not None and (pool.workers != workers or (chain and pool.chain_thread is None)):
            pool.close()
            pool = None
        if pool is None:
            pool = ProcessPool(program, workers, chain)
            _POOLS[pipeline] = pool
            weakref.finalize(pipeline, pool.close)
        return pool


def worker_cpu_seconds(pipeline: object) -> float:
    """CPU seconds (user and system) the worker processes of the pipeline's kept pool have used so far: what a
    processes run costs beyond the caller's own `time.process_time()`. 0 without a pool, or where `/proc`
    cannot be read (not Linux)."""
    with _POOLS_LOCK:
        pool = _POOLS.get(pipeline)
    total = 0.0
    for pid in pool.pids() if pool is not None else []:
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # not Linux, or the process is gone
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def drop_pool(pipeline: object) -> None:
    with _POOLS_LOCK:
        pool = _POOLS.pop(pipeline, None)
    if pool is not None:
        pool.close()


def close_pools() -> None:
    """End every kept worker process (their pipelines start new ones when they run again)."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.close()


atexit.register(close_pools)


__all__ = [
    "CLOSE_GRACE", "ProcessPool", "close_pools", "drop_pool", "exit_with", "pool_for", "prepass_threads", "worker_context",
    "worker_cpu_seconds",
]
