"""The compile driver: pass pipelines by name, lowering, compiling, the reference runner.

This module sits above every level it drives (passes, lowering, backends,
the interpreter); the root package's API (`cortex.compile`, `cortex.lower`,
...) is these functions, and the tools call them too. Nothing below this
module imports it.
"""

from __future__ import annotations

import functools
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
from cortex.lowering import POST_LOWERING_PASSES
from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass
from cortex.passes.calibrate import calibrate as _calibrate
from cortex.passes.quantize import quantize_with_report
from cortex.passes.translation_validation import SemanticsCallback
from cortex.registry import all_passes


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply `pipeline` (e.g. "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place."""
    PassPipeline.parse_spec(all_passes(), pipeline).apply(make_context(), module)
    return module


def lower(module: ModuleOp, passes: str | None = None, post_passes: str | None = None) -> ModuleOp:
    """A lowered copy of `module` (see `cortex.lowering`); `passes` (cortex-opt `-p` syntax) run on the
    copy first, `post_passes` on the lowered module (e.g. `POST_LOWERING_PASSES`)."""
    lowered = module.clone()
    if passes:
        run_pipeline(lowered, passes)
    ctx = make_context()
    ConvertCortexToLinalgPass().apply(ctx, lowered)
    ConvertCortexToExternPass().apply(ctx, lowered)
    if post_passes:
        run_pipeline(lowered, post_passes)
    lowered.verify()
    return lowered


def compile_pipeline(
    module_or_path: ModuleOp | str | Path,
    entry: str = "l2_frame",
    mode: str | None = "balanced",
    weights: Mapping[str, float] | None = None,
    passes: str | None = None,
    post_passes: str | None = "default",
    workers: int = 1,
) -> CompiledPipeline:
    """Lower `entry` of a cortex module (optionally after `passes`), run `post_passes` on the
    lowered module ("default": `POST_LOWERING_PASSES`, elementwise fusion; None or "": none),
    emit NumPy, load it. `workers` > 1: each call runs the frame's independent stages on that
    many threads (`cortex.backends.stage_parallel`)."""
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise CortexError(f"workers must be an integer >= 1, got {workers!r}")
    if post_passes == "default":
        post_passes = POST_LOWERING_PASSES
    table, source = resolve_weights(mode, weights)
    try:
        module = module_or_path if isinstance(module_or_path, ModuleOp) else parse(module_or_path)
        find_entry(module, entry)
        optimised = module.clone()  # kept: the frame split (run_video, workers) cuts this module
        if passes:
            run_pipeline(optimised, passes)
        lowered = lower(optimised, post_passes=post_passes)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError, ArgSpecParseError) as e:
        raise CortexError(str(e).strip()) from None
    compiled = CompiledPipeline(lowered, entry, table, source)
    compiled.cortex_module, compiled.post_passes, compiled.workers = optimised, post_passes, workers
    compiled.lower_module = functools.partial(lower, post_passes=post_passes)
    compiled.compile_fn = compile_pipeline
    return compiled


def reference(module, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, op_timer=None) -> ReferenceRunner:
    """The eager reference interpreter over `module`'s `entry` function.

    `op_timer(op, seconds)`, when given, is called after each cortex op runs.
    """
    return ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=op_timer)


def compile(  # noqa: A001
    module_or_path, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, passes=None,
    post_passes="default", workers=1,
):
    """Lower and compile `entry` to NumPy; same call shape as `reference`.

    `passes` run on the cortex module before lowering; `post_passes` on the lowered
    module ("default": `cortex.lowering.POST_LOWERING_PASSES`, elementwise fusion; None: none).
    `workers` > 1: a frame's independent stages run concurrently; `compiled.run_video(frames,
    workers=N)` runs several frames at once (`cortex.backends.frame_parallel`).
    """
    return compile_pipeline(
        module_or_path, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes, workers=workers
    )


def calibrate(module, inputs, entry: str | None = None):
    """Attach each tensor's observed range (min, max, histogram) over `inputs` to its producer, in place."""
    return _calibrate(module, inputs, entry)


def quantize(module, calibration, precision="int8", schema="symmetric", granularity="tensor", clip="minmax", held_out=None, entry=None):
    """`(qmodule, report)`: an int8 copy of `module` calibrated on `calibration` (an iterable of input
    tuples), and the per-op error report against the float graph (on `held_out` too, when given)."""
    return quantize_with_report(module, calibration, precision, schema, granularity, clip, held_out, entry)


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


__all__ = ["calibrate", "compile", "compile_pipeline", "emit_numpy", "lower", "quantize", "reference", "run_passes", "run_pipeline", "validate_pipeline"]
