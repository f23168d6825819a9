"""What the reference interpreter and the compiled runtime share at the call boundary.

Both runners take the same arguments (module, entry, mode, weights) and
must reject the same mistakes with the same words: an unknown entry, an
unknown mode, a weight that is not a number.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from cortex.dialects.modes import UnknownModeError, mode_weights
from cortex.ir import CortexError


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    """The function `@entry` with a body, or a CortexError listing those there are."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    for f in functions:
        if f.sym_name.data == entry:
            return f
    names = ", ".join(f.sym_name.data for f in functions) or "none"
    raise CortexError(f"no function '@{entry}' in the module (functions: {names})")


def resolve_weights(mode: str | None, weights: Mapping[str, float] | None) -> tuple[dict[str, float], str]:
    """The weight table (the mode's row, overridden by explicit `weights`) and,
    for the diagnostic of a missing weight, where weights were looked for."""
    table: dict[str, float] = {}
    if mode is not None:
        try:
            table = mode_weights(mode)
        except UnknownModeError as e:
            raise CortexError(str(e)) from None
    if weights is not None and not isinstance(weights, Mapping):
        raise CortexError(f"weights must be a mapping of weight name to number, got {type(weights).__name__}")
    for name, value in (weights or {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise CortexError(f"weight '{name}' must be a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = float("inf")
        if not np.isfinite(number):
            raise CortexError(f"weight '{name}' must be a finite number, got {value!r}")
        table[name] = number
    if mode is None and weights is None:
        return table, "the module reads runtime weights, so give a mode or weights={...}"
    sources = ([f"mode '{mode}'"] if mode is not None else []) + (["weights="] if weights is not None else [])
    return table, f"known weights ({' and '.join(sources)}): {', '.join(sorted(table)) or 'none'}"
