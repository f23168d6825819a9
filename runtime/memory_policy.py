"""cortex-run and the processes engine's workers keep the memory one frame frees for the next frame (glibc's
malloc, set as the tool or the worker process starts).

A frame allocates and frees its large arrays. By default glibc hands freed
memory back to the OS — it trims the heap's top above twice the largest
block freed so far, and a worker thread's arena unmaps a heap as soon as it
empties — and the next frame takes it back page by page, each page
zero-filled on its first touch.
`keep_freed_memory` sets what the `MALLOC_*` environment variables would:
one arena for every thread, blocks up to 32 MiB from the heap, no trimming,
the heap grown 256 MiB at a time.

The gain and the cost (the process keeps its peak heap until it ends) are
measured in benchmarks/README.md (Engines). Only the tool and the worker processes
(`cortex.runtime.engines.processes`) do this — each owns its process; the
library never retunes its host's allocator (docs/running.md gives the environment variables for a program
of one's own).
"""

from __future__ import annotations

import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD, M_ARENA_MAX = -1, -2, -3, -8
"""mallopt's parameters (glibc's malloc.h)."""

KEPT = {M_ARENA_MAX: 1, M_MMAP_THRESHOLD: 32 << 20, M_TRIM_THRESHOLD: (1 << 31) - 1, M_TOP_PAD: 256 << 20}
"""The policy: one arena, blocks under 32 MiB (glibc's largest mmap threshold) from the heap, never trim, grow by 256 MiB."""

VARIABLES = {M_ARENA_MAX: "MALLOC_ARENA_MAX", M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_",
             M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_", M_TOP_PAD: "MALLOC_TOP_PAD_"}
"""glibc's environment variable for each parameter."""

ENVIRONMENT = " ".join(f"{VARIABLES[param]}={value}" for param, value in KEPT.items())
"""The same policy for a process of one's own, set before it starts (docs/running.md quotes it)."""


def keep_freed_memory() -> str:
    """Apply the policy to this process; what was done, or why not, in words (for the run summary)."""
    libc_name = ctypes.util.find_library("c")
    try:
        mallopt = ctypes.CDLL(libc_name).mallopt if libc_name else None
    except (OSError, AttributeError):
        mallopt = None
    if mallopt is None:
        return "memory: the C library's own policy (no glibc mallopt here)"
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    refused = [VARIABLES[param] for param, value in KEPT.items() if mallopt(param, value) != 1]
    if refused:
        return f"memory: glibc refused {', '.join(refused)}: freed memory may go back to the OS after each frame"
    return "memory: freed memory kept for the next frame (glibc: 1 arena, no trim; --return-memory to give it back)"


__all__ = ["ENVIRONMENT", "KEPT", "VARIABLES", "keep_freed_memory"]
