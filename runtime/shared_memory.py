"""Shared-memory blocks for worker processes: files in a tmpfs (`/dev/shm`), reserved when made.

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

import errno
import itertools
import mmap
import os
import secrets
import sys

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


__all__ = ["Block", "SHM_DIR_VARIABLE", "SharedMemoryShortage", "available", "check_usable", "shm_dir", "shortage"]
