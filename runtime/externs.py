"""The extern table: the Python kernel each `cortex.extern` declaration of a compiled program calls.

Externs stay Python calls whatever the executable kind (generated NumPy
code binds them when it loads; another kind's loader binds them the same
way), and the table is the reference interpreter's own, so an extern and the
op it stands for have one implementation.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from cortex.errors import CortexError
from cortex.semantics.all_kernels import KERNELS, NO_KERNEL

EXTERNS: Mapping[str, Callable[..., Any]] = KERNELS
"""Kernel per extern name (`cortex.extern` on a declaration)."""


def bind_extern(name: str, props: Mapping[str, Any]) -> Callable[..., Any]:
    """The callable a loaded program uses for one extern declaration (checked now, not per frame)."""
    kernel = EXTERNS.get(name) if name not in NO_KERNEL else None
    if kernel is None:
        raise CortexError(f"unknown extern '{name}': no kernel in the extern table{_did_you_mean(name)}")
    try:
        inspect.signature(kernel).bind_partial(**props)
    except TypeError as e:
        raise CortexError(f"extern '{name}' does not accept its properties {dict(props)}: {e}") from None

    def call(*args: Any) -> Any:
        try:
            return kernel(*args, **props)
        except CortexError:
            raise
        except Exception as e:  # an OpenCV/NumPy failure: one line naming the extern
            raise CortexError(f"'{name}' failed: {type(e).__name__}: {' '.join(str(e).split())}") from e

    call.__name__ = call.__qualname__ = name.removeprefix("cortex.")
    return call


def _did_you_mean(name: str) -> str:
    """The nearest kernel names, read from the table itself (the runtime cannot ask the dialect)."""
    stems = {known.removeprefix("cortex."): known for known in set(EXTERNS) - NO_KERNEL}
    near = difflib.get_close_matches(name.removeprefix("cortex."), sorted(stems), n=3)
    return f" (did you mean {', '.join(stems[n] for n in near)}?)" if near else ""


__all__ = ["EXTERNS", "bind_extern"]
