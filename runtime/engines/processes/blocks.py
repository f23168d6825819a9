"""The processes engine's shared memory: blocks (files in a tmpfs, reserved when made), the blocks a pool keeps
for reuse (`BlockCache`), a chunk's frames laid out in one (`FrameBlock`, `BlockSpec`), and a worker's
mappings of them (`Maps`, `Mapped`).

`multiprocessing.shared_memory.SharedMemory(create=True)` only sets a block's size: a tmpfs smaller than the
block (a container's 64 MB `/dev/shm`) faults on the first write past its space, and the caller dies of
SIGBUS. A `Block` reserves its pages when it is made (`posix_fallocate`), so a tmpfs too small is a
`SharedMemoryShortage` (a CortexError naming the need) before anything is written.

On Linux a block's file is unlinked as soon as it is open: the block has no name in the directory, and its
memory goes back to the system when the last process holding it (the caller, a worker's mapping) ends,
however it ends (SIGKILL included). A worker maps it through the caller's descriptor
(`/proc/<caller>/fd/<n>`). Elsewhere the file keeps its name until the caller unlinks it.

The directory is `CORTEX_SHM_DIR`, else `/dev/shm`.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import mmap
import os
import secrets
import sys
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from cortex.errors import CortexError

SHM_DIR_VARIABLE = "CORTEX_SHM_DIR"
DEFAULT_SHM_DIR = "/dev/shm"
PREFIX = "cortex-"
"""The start of a block's file name (`cortex-<pid>-<n>-<random>`)."""

UNNAMED = sys.platform.startswith("linux") and os.path.isdir("/proc/self/fd")
"""Whether a block is unlinked as soon as it is open (a worker opens it through the caller's descriptor)."""

_COUNT = itertools.count()


def shm_dir() -> str:
    """The directory the blocks are made in: `CORTEX_SHM_DIR`, else `/dev/shm`."""
    return os.environ.get(SHM_DIR_VARIABLE) or DEFAULT_SHM_DIR


class SharedMemoryShortage(CortexError):
    """The shared-memory directory has less room than a run needs."""


def _mb(nbytes: int) -> str:
    return f"{-(-nbytes // (1 << 20))} MB"


def shortage(need: int, directory: str | None = None) -> SharedMemoryShortage:
    """The one-line error for a run that needs `need` bytes of shared memory in `directory`."""
    directory = directory or shm_dir()
    try:
        st = os.statvfs(directory)
        size = f" ({_mb(st.f_blocks * st.f_frsize)})"
    except OSError:  # pragma: no cover - the directory went away meanwhile
        size = ""
    return SharedMemoryShortage(f"not enough shared memory in {directory}{size}: need {_mb(need)}; use fewer workers, "
                                "--engine threads, or a larger --shm-size")


def unusable(directory: str, error: OSError) -> CortexError:
    """The one-line error for a shared-memory directory the engine cannot use (missing, read-only)."""
    why = error.strerror or str(error)
    return CortexError(f"shared memory is unusable ({directory}: {why}): the processes engine needs a writable "
                       f"tmpfs there (or {SHM_DIR_VARIABLE}); use --engine threads")


def available(directory: str | None = None) -> int:
    """Bytes free in the shared-memory directory now."""
    directory = directory or shm_dir()
    try:
        st = os.statvfs(directory)
    except OSError as e:
        raise unusable(directory, e) from None
    return st.f_bavail * st.f_frsize


