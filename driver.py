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
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException

from cortex.backends.numpy_emitter import emit_numpy
from cortex.backends.runtime import CompiledPipeline
from cortex.dialects.modes import INPUT_DEFAULTS
from cortex.errors import CortexError
from cortex.interpreter.calling import find_entry, resolve_weights
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import make_context, parse, verify_located
from cortex.lowering import POST_LOWERING_PASSES
from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass
from cortex.passes.calibrate import calibrate as _calibrate
from cortex.passes.decompose_scene_change import PRECISIONS, decompose_scene_change
from cortex.passes.quantize import quantize_with_report
from cortex.passes.specialize_mode import specialize_weights
from cortex.passes.specialize_shapes import is_shape_generic
from cortex.passes.temporal_reuse import ReuseReport, temporal_reuse
from cortex.passes.translation_validation import SemanticsCallback
from cortex.registry import all_passes, unanchored
from cortex.shape_generic import ShapeGenericPipeline


def build_pipeline(pipeline: str) -> PassPipeline:
    """The pass instances of `pipeline`, or a CortexError naming what is wrong with it."""
    if not isinstance(pipeline, str):
        raise CortexError(f"a pass pipeline is a string like 'canonicalize,cse', got {type(pipeline).__name__}")
    available = all_passes()
    try:
        specs = list(parse_pipeline(unanchored(pipeline)))
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        last = [line.strip() for line in str(e).splitlines() if line.strip()]
        raise CortexError(f"invalid pass pipeline '{pipeline}': {last[-1] if last else e}") from None
    passes = []
    for spec in specs:
        if spec.name not in available:
            raise CortexError(f"unknown pass '{spec.name}' in pipeline '{pipeline}'")
        try:
            passes.append(available[spec.name]().from_pass_spec(spec))
        except (ValueError, TypeError) as e:
            raise CortexError(f"invalid options for pass '{spec.name}': {e}") from None
    return PassPipeline(tuple(passes))


