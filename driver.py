"""The compile driver: pass pipelines by name, lowering, compiling, the reference runner.

This module sits above every level it drives (passes, lowering, backends,
the interpreter); the root package's API (`cortex.compile`, `cortex.lower`,
...) is these functions, and the tools call them too. Nothing below this
module imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from cortex.backends.numpy_emitter import emit_numpy
from cortex.backends.runtime import CompiledPipeline
from cortex.errors import CortexError
from cortex.interpreter.calling import find_entry, resolve_weights
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import make_context, parse
from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass
from cortex.passes.translation_validation import SemanticsCallback
from cortex.registry import all_passes


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply `pipeline` (e.g. "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place."""
    PassPipeline.parse_spec(all_passes(), pipeline).apply(make_context(), module)
    return module


def lower(module: ModuleOp, passes: str | None = None) -> ModuleOp:
    """A lowered copy of `module` (see `cortex.lowering`); `passes` (cortex-opt `-p` syntax) run on the copy first."""
    lowered = module.clone()
    if passes:
        run_pipeline(lowered, passes)
    ctx = make_context()
    ConvertCortexToLinalgPass().apply(ctx, lowered)
    ConvertCortexToExternPass().apply(ctx, lowered)
    lowered.verify()
    return lowered


def compile_pipeline(
    module_or_path: ModuleOp | str | Path,
    entry: str = "l2_frame",
    mode: str | None = "balanced",
    weights: Mapping[str, float] | None = None,
    passes: str | None = None,
) -> CompiledPipeline:
    """Lower `entry` of a cortex module (optionally after `passes`), emit NumPy, load it."""
    table, source = resolve_weights(mode, weights)
    try:
        module = module_or_path if isinstance(module_or_path, ModuleOp) else parse(module_or_path)
        find_entry(module, entry)
        lowered = lower(module, passes=passes)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError, ArgSpecParseError) as e:
        raise CortexError(str(e).strip()) from None
    return CompiledPipeline(lowered, entry, table, source)


def reference(module, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, op_timer=None) -> ReferenceRunner:
    """The eager reference interpreter over `module`'s `entry` function.

    `op_timer(op, seconds)`, when given, is called after each cortex op runs.
    """
    return ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=op_timer)


def compile(module_or_path, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, passes=None):  # noqa: A001
    """Lower and compile `entry` to NumPy; same call shape as `reference`."""
    return compile_pipeline(module_or_path, entry=entry, mode=mode, weights=weights, passes=passes)


def run_passes(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply a pass pipeline written as for `cortex-opt -p` (in place); returns the module."""
    return run_pipeline(module, pipeline)


def validate_pipeline(
    module: ModuleOp,
    pipeline: str,
    *,
    frames: int = 3,
    entry: str | None = None,
    mode: str | None = "balanced",
    seed: int = 0,
) -> str | None:
    """Run `pipeline` on a copy of `module`, checking each pass: None if all keep the results, else why not.

    A pipeline that does not parse, or a module that cannot be run, raises
    CortexError; a pass that fails on its own (PassFailedException) raises.
    """
    work = module.clone()
    callback = SemanticsCallback(work, frames=frames, entry=entry, mode=mode, seed=seed)
    try:
        passes = PassPipeline.parse_spec(all_passes(), pipeline, callback)
    except (ValueError, ArgSpecParseError) as e:
        raise CortexError(f"bad pass pipeline '{pipeline}': {e}") from None
    try:
        passes.apply(make_context(), work)
    except CortexError as e:
        return str(e)
    return None


__all__ = ["compile", "compile_pipeline", "emit_numpy", "lower", "reference", "run_passes", "run_pipeline", "validate_pipeline"]