class Block:
    """A block of shared memory: `buf` (a memoryview of its mapping), `size`, `name` (unique: the key a worker
    keeps its mapping under) and `path` (where a worker opens it). `create` makes one (the caller's), `attach`
    maps one a worker is handed; `close` drops this process's mapping, `unlink` (the caller's) its descriptor
    and name."""

    def __init__(self, name: str, path: str, size: int, mapping: mmap.mmap, fd: int | None, named: str | None):
        self.name, self.path, self.size = name, path, size
        self._mmap: mmap.mmap | None = mapping
        self.buf: memoryview | None = memoryview(mapping)
        self._fd, self._named = fd, named

    @classmethod
    def create(cls, size: int) -> Block:
        """A new block of `size` bytes, its pages reserved: a `SharedMemoryShortage` where they do not fit, a
        CortexError where the directory cannot hold blocks at all."""
        directory = shm_dir()
        name = f"{PREFIX}{os.getpid()}-{next(_COUNT)}-{secrets.token_hex(4)}"
        path = os.path.join(directory, name)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as e:
            raise unusable(directory, e) from None
        named: str | None = path
        try:
            if UNNAMED:
                os.unlink(path)
                named = None
            _reserve(fd, size)
            mapping = mmap.mmap(fd, size)
        except OSError as e:
            os.close(fd)
            if named is not None:
                os.unlink(named)
            if e.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
                raise shortage(size, directory) from None
            raise unusable(directory, e) from None
        where = f"/proc/{os.getpid()}/fd/{fd}" if UNNAMED else path
        return cls(name, where, size, mapping, fd, named)

    @classmethod
    def attach(cls, name: str, path: str) -> Block:
        """A worker's mapping of the caller's block `name`, opened at `path`."""
        fd = os.open(path, os.O_RDWR)
        try:
            size = os.fstat(fd).st_size
            mapping = mmap.mmap(fd, size)
        finally:
            os.close(fd)
        return cls(name, path, size, mapping, None, None)

    def close(self) -> None:
        """Drop this process's mapping (a BufferError while a view of `buf` is held: the mapping stays)."""
        if self.buf is not None:
            self.buf.release()
            self.buf = None
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None

    def unlink(self) -> None:
        """The caller's: give the block's memory back once no worker maps it (its descriptor and any name go)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._named is not None:
            try:
                os.unlink(self._named)
            except FileNotFoundError:  # pragma: no cover - removed by hand
                pass
            self._named = None


def _reserve(fd: int, size: int) -> None:
    """The file's pages, allocated now (an ENOSPC OSError where the filesystem has not the room)."""
    if hasattr(os, "posix_fallocate"):
        os.posix_fallocate(fd, 0, size)
    else:  # pragma: no cover - not Linux: sized only
        os.ftruncate(fd, size)


def check_usable() -> None:
    """A CortexError now unless a block can be made in the shared-memory directory (read-only, missing)."""
    block = Block.create(mmap.PAGESIZE)
    block.close()
    block.unlink()


# ---------------------------------------------------------------- a chunk's frames in a block


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
"""The most bytes of free blocks an idle pool keeps between runs (beyond one block): every block of a 2-worker
pool at 480x640, 3 at 1088x1920 (a block holds a chunk's frames, the frame before, their gray frames), so a
pool's next run starts with the blocks its last one used, and an idle pool still holds a bounded amount
(benchmarks/README.md, Engines, has the sizes and what a smaller bound cost). During a run the count alone
bounds them (`BlockCache.running`)."""


class BlockCache:
    """Shared-memory blocks kept for reuse: a new block costs its pages' first touch (allocated and zeroed by
    the kernel) where a block written before costs the copy alone. Kept with the pool, at most `keep` free,
    the smallest unlinked first; between runs also at most `keep_bytes` (or one block), so an idle pool holds
    little, while a run keeps every block it frees for its next chunks (capping large blocks by bytes during
    a run made most chunks write a fresh one: benchmarks/README.md, Engines). Every block is given back when
    the pool closes."""

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


class Maps:
    """A worker's mappings of the caller's blocks, kept from task to task: the caller reuses its blocks, and a
    block mapped anew costs a page fault for each page a task reads. At most `keep` mappings of `keep_bytes` in all, the least
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


class Mapped:
    """A worker's view of a block while one task runs (the views are dropped when it ends; the mapping stays
    when `maps` keeps it, closed otherwise)."""

    def __init__(self, spec: BlockSpec, maps: Maps | None = None):
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


__all__ = [
    "Block", "BlockCache", "BlockSpec", "FrameBlock", "Mapped", "Maps", "KEEP_BYTES", "SHM_DIR_VARIABLE", "SharedMemoryShortage",
    "available", "check_usable", "shm_dir", "shortage",
]
