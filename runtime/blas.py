"""BLAS threads around a plain call of generated code.

The BLAS calls of generated code are small (gray's 3-term product,
saliency's matmuls): on a loaded machine OpenBLAS's worker threads spin and
cost far more than they save (compiled saliency ran 25 times slower a 1080p
frame). `LoadedProgram.blas_threads` (default
`BLAS_THREADS`) holds them around each plain call; the parallel engines
limit BLAS the same way (`cortex.runtime.threads.thread_budget`).

The hold must be cheap: a small ONNX CNN's whole call is a few tens of
microseconds, and threadpoolctl's `limit` context (it re-reads and re-sets
every library through its generic machinery) cost about as much again.
`BlasHold` reads each library's thread count (OpenBLAS: its C function) and
sets and restores it only where it differs, so a process already running
BLAS on that many threads pays a read per call, and one that does not a set
and a restore (the figures: benchmarks/README.md, "Figures behind the runtime's choices"). A
program whose code reaches no BLAS at all is not held: its backend recorded
that when it compiled the code (`BackendTraits.calls_blas`; the NumPy
emitter decides it on its own syntax trees).
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

BLAS_THREADS = 1
"""BLAS threads during a plain `compiled(frame)` call (`LoadedProgram.blas_threads`)."""


class Library:
    """One loaded BLAS library: read and set its thread count.

    OpenBLAS with its own threads (not OpenMP) is called straight through its
    C functions (threadpoolctl's wrappers and its per-thread ownership count
    cost several times as much). Its limit is
    process-wide, and threadpoolctl lets one thread at a time own it: while a
    `threadpool_limits` of another live thread owns it, a hold leaves it alone,
    as threadpoolctl would. Any other library goes through its controller.
    """

    __slots__ = ("get", "set", "_shared")

    def __init__(self, controller: Any):
        get = set_ = None
        if controller.internal_api == "openblas" and getattr(controller, "threading_layer", None) != "openmp":
            symbol = getattr(controller, "_get_symbol", None)
            if symbol is not None:
                get, set_ = symbol("openblas_get_num_threads"), symbol("openblas_set_num_threads")
        if get is None or set_ is None:
            get, set_ = controller.get_num_threads, controller.set_num_threads
        self.get, self.set = get, set_
        self._shared = getattr(type(controller), "_SHARED_STATE", None)

    def owned_elsewhere(self) -> bool:
        """Whether another live thread holds threadpoolctl's control of this library's limit."""
        owner = getattr(self._shared, "controlling_thread", None)
        return owner is not None and owner is not threading.current_thread() and owner.is_alive()


_libraries: list[Library] | None = None
_found = threading.Lock()


def blas_libraries() -> list[Library]:
    """The loaded BLAS libraries, found once by threadpoolctl (finding them costs ms)."""
    global _libraries
    if _libraries is None:
        with _found:
            if _libraries is None:
                try:
                    from threadpoolctl import ThreadpoolController
                except ImportError:  # pragma: no cover - threadpoolctl is a dependency
                    _libraries = []
                else:
                    found = ThreadpoolController().lib_controllers
                    _libraries = [Library(lib) for lib in found if lib.user_api == "blas"]
    return _libraries


class BlasHold:
    """Context manager: every BLAS library at `threads` threads inside, as it was outside."""

    __slots__ = ("threads", "_restore")

    def __init__(self, threads: int):
        self.threads = threads
        self._restore: list[tuple[Library, int]] = []

    def __enter__(self) -> BlasHold:
        restore = []
        for lib in blas_libraries():
            now = lib.get()
            if now is not None and now != self.threads and not lib.owned_elsewhere():
                lib.set(self.threads)
                restore.append((lib, now))
        self._restore = restore
        return self

    def __exit__(self, *exc: object) -> None:
        for lib, n in self._restore:
            lib.set(n)
        self._restore = []


def blas_limit(threads: int | None) -> contextlib.AbstractContextManager[BlasHold | None]:
    """A context manager holding BLAS to `threads` threads (None: the library's own choice).

    Not re-entrant across threads: BLAS thread counts are process-wide, so
    two plain calls running at once in two threads restore in either order
    (the parallel engines set one budget for all their workers instead)."""
    if threads is None or not blas_libraries():
        return contextlib.nullcontext()
    return BlasHold(threads)


def blas_threads_now() -> list[int]:
    """The thread counts the loaded BLAS libraries use at this moment (for summaries and tests)."""
    from threadpoolctl import threadpool_info

    return [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]


__all__ = ["BLAS_THREADS", "BlasHold", "Library", "blas_libraries", "blas_limit", "blas_threads_now"]
