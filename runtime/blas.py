"""BLAS threads around a plain call of generated code (issue 21).

The BLAS calls of generated code are small (gray's 3-term product,
saliency's matmuls): on a loaded machine OpenBLAS's worker threads spin and
cost far more than they save (the scheduling note: compiled saliency 491 ms
instead of 20 ms per 1080p frame). `CompiledPipeline.blas_threads` (default
`BLAS_THREADS`) holds them around each plain call; the parallel engines
limit BLAS the same way (`cortex.runtime.threads.thread_budget`).
"""

from __future__ import annotations

import contextlib
from typing import Any

BLAS_THREADS = 1
"""BLAS threads during a plain `compiled(frame)` call (`CompiledPipeline.blas_threads`)."""

_controller: Any = None


def blas_limit(threads: int | None):
    """A context manager holding BLAS to `threads` threads (threadpoolctl; None: the library's own
    choice). The controller that finds the BLAS libraries is made once; each use costs microseconds."""
    global _controller
    if threads is None:
        return contextlib.nullcontext()
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            return contextlib.nullcontext()
        _controller = ThreadpoolController()
    return _controller.limit(limits=threads, user_api="blas")


def blas_threads_now() -> list[int]:
    """The thread counts the loaded BLAS libraries use at this moment (for summaries and tests)."""
    from threadpoolctl import threadpool_info

    return [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]


__all__ = ["BLAS_THREADS", "blas_limit", "blas_threads_now"]