def run_pipeline(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply `pipeline` (e.g. "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place.

    The passes run on a clone, which replaces the module's body only when
    every pass succeeded and its result verified (as cortex-opt verifies after
    each pass): a failed pipeline leaves `module` as it was.
    """
    if not isinstance(module, ModuleOp):
        raise CortexError(f"run_passes takes a builtin.module, got {type(module).__name__}")
    passes = build_pipeline(pipeline)
    verify_located(module)  # passes assume verified IR (dominance, yields, ...)
    work = module.clone()
    ctx = make_context()
    for p in passes.passes:
        try:
            p.apply(ctx, work)
        except CortexError:
            raise
        except DiagnosticException as e:
            raise CortexError(" ".join(str(e).split())) from None
        except Exception as e:  # a bug in the pass (or an xDSL pass meeting IR it does not handle)
            detail = " ".join(str(e).split())
            raise CortexError(f"internal error: pass '{p.name}' crashed: {type(e).__name__}: {detail}") from e
        try:
            verify_located(work)
        except (VerifyException, CortexError, ValueError) as e:
            detail = " ".join(str(e).split())
            raise CortexError(f"pass '{p.name}' produced IR that does not verify: {detail}") from None
    for block in list(module.body.blocks):
        module.body.detach_block(block).erase(safe_erase=False)
    work.body.move_blocks(module.body)
    module.attributes = dict(work.attributes)
    module.properties = dict(work.properties)
    return module


def lower(module: ModuleOp, passes: str | None = None, post_passes: str | None = None) -> ModuleOp:
    """A lowered copy of `module` (see `cortex.lowering`); `passes` (cortex-opt `-p` syntax) run on the
    copy first, `post_passes` on the lowered module (e.g. `POST_LOWERING_PASSES`)."""
    if not isinstance(module, ModuleOp):
        raise CortexError(f"lower takes a builtin.module, got {type(module).__name__}")
    for name, value in (("passes", passes), ("post_passes", post_passes)):
        if value is not None and not isinstance(value, str):
            raise CortexError(f"{name} must be a pipeline string like 'canonicalize,cse', got {type(value).__name__}")
    verify_located(module)
    lowered = module.clone()
    if passes:
        run_pipeline(lowered, passes)
    ctx = make_context()
    ConvertCortexToLinalgPass().apply(ctx, lowered)
    ConvertCortexToExternPass().apply(ctx, lowered)
    if post_passes:
        run_pipeline(lowered, post_passes)
    verify_located(lowered)
    return lowered


def compile_pipeline(
    module_or_path: ModuleOp | str | Path,
    entry: str = "l2_frame",
    mode: str | None = "balanced",
    weights: Mapping[str, float] | None = None,
    passes: str | None = None,
    post_passes: str | None = "default",
    workers: int = 1,
    specialize: bool = True,
    profile: bool = False,
    frame_work: bool = False,
    precision: str | None = None,
    backend: str = "numpy",
    device: str = "cpu",
) -> CompiledPipeline | ShapeGenericPipeline:
    """Lower `entry` of a cortex module (specialised to `mode`, then `passes`), run `post_passes` on the
    lowered module ("default": `POST_LOWERING_PASSES`, elementwise fusion; None or "": none),
    emit NumPy, load it. An entry with `?` input dimensions gives a `ShapeGenericPipeline`: the same
    compilation, run per concrete input shape (`cortex.shape_generic`).

    With a mode (or weights), the module is specialised first: the weights
    become constants, then canonicalize and dce (in power_save saliency and
    motion are never computed); `specialize=False` keeps them runtime
    inputs, a mode-agnostic artifact. Runtime inputs every mode shares (the
    blur gate's, `INPUT_DEFAULTS`) always stay inputs. `profile=True` turns
    `compiled.profile()` on. `workers` > 1: each call runs the frame's
    independent stages on that many threads (`cortex.backends.stage_parallel`).
    `frame_work=True`: `reduce_frame_work` runs after `passes` — scene change decomposed, temporal
    reuse — in `precision` ("f64", the default, keeps every result's bits; "f32" only when asked for,
    or under the fast-math gate: `passes` with `fast-math=true`). Off by default: the bits are the
    same, but the decomposed scene change measured more CPU than the kernel even after reuse
    (/work/notes/21.md), so it is not yet a saving.
    `backend="iree"`: the extern-free parts run as code IREE compiled for `device` ("cpu" or "cuda";
    `cortex.backends.iree_backend`), the rest as on the NumPy backend.
    """
    if backend not in ("numpy", "iree") or not isinstance(device, str):
        raise CortexError(f"unknown backend {backend!r} (backends: numpy, iree)")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise CortexError(f"workers must be an integer >= 1, got {workers!r}")
    if post_passes == "default":
        post_passes = POST_LOWERING_PASSES
    table, source = resolve_weights(mode, weights)
    try:
        module = module_or_path if isinstance(module_or_path, ModuleOp) else parse(module_or_path)
        find_entry(module, entry)
        if is_shape_generic(module, entry):  # compiled per concrete shape, on first use or `specialize`
            per_shape = functools.partial(
                compile_pipeline, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes,
                workers=workers, specialize=specialize, profile=profile, frame_work=frame_work, precision=precision,
                backend=backend, device=device,
            )
            return ShapeGenericPipeline(module, entry, per_shape)
        if specialize and (mode is not None or weights):
            optimised = specialized(module, table)
        else:
            optimised = module.clone()  # kept: the frame split (run_video, workers) cuts this module
        if passes:
            run_pipeline(optimised, passes)
        reuse = reduce_frame_work(optimised, scene_precision(precision, passes)) if frame_work else []
        lowered = lower(optimised, post_passes=post_passes)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError, ArgSpecParseError) as e:
        raise CortexError(str(e).strip()) from None
    compiled = CompiledPipeline(lowered, entry, table, source, profile=profile, backend=backend, device=device)
    compiled.cortex_module, compiled.post_passes, compiled.workers = optimised, post_passes, workers
    compiled.lower_module = functools.partial(lower, post_passes=post_passes)
    compiled.compile_fn = compile_pipeline
    compiled.temporal_reuse = reuse
    if backend == "iree" and compiled.iree is None:  # a pipeline with frame state (see use_split_program)
        compiled.use_split_program()
    return compiled


def scene_precision(precision: str | None, passes: str | None) -> str:
    """The float type scene change is computed in: `precision` when given, else "f32" only under
    the fast-math gate (a `fast-math=true` pass option in `passes`), else "f64"."""
    if precision is None:
        return "f32" if passes and "fast-math=true" in passes.replace(" ", "") else "f64"
    if precision not in PRECISIONS:
        raise CortexError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return precision


def reduce_frame_work(module: ModuleOp, precision: str = "f64") -> list[ReuseReport]:
    """The passes that reduce a frame's own work, in place (issue 21): each `cortex.scene_change`
    decomposed into Gaussian blurs and elementwise ops (in `precision`), then temporal reuse
    carries what a delayed input lets the next frame reuse. Returns temporal reuse's reports.
    With "f64" every output keeps its bits (tests/test_frame_work.py)."""
    decompose_scene_change(module, precision)
    reports = temporal_reuse(module)
    verify_located(module)
    return reports


def specialized(module: ModuleOp, table: Mapping[str, float]) -> ModuleOp:
    """A copy of `module` with the weights of `table` as constants (runtime inputs kept), canonicalized, DCE'd."""
    copy = module.clone()
    specialize_weights(copy, {k: v for k, v in table.items() if k not in INPUT_DEFAULTS})
    return run_pipeline(copy, "canonicalize,dce")


def reference(
    module, entry: str = "l2_frame", mode: str | None = "balanced", weights=None, op_timer=None
) -> ReferenceRunner | ShapeGenericPipeline:
    """The eager reference interpreter over `module`'s `entry` function.

    `op_timer(op, seconds)`, when given, is called after each cortex op runs. An entry with `?` input
    dimensions gives a `ShapeGenericPipeline` of interpreters, one per concrete input shape.
    """
    if isinstance(module, (str, Path)):
        module = parse(module)
    if isinstance(module, ModuleOp) and is_shape_generic(module, entry):
        make = functools.partial(ReferenceRunner, entry=entry, mode=mode, weights=weights, op_timer=op_timer)
        return ShapeGenericPipeline(module, entry, make)
    return ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=op_timer)


def compile(  # noqa: A001
    module_or_path,
    entry: str = "l2_frame",
    mode: str | None = "balanced",
    weights=None,
    passes=None,
    post_passes="default",
    workers: int = 1,
    specialize: bool = True,
    profile: bool = False,
    frame_work: bool = False,
    precision: str | None = None,
    backend: str = "numpy",
    device: str = "cpu",
):
    """Lower and compile `entry` to NumPy (or `backend="iree"`: native code); same call shape as `reference`.

    The module is specialised to `mode` first (its weights become constants,
    canonicalize and dce drop the stages a zero weight leaves unused: no
    saliency or motion in power_save); `specialize=False` keeps the weights
    as runtime inputs (one artifact for every mode's weights). `passes` run
    on the cortex module before lowering; `post_passes` on the lowered module
    ("default": `cortex.lowering.POST_LOWERING_PASSES`, elementwise fusion;
    None: none). With `profile=True`, `compiled.profile()` reports ms per
    source op (otherwise it says how to turn it on). `workers` > 1: a frame's
    independent stages run concurrently; `compiled.run_video(frames,
    workers=N)` runs several frames at once (`cortex.backends.frame_parallel`). `backend="iree"`
    compiles the extern-free parts with IREE for `device` ("cpu", or "cuda" for an NVIDIA GPU): one IREE
    module per compiled pipeline, cached on disk; externs stay Python calls (`cortex.backends.iree_backend`).
    `frame_work=True` decomposes scene change and applies temporal reuse (`reduce_frame_work`;
    `compiled.temporal_reuse` says what was carried; off by default, see compile_pipeline);
    `precision="f32"` computes scene change in float32 (also under `fast-math=true` in `passes`).
    """
    return compile_pipeline(
        module_or_path, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes,
        workers=workers, specialize=specialize, profile=profile, backend=backend, device=device, frame_work=frame_work,
        precision=precision,
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


__all__ = [
    "build_pipeline",
    "calibrate",
    "compile",
    "compile_pipeline",
    "emit_numpy",
    "lower",
    "quantize",
    "reduce_frame_work",
    "reference",
    "run_passes",
    "run_pipeline",
    "validate_pipeline",
]
