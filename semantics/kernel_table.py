"""The table of reference kernels, filled by `@kernel("cortex.<op>")` where each kernel is defined.

Keyed by op name, not op class: this folder imports no dialect code (the
kernels are the meaning the dialect points to, not the other way round).
`cortex.semantics.all_kernels` imports every kernel module, so reading
`KERNELS` there sees them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

KernelT = TypeVar("KernelT", bound=Callable[..., Any])

KERNELS: dict[str, Callable[..., Any]] = {}


def kernel(op_name: str) -> Callable[[KernelT], KernelT]:
    """Register the decorated function as the reference kernel of `op_name`."""

    def register(fn: KernelT) -> KernelT:
        if op_name in KERNELS:
            raise ValueError(f"two kernels for '{op_name}': {KERNELS[op_name].__name__} and {fn.__name__}")
        KERNELS[op_name] = fn
        return fn

    return register


__all__ = ["KERNELS", "kernel"]
