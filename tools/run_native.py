"""cortex-run on a backend that compiles native code (IREE): what went native and why the rest stays on NumPy.

The IREE compile records every run of extern-free ops its cost rule weighed (`cortex.runtime.native_report`);
`compiled.native()` puts it in words. cortex-run prints those lines in its summary (and `summary.json`'s
`native`, the HTML report's "native code" row), warns on stderr when nothing went native, and with
`--print-pipeline` compiles (no frame runs) to say the same on stderr.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any


def compiled_of(backend: Any) -> Any:
    """The compiled pipeline a frame runner calls (through a multi-mode runner's `backend`), or None."""
    compiled = getattr(backend, "compiled", None)
    return compiled if compiled is not None else getattr(getattr(backend, "backend", None), "compiled", None)


def native_of(backend: Any) -> list[str]:
    """What the backend compiled to native code and why the rest stays on NumPy (`compiled.native()`: the
    IREE cost rule's figures per run); [] for the other backends."""
    compiled = compiled_of(backend)
    return compiled.native() if compiled is not None and hasattr(compiled, "native") else []


def warn_if_nothing_native(backend: Any) -> None:
    """One warning on stderr when a backend that compiles native code (IREE) compiled none of the pipeline."""
    from cortex.runtime.native_report import runs_nothing_natively

    program = getattr(compiled_of(backend), "program", None)
    if program is not None and runs_nothing_natively(program):
        print(f"warning: {native_of(backend)[0]}", file=sys.stderr)


def print_native_preview(args: argparse.Namespace, prep: Any, weights: dict[str, float]) -> None:
    """--print-pipeline for a backend that compiles native code (IREE): the pipeline compiled (no frame runs)
    and what went native, on stderr (standard output keeps the one pipeline line)."""
    from cortex.backends.backend import BACKENDS
    from cortex.backends.record import no_native_parts
    from cortex.frame_runners import make_runner

    record = BACKENDS.get(args.backend)
    if args.runner == "reference" or record is None or record.native is no_native_parts:
        return
    backend = make_runner(args.backend, prep.probed_module, args.entry, args.mode, args.passes, weights,
                           args.post_passes, device=args.device)
    warn_if_nothing_native(backend)
    for line in native_of(backend)[1:]:
        print(line, file=sys.stderr)


__all__ = ["native_of", "print_native_preview", "warn_if_nothing_native"]
