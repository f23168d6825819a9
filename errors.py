"""The user-facing error type, the one thing every level may import.

A `CortexError` is a diagnostic for the person running cortex: one line,
with a location when known, never a traceback. It lives in this leaf module
so that kernels, video input and tools can raise it without importing the
dialect or the parser.
"""

from __future__ import annotations


class CortexError(Exception):
    """A user-facing diagnostic: one message, with a location when known."""


def whole_number(what: str, value: object, low: int, high: int) -> int:
    """`value` if it is an int (not a bool, not "2", not 2.5) in [low, high]; else a CortexError naming `what`.

    The one check behind every numeric pass option and API argument (workers,
    window, frames, ...): an unbounded `workers=2**63-1` used to allocate until
    the machine ran out of memory.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise CortexError(f"{what} must be a whole number from {low} to {high}, got {value!r} ({type(value).__name__})")
    if not low <= value <= high:
        raise CortexError(f"{what} must be a whole number from {low} to {high}, got {value}")
    return value


__all__ = ["CortexError", "whole_number"]
