"""The user-facing error type, the one thing every level may import.

A `CortexError` is a diagnostic for the person running cortex: one line,
with a location when known, never a traceback. It lives in this leaf module
so that kernels, video input and tools can raise it without importing the
dialect or the parser.
"""

from __future__ import annotations


class CortexError(Exception):
    """A user-facing diagnostic: one message, with a location when known."""


__all__ = ["CortexError"]
