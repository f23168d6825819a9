"""Calling generated code: the floating-point policy, and errors that name the source op.

Every call of a loaded generated function (the whole entry, a part of the
frame split, a stage) goes through `call_generated`: it runs under the
kernels' floating-point policy (`cortex.semantics.all_kernels.FLOAT_ERRORS`:
IEEE results and no RuntimeWarning, e.g. on an all-black frame, as the
reference interpreter), and turns an exception raised inside generated code
into a `GeneratedCodeError` naming the cortex op whose code raised it (the
emitter writes `# origin: note` on each line; a loaded namespace keeps its
source under `SOURCE_NAME` so a traceback frame finds it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cortex.errors import CortexError
from cortex.semantics.all_kernels import FLOAT_ERRORS

SOURCE_NAME = "__cortex_source__"
"""The generated source, kept in its own namespace: a traceback frame of generated code finds it there."""

FILENAME_PREFIX = "<cortex-"
"""How the filename of every loaded generated module starts (`<cortex-numpy @l2_frame>`)."""


class GeneratedCodeError(CortexError):
    """An exception inside generated code, named by the cortex op whose code raised it."""


def generated_origin(source: str, line: int) -> str:
    """`%saliency (linalg.generic)`: what the emitter's comment on `line` says the code implements."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    _, hash_, comment = text.rpartition("  # ")
    if not hash_ or ":" not in comment:
        return f"line {line} of the generated source"
    origin, _, note = comment.partition(":")
    origin, note = origin.strip(), note.strip()
    named = origin if origin.startswith("cortex.") or "(" in origin else f"%{origin}"
    return f"{named} ({note})" if note else named


def generated_code_error(e: BaseException, what: str) -> GeneratedCodeError | None:
    """`e`, raised inside generated code, as an error naming the op whose code raised it (None: not from there)."""
    found = None
    tb = e.__traceback__
    while tb is not None:  # the innermost frame of generated code
        source = tb.tb_frame.f_globals.get(SOURCE_NAME)
        if isinstance(source, str) and tb.tb_frame.f_code.co_filename.startswith(FILENAME_PREFIX):
            found = (source, tb.tb_lineno)
        tb = tb.tb_next
    if found is None:
        return None
    source, line = found
    detail = " ".join(str(e).split())
    return GeneratedCodeError(
        f"{what}: {type(e).__name__} in the code generated for {generated_origin(source, line)}: {detail} "
        f"(line {line} of the generated source, compiled.source)"
    )


def call_generated(function: Callable[..., Any], args: Sequence[Any], what: str) -> Any:
    """`function(*args)` — generated code — under the kernels' floating-point policy (`FLOAT_ERRORS`: IEEE
    results, no RuntimeWarning, e.g. on an all-black frame); an exception from inside it becomes a
    `GeneratedCodeError` naming the source op (from the emitter's `# origin: op` comment on its line)."""
    try:
        if getattr(function, "native", False):  # compiled code (an IREE segment): no NumPy ufunc to govern
            return function(*args)
        with np.errstate(**FLOAT_ERRORS):  # type: ignore[arg-type]
            return function(*args)
    except CortexError:
        raise
    except Exception as e:
        error = generated_code_error(e, what)
        if error is None:
            raise
        raise error from e


__all__ = ["FILENAME_PREFIX", "SOURCE_NAME", "GeneratedCodeError", "call_generated", "generated_code_error", "generated_origin"]
