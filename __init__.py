"""Cortex: a multi-level compiler for the ROI-scoring pipeline of a video encoder.

The Python API:

    module = cortex.parse("examples/l2_pipeline.mlir")       # or MLIR text
    module = cortex.build_l2_pipeline(720, 1280)              # any frame size
    runner = cortex.reference(module, entry="l2_frame", mode="balanced")
    encoded, score = runner(frame)                            # runner.state, runner.reset()
    compiled = cortex.compile(module, mode="power_save")      # same call shape, NumPy backend
    lowered = cortex.lower(module)                            # upstream linalg/arith/func IR
    source = cortex.emit_numpy(lowered)                       # the generated Python
"""

from __future__ import annotations

from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.ir import CortexError, make_context, parse, to_text


def reference(module, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, op_timer=None):
    """The eager reference interpreter over `module`'s `entry` function.

    `op_timer(op, seconds)`, when given, is called after each cortex op runs.
    """
    from cortex.backends.reference import ReferenceRunner

    return ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=op_timer)


def compile(module_or_path, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, passes=None, post_passes="default"):
    """Lower and compile `entry` to NumPy; same call shape as `reference`.

    `passes` run on the cortex module before lowering; `post_passes` on the lowered
    module ("default": `cortex.lowering.POST_LOWERING_PASSES`, elementwise fusion; None: none).
    """
    from cortex.backends.runtime import compile_pipeline

    return compile_pipeline(module_or_path, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes)


def lower(module, passes=None):
    """The upstream-dialect module (convert-cortex-to-linalg, convert-cortex-to-extern)."""
    from cortex.lowering import lower as _lower

    return _lower(module, passes=passes)


def emit_numpy(module) -> str:
    """Python source of the NumPy backend for a lowered module."""
    from cortex.backends.numpy_emitter import emit_numpy as _emit

    return _emit(module)


def calibrate(module, inputs, entry: str | None = None):
    """Attach each tensor's observed range (min, max, histogram) over `inputs` to its producer, in place."""
    from cortex.passes.calibrate import calibrate as _calibrate

    return _calibrate(module, inputs, entry)


def quantize(module, calibration, precision="int8", schema="symmetric", granularity="tensor", clip="minmax", held_out=None, entry=None):
    """`(qmodule, report)`: an int8 copy of `module` calibrated on `calibration` (an iterable of input
    tuples), and the per-op error report against the float graph (on `held_out` too, when given)."""
    from cortex.passes.quantize import quantize_with_report

    return quantize_with_report(module, calibration, precision, schema, granularity, clip, held_out, entry)


def run_passes(module, pipeline: str):
    """Apply a pass pipeline written as for `cortex-opt -p` (in place); returns the module."""
    from cortex.passes.pipeline import run_pipeline

    return run_pipeline(module, pipeline)


__all__ = [
    "CortexError",
    "build_l2_pipeline",
    "calibrate",
    "compile",
    "emit_numpy",
    "lower",
    "make_context",
    "parse",
    "quantize",
    "reference",
    "run_passes",
    "to_text",
]
