"""Worker processes as executors of the frames-in-flight loop: past the GIL, on one machine.

    for encoded, score in compiled.run_video(frames, workers=16, engine="processes"):

The generated code of a frame is Python between NumPy and OpenCV calls, so threads stop scaling where
the interpreter's share of a frame saturates one GIL. Here each worker is a process with its own
interpreter: it is sent the compiled `Program` (plain data) once, when the pool starts, and loads its frame
split (`chunk_worker.FrameWorker`, the same worker a Ray actor is); it never compiles. Frames go to the
workers in chunks through shared memory — a block per chunk in flight, written once by the caller and
mapped by the workers, never pickled; the blocks are reused by the next chunks and runs (`BlockCache`,
the workers keep their mappings: `_Maps`) — and only the small values between the parts (the score map,
the gate's scalars, the encoded bytes) come back through the pool's pipes. The loop is the one every
engine runs (`cortex.runtime.frames`), with the Ray engine's protocol: a chunk's `front` (delayed and
parallel parts) on a worker, the recurrence on the caller in frame order, the chunk's `tail` (the encoder)
on a worker. When the entry has leading recurrences (the blur gate's sharpness history) each chunk's
starting values are chained over the chunks before it (`FrameWorker.chain`) on a thread of the caller, chunk
after chunk as they are read. Only the delayed stages those values read run there, and of those the ones that
read no recurrence (the gray frame and its sharpness, 1.8 ms a 480x640 frame) run first as the chunk's
prepass, chunks side by side on the caller's prepass threads (one per 4 workers: OpenCV and NumPy release the
GIL), so the chain thread itself runs only the history's push. The chain hands its small results (the
sharpness, the history) to the chunk's front, which does not compute them again; the prepass writes the chunk's
block — its frames, then each frame's gray frame as soon as it is computed (a copy, where the front would spend
0.7 ms a 480x640 frame computing it again) — and the front takes the gray frame from there. A front
computes the delayed inputs it starts from (the gray frame, temporal reuse's derived states) out of the frame
before its chunk, first in its block, where the caller used to send them (11 MB a chunk at 480x640, 84 at
1088x1920); the caller computes them once, for the last frame delivered, when the run ends
(`ProcessFrames.up_to_date`), and `pipeline.state` is set then. The caller's own thread hands a chunk's front
on as soon as its chain is done (`ProcessFrames`), writing its block first where no prepass did. All told the
caller's CPU is 3.1-3.5 ms a 480x640 frame on 2 cores, all its threads together, 0.26 of it on its own thread
(4.2-4.6 before the prepass and the fronts' delayed inputs; `benchmarks/scaling.py` prints it): what the caller
adds to every frame where cores are many.

The pool is kept with the pipeline and reused by its next `run_video` with the same worker count (the
start-up — a process, its imports, loading the program — is paid once); `close_pools()` ends them (also at
exit). Outputs and state equal `[compiled(f) for f in frames]` bit for bit, as with every engine.
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
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cortex.errors import CortexError, whole_number
from cortex.runtime.chunk_worker import FrameWorker, chunks_of, settle_chunk
from cortex.runtime.frames import frames_in_flight
from cortex.runtime.memory_policy import keep_freed_memory
from cortex.runtime.parts import LoadedSplit
from cortex.runtime.program import Program
from cortex.runtime.shared_memory import Block, SharedMemoryShortage, available, check_usable, shortage
from cortex.runtime.threads import MAX_WORKERS, machine_cores

PROCESS_OPTIONS = ("chunk",)
CHUNK = 8
"""Frames a worker gets at once by default: fewer chunks, fewer hand-offs (each sends the values that start the
next chunk); 4 ran at 15 frames/s, 12 at 24 on 2 cores at 480x640 (benchmarks/scaling.py)."""
MAX_CHUNK = 4096


def check_process_options(options: dict[str, Any]) -> None:
    """A CortexError for an option `run_video(engine="processes")` does not take (before any process starts)."""
    unknown = sorted(set(options) - set(PROCESS_OPTIONS))
    if unknown:
        raise CortexError(f"engine 'processes' takes the option chunk; got {', '.join(map(str, unknown))}")
    whole_number("chunk", options.get("chunk", CHUNK), 1, MAX_CHUNK)


# ---------------------------------------------------------------- frames in shared memory


Layout = tuple[tuple[int, ...], str, int] | None
"""Where an array lies in a block (shape, dtype, offset); None: the value travels by value (pickled)."""


Named = tuple[tuple[str, Layout, Any], ...]
"""Named values in a block: (name, layout, value) each."""


@dataclass(frozen=True)
class BlockSpec:
    """Where a chunk's frames lie in a shared-memory block: its name and each frame's layout. A frame that is
    not a NumPy array travels by value (`values`). `delayed`, when given, is the delayed values the chunk
    starts from; `givens`, when given, what each frame's leading stages computed (the chain's); both in the
    block after the frames."""

    name: str | None
    frames: tuple[Layout, ...]
    values: tuple[Any, ...]
    delayed: Named | None = None
    givens: tuple[Named, ...] | None = None
    path: str | None = None  # where a worker opens the block (`Block.attach`)


KEEP_BYTES = 512 << 20
"""The most bytes of free blocks an idle pool keeps between runs (beyond one block): every one (at most 6) of a
2-worker pool at 480x640 (17 MB each: 8 frames, the frame before, their gray frames; the first chunk's 27 with
the values the run starts from), 3 at 1088x1920 (118 MB; the first 183), so a pool's next run starts with the blocks its
last one used (at 256 MB a 2-worker run of 32 frames at 1088x1920 wrote 3 fresh blocks: 2,800 page faults a
frame, 16 ms of the caller's system time) and an idle pool still holds a bounded amount. During a run the
count alone bounds them (`BlockCache.running`)."""


class BlockCache:
    """Shared-memory blocks kept for reuse: a new block costs its pages' first touch (allocated and zeroed by
    the kernel: 12.5 ms of the caller's CPU for a 9-frame chunk at 480x640, measured) where a block written
    before costs the copy alone (1.7 ms). Kept with the pool, at most `keep` free, the smallest unlinked
    first; between runs also at most `keep_bytes` (or one block), so an idle pool holds little, while a run
    keeps every block it frees for its next chunks — at 1088x1920 a chunk's block is 190 MB, and capping it
    by bytes during the run made two chunks in three write a fresh one (40 ms of the caller's system time a
    frame, measured). Every block is unlinked when the pool closes."""

    def __init__(self, keep: int, keep_bytes: int = KEEP_BYTES):
        self.keep, self.keep_bytes = keep, keep_bytes
        self.free: list[Block] = []
        self.lock = threading.Lock()
        self.closed = False
        self.running = 0  # runs in progress (`run`)
        self.in_flight: int | None = None  # blocks a run holds at once, until its first block is checked (`take`)

    @contextlib.contextmanager
    def run(self, in_flight: int = 1) -> Iterator[None]:
        """While a run is in progress: free blocks bounded by count alone; after it, by bytes too. The run's
        first block checks that `in_flight` blocks of its size fit the shared memory left (`take`)."""
        with self.lock:
            self.running += 1
            self.in_flight = in_flight
        try:
            yield
        finally:
            with self.lock:
                self.running -= 1
                gone = self._over()
            for block in gone:
                _unlink(block)

    def take(self, size: int) -> Block:
        """The smallest free block of at least `size` bytes, or a new one (its pages reserved: a
        `SharedMemoryShortage` where they do not fit). A run's first block also checks that the run's blocks in
        flight fit: the free ones that are large enough, and new ones of the same size for the rest — so a
        shared memory too small for the run is an error before any frame, not part-way."""
        with self.lock:
            fits = [b for b in self.free if b.size >= size]
            if self.in_flight is not None:
                in_flight, self.in_flight = self.in_flight, None
                if (in_flight - len(fits)) * size > available():
                    raise shortage(in_flight * size)
            if fits:
                block = min(fits, key=lambda b: b.size)
                self.free.remove(block)
                return block
        return Block.create(size)

    def give(self, block: Block) -> None:
        gone = [block]
        with self.lock:
            if not self.closed:
                self.free.append(block)
                gone = self._over()
        for block in gone:
            _unlink(block)

    def _over(self) -> list[Block]:
        """The free blocks past the bounds, taken out (the smallest first); called with the lock held."""
        gone = []
        while len(self.free) > self.keep or (not self.running and len(self.free) > 1
                                             and sum(b.size for b in self.free) > self.keep_bytes):
            smallest = min(self.free, key=lambda b: b.size)
            self.free.remove(smallest)
            gone.append(smallest)
        return gone

    def close(self) -> None:
        with self.lock:
            self.closed = True
            blocks, self.free = self.free, []
        for block in blocks:
            _unlink(block)


def _unlink(block: Block) -> None:
    block.close()
    block.unlink()


class FrameBlock:
    """The caller's side of one chunk's frames (and, when given, the delayed values it starts from and what each
    frame's leading stages computed): written into a block of `cache` once, an array that appears under
    several names once, given back when the chunk is done. `slots=(n, like)` also reserves room for n frames'
    images laid out as `like` (one frame's), which `put` fills as a prepass computes them, frame by frame."""

    def __init__(self, frames: list[Any], cache: BlockCache, delayed: dict[str, Any] | None = None,
                 givens: list[dict[str, Any]] | None = None, slots: tuple[int, dict[str, Any]] | None = None):
        groups = [delayed, *(givens or [])]
        items = [*frames, *(v for group in groups if group is not None for v in group.values())]
        offsets: dict[int, int] = {}  # id of an array placed -> its offset
        size = 0

        def reserve(nbytes: int) -> int:
            nonlocal size
            at = -(-size // 64) * 64  # each array 64-byte aligned
            size = at + nbytes
            return at

        for v in items:
            if _shared(v) and id(v) not in offsets:
                offsets[id(v)] = reserve(v.nbytes)
        count, like = slots or (0, {})
        images = list({id(v): v for v in like.values() if _shared(v)}.values())  # one under several names: one slot
        self.slots: list[list[Layout]] = [[(tuple(v.shape), v.dtype.str, reserve(v.nbytes)) for v in images]
                                          for _ in range(count)]
        self._slot_of = {name: i for name, v in like.items() for i, image in enumerate(images) if image is v}
        self.slotted: list[Named] = [() for _ in range(count)]
        self.cache = cache
        self.shm = cache.take(size) if size else None
        written: set[int] = set()

        def place(v: Any) -> tuple[Layout, Any]:
            if self.shm is None or id(v) not in offsets:
                return None, v
            at = offsets[id(v)]
            if id(v) not in written:
                np.ndarray(v.shape, v.dtype, buffer=self.shm.buf, offset=at)[...] = v
                written.add(id(v))
            return (tuple(v.shape), v.dtype.str, at), None

        def named(group: dict[str, Any]) -> Named:
            return tuple((name, *place(v)) for name, v in group.items())

        placed = [place(f) for f in frames]
        self.spec = BlockSpec(self.shm.name if self.shm is not None else None, tuple(at for at, _ in placed),
                              tuple(v for _, v in placed), named(delayed) if delayed is not None else None,
                              tuple(named(g) for g in givens) if givens is not None else None,
                              self.shm.path if self.shm is not None else None)

    def put(self, k: int, images: dict[str, Any]) -> None:
        """Frame k's images into its slot, now (the prepass's buffers are reused by its next frame); one that
        does not fit its slot travels by value, copied."""
        placed: list[tuple[str, Layout, Any]] = []
        done: dict[int, Layout] = {}  # id of an image written -> where
        for name, v in images.items():
            at = done.get(id(v))
            i = self._slot_of.get(name)
            if at is None and i is not None and self.shm is not None and _shared(v):
                slot = self.slots[k][i]
                if slot not in done.values() and slot is not None and (tuple(v.shape), v.dtype.str) == slot[:2]:
                    np.ndarray(slot[0], np.dtype(slot[1]), buffer=self.shm.buf, offset=slot[2])[...] = v
                    at = done[id(v)] = slot
            placed.append((name, at, None) if at is not None else (name, None, np.array(v, copy=True)))
        self.slotted[k] = tuple(placed)

    def spec_with(self, delayed: dict[str, Any] | None, givens: list[dict[str, Any]] | None) -> BlockSpec:
        """The spec of a block a prepass wrote, with what the chain computed since, by value (the leading
        recurrences' values the chunk starts from, in place of the delayed values in the block; what the chain
        hands on of each frame, small), beside each frame's images in the block."""
        spec = self.spec
        if delayed is not None:
            spec = replace(spec, delayed=tuple((name, None, v) for name, v in delayed.items()))
        if givens is not None or any(self.slotted):
            small = givens if givens is not None else [{} for _ in self.slotted]
            spec = replace(spec, givens=tuple((*self.slotted[k], *((name, None, v) for name, v in g.items()))
                                              for k, g in enumerate(small)))
        return spec

    def free(self) -> None:
        if self.shm is not None:
            self.cache.give(self.shm)
            self.shm = None


def _shared(value: Any) -> bool:
    """Whether `value` travels in the block (a NumPy array of plain data), not by value."""
    return isinstance(value, np.ndarray) and value.dtype != object and value.nbytes > 0


class _Maps:
    """A worker's mappings of the caller's blocks, kept from task to task: the caller reuses its blocks, and a
    block mapped anew costs a page fault for each page a task reads (1.6 ms for 9 frames at 480x640,
    measured; the delayed values double that). At most `keep` mappings of `keep_bytes` in all, the least
    recently used closed first; a block the caller has unlinked stays in memory while a worker maps it, so
    the pool's workers together keep at most `KEEP_BYTES` (a block larger than a worker's share is mapped for
    its task only)."""

    def __init__(self, keep: int, keep_bytes: int):
        self.keep, self.keep_bytes = keep, keep_bytes
        self.open: OrderedDict[str, Block] = OrderedDict()

    def get(self, name: str, path: str) -> tuple[Block, bool]:
        """The block's mapping (opened at `path` when not kept), and whether it is kept (else the task closes it)."""
        block = self.open.pop(name, None)
        if block is None:
            block = Block.attach(name, path)
            if block.size > self.keep_bytes:
                return block, False
        self.open[name] = block
        while len(self.open) > self.keep or sum(b.size for b in self.open.values()) > self.keep_bytes:
            _, old = self.open.popitem(last=False)
            with contextlib.suppress(BufferError):  # a view still held: the mapping goes with it
                old.close()
        return block, True


class _Mapped:
    """A worker's view of a block while one task runs (the views are dropped when it ends; the mapping stays
    when `maps` keeps it, closed otherwise)."""

    def __init__(self, spec: BlockSpec, maps: _Maps | None = None):
        self.shm, self.kept = None, False
        if spec.name is not None:
            assert spec.path is not None
            self.shm, self.kept = maps.get(spec.name, spec.path) if maps is not None else (Block.attach(spec.name, spec.path), False)
        self.frames: list[Any] = [self._value(at, v) for at, v in zip(spec.frames, spec.values)]
        self.delayed: dict[str, Any] | None = (
            {name: self._value(at, v) for name, at, v in spec.delayed} if spec.delayed is not None else None)
        self.givens: list[dict[str, Any]] | None = (
            [{name: self._value(at, v) for name, at, v in given} for given in spec.givens]
            if spec.givens is not None else None)
        self.span = (0, 0)
        if self.shm is not None and self.shm.buf is not None:
            whole = np.frombuffer(self.shm.buf, np.uint8)
            self.span = (whole.ctypes.data, whole.ctypes.data + whole.nbytes)
            del whole

    def detached(self, value: Any) -> Any:
        """`value` (a task's result) with any array that lies in the block copied: a part may hand an input
        on unchanged (a state it does not change), and the block is closed, then reused, after the task."""
        if isinstance(value, list):
            return [self.detached(v) for v in value]
        if isinstance(value, dict):
            return {k: self.detached(v) for k, v in value.items()}
        if isinstance(value, np.ndarray) and value.nbytes:
            at = value.__array_interface__["data"][0]
            if self.span[0] <= at < self.span[1]:
                return value.copy()
        return value

    def _value(self, at: Layout, value: Any) -> Any:
        if at is None or self.shm is None:
            return value
        return np.ndarray(at[0], np.dtype(at[1]), buffer=self.shm.buf, offset=at[2])

    def close(self) -> None:
        self.frames.clear()
        self.delayed = self.givens = None
        if self.shm is not None and not self.kept:
            self.shm.close()


# ---------------------------------------------------------------- the worker process

_WORKER: FrameWorker | None = None


_MAPS: _Maps | None = None


def _start_worker(program: Program, threads: int, workers: int, caller: int) -> None:
    global _WORKER, _MAPS
    exit_with(caller)
    keep_freed_memory()  # the worker's own process: a frame's freed memory kept for the next
    _WORKER = FrameWorker(program, threads)
    _MAPS = _Maps(4 * workers + 4, KEEP_BYTES // workers)


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


def _task(method: str, spec: BlockSpec, *args: Any) -> Any:
    """Run `FrameWorker.<method>` over the chunk in `spec`; results are pickled copies (no view escapes)."""
    assert _WORKER is not None
    mapped = _Mapped(spec, _MAPS)
    try:
        frames = mapped.frames
        if method == "front":  # the block holds the frame before the chunk first, when there is one
            first, before_given, fixed = args  # the values the chunk starts from: in the block
            before = frames[0] if before_given else None
            chunk = frames[1:] if before_given else frames
            return mapped.detached(_WORKER.front(chunk, first, before, mapped.delayed, fixed, False, mapped.givens))
        first, before_given, values = args
        return mapped.detached(_WORKER.tail(frames[1:] if before_given else frames, first, values))
    finally:
        del frames
        mapped.close()


# ---------------------------------------------------------------- the pools, kept with their pipeline


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
    calls, which release the GIL): one per 4 workers. The chain's frame-local stages cost 1.8 ms a 480x640
    frame, and a prepass also writes its chunk's block; on one thread the chain would start 16 workers' first
    chunks 15 ms apart, and bound the engine near 500 frames/s."""
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


def pool_for(pipeline: Any, program: Program, workers: int, chain: bool) -> ProcessPool:
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


def worker_cpu_seconds(pipeline: Any) -> float:
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


def drop_pool(pipeline: Any) -> None:
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


# ---------------------------------------------------------------- the executor


@dataclass
class _Chunk:
    """A chunk in flight: its frames, the chain's future (with leading recurrences), then its block and front
    (launched when the chain is done), then the state after it and its tail."""

    at: int
    frames: list[Any]
    before: Any = None  # the frame before the chunk (None for the run's first chunk)
    prepass: Future | None = None
    chain: Future | None = None
    block: FrameBlock | None = None  # written by the chunk's prepass, or by the caller when it launches the chunk
    after: dict[str, Any] | None = None  # the leading recurrences' values after the chunk (the chain's)
    front: Future | None = None
    state_after: dict[str, Any] | None = None
    tail: Future | None = None

    @property
    def before_given(self) -> bool:
        """Whether the block holds the frame before the chunk, first (every chunk but the run's first)."""
        return self.before is not None

    def running(self) -> Future | None:
        """The future the chunk waits on now (None: not launched yet)."""
        return self.tail or self.front


class ProcessFrames:
    """The executor of `frames_in_flight` on worker processes: one item is a chunk of frames.

    With leading recurrences a chunk's chain runs on the pool's chain thread, chunk after chunk, as chunks are
    read, after the chunk's prepass on the prepass threads; the caller launches a chunk (writes its block, hands
    its front to a worker) as soon as its chain is done, whenever it would otherwise wait (`_launch_ready`).
    The prepass threads, the chain thread and the caller's thread thus share the caller's work: the frame-local
    stages, the history's push, the blocks."""

    def __init__(self, pipeline: Any, split: LoadedSplit, pool: ProcessPool):
        self.pipeline, self.split, self.pool = pipeline, split, pool
        self.state = split.internal_state(pipeline.state)
        self.fixed = {n: self.state[n] for n in split.read_only}
        self.start_values: dict[str, Any] = {n: self.state.get(n) for n in split.ahead}  # the run's first chunk's
        self.leading: dict[str, Any] = {n: self.state.get(n) for n in split.leading}  # the chain's next start
        self.chain_failed = False
        self.first, self.before = 0, None
        self.waiting: list[_Chunk] = []  # started, not launched, in order
        self.last: tuple[dict[str, Any], tuple[Any, ...], Any, int] | None = None  # `up_to_date`'s

    def start(self, frames_chunk: list) -> _Chunk:
        chunk = _Chunk(self.first, frames_chunk, self.before)
        self.first += len(frames_chunk)
        self.before = frames_chunk[-1]
        if self.split.leading:
            assert self.pool.chain_thread is not None and self.pool.prepass is not None
            chunk.prepass = self.pool.prepass.submit(self._prepass, chunk)
            chunk.chain = self.pool.chain_thread.submit(self._chain, frames_chunk, chunk.at, chunk.prepass)
            self.waiting.append(chunk)
            self._launch_ready()
        else:  # each chunk after the first starts from the frame before it: chunks never wait for each other
            self._launch(chunk, {}, None)
        return chunk

    def _prepass(self, chunk: _Chunk) -> list[dict[str, Any]]:
        """On a prepass thread: the chunk's prepass, which writes the chunk's block as it goes — the frames (and
        the values the run's first chunk starts from) when its first frame is done, then each frame's images
        (the gray frame), which the front takes rather than computing them again (0.7 ms a 480x640 frame)."""
        frames = [chunk.before, *chunk.frames] if chunk.before_given else chunk.frames
        start = None if chunk.before_given else self.start_values

        def hand(k: int, images: dict[str, Any]) -> None:
            if chunk.block is None:
                chunk.block = FrameBlock(frames, self.pool.blocks, start, slots=(len(chunk.frames), images))
            chunk.block.put(k, images)

        computed = self.pool.local.prepass(chunk.frames, chunk.at, self.fixed, hand)
        assert chunk.block is not None  # `hand` runs for every frame, and a chunk has frames
        return computed

    def _chain(self, frames_chunk: list, at: int, prepass: Future) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        """On the chain thread, once the chunk's prepass is done: the leading values the chunk starts from, what
        the chain hands on of each frame's leading stages, and the leading values after the chunk (the next
        chunk's start)."""
        if self.chain_failed:  # never raised: the failed chunk before settles (and raises) first
            raise CortexError("a chunk before this one failed")
        start = self.leading
        try:
            givens, after = self.pool.local.chain(frames_chunk, at, start, self.fixed, prepass.result())
        except BaseException:
            self.chain_failed = True
            raise
        self.leading = after
        return start, givens, after

    def _launch_ready(self) -> None:
        """Launch, in order, every waiting chunk whose chain is done."""
        while self.waiting and self.waiting[0].chain is not None and self.waiting[0].chain.done():
            chunk = self.waiting.pop(0)
            assert chunk.chain is not None
            try:
                start, givens, chunk.after = chunk.chain.result()
            except Exception as e:  # raised in frame order, when this chunk settles
                chunk.front = Future()
                chunk.front.set_exception(e)
                continue
            self._launch(chunk, start, givens)

    def _launch(self, chunk: _Chunk, leading: dict[str, Any], givens: list[dict[str, Any]] | None) -> None:
        """The chunk's front on a worker, with its block (the caller writes it now where no prepass did). The
        run's first chunk starts from the run's values; any other from `leading` (the leading recurrences') and
        the frame before it, first in the block, from which the front computes the delayed inputs — rather than
        the caller sending them (all of temporal reuse's derived states: 11 MB a chunk at 480x640, 84 MB at
        1088x1920)."""
        if chunk.block is None:
            start = leading if chunk.before_given else self.start_values
            frames = [chunk.before, *chunk.frames] if chunk.before_given else chunk.frames
            chunk.block = FrameBlock(frames, self.pool.blocks, start, givens)
            spec = chunk.block.spec
        else:
            spec = chunk.block.spec_with(leading if chunk.before_given else None, givens)
        chunk.front = self._submit(self.pool.fronts, "front", spec, chunk.at, chunk.before_given, self.fixed)

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
        tail_args = settle_chunk(split, state, values, chunk.at)
        assert chunk.block is not None
        chunk.tail = self._submit(self.pool.fronts, "tail", chunk.block.spec, chunk.at, chunk.before_given, tail_args)
        chunk.state_after = dict(state)
        return chunk

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
        assert chunk.tail is not None and chunk.block is not None and chunk.state_after is not None
        try:
            outputs = [self.split.caller_outputs(out) for out in self._result(chunk.tail, chunk.at, len(chunk.frames))]
        finally:
            chunk.block.free()
        for k, (frame, result) in enumerate(zip(chunk.frames, outputs)):
            if k == len(outputs) - 1:
                self.last = (chunk.state_after, result, frame, chunk.at + k)
            yield result

    def up_to_date(self) -> None:
        """`pipeline.state` after the last chunk delivered, set when the run ends (whatever ends it). The caller
        holds each chunk's recurrences and leading values after it; only the fronts compute the delayed inputs
        (the gray frame, temporal reuse's derived states), so the caller computes them here, once, for that
        chunk's last frame (5 ms at 480x640)."""
        if self.last is None:
            return
        state, result, frame, index = self.last
        self.last = None
        inputs = self.pool.local.delayed_inputs(frame, index, {n: state[n] for n in self.split.leading}, self.fixed)
        self.pipeline.state = self.split.caller_state({**state, **inputs}, result, (frame,))

    def close(self, chunks: list[_Chunk]) -> None:
        self.chain_failed = True  # a chain still queued stops at once
        for chunk in chunks:
            for future in (chunk.prepass, chunk.chain, chunk.running()):
                if future is not None:
                    future.cancel()
        running = [f for c in chunks for f in (c.prepass, c.chain, c.running()) if f is not None]
        if wait(running, timeout=CLOSE_GRACE).not_done:  # a task that hangs: its pool goes (its blocks with it)
            drop_pool(self.pipeline)
        self.waiting.clear()
        for chunk in chunks:
            if chunk.block is not None:
                chunk.block.free()

    def _submit(self, pool: ProcessPoolExecutor, method: str, *args: Any) -> Future:
        try:
            return pool.submit(_task, method, *args)
        except BrokenProcessPool:
            drop_pool(self.pipeline)
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
            drop_pool(self.pipeline)
            raise CortexError("a worker process died (the pool is restarted on the next run)") from None


def run_processes(pipeline: Any, program: Program, split: LoadedSplit, frames: Iterable[Any], workers: int,
                  window: int, chunk: int = CHUNK) -> Iterator[tuple[Any, ...]]:
    """`compiled.run_video(..., engine="processes")`: see the module docstring."""
    whole_number("workers", workers, 1, MAX_WORKERS)
    pool = pool_for(pipeline, program, workers, chain=bool(split.leading))
    executor = ProcessFrames(pipeline, split, pool)
    with pool.blocks.run(window):
        try:
            yield from frames_in_flight(chunks_of(frames, chunk), window, executor)
        finally:
            executor.up_to_date()


__all__ = ["PROCESS_OPTIONS", "check_process_options", "close_pools", "run_processes", "worker_cpu_seconds"]
