"""The compile driver: pass pipelines by name, lowering, compiling, the reference runner.

This module sits above every level it drives (passes, lowering, backends,
the interpreter); the root package's API (`cortex.compile`, `cortex.lower`,
...) is these functions, and the tools call them too. Nothing below this
module imports it.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException

from cortex.backends.numpy_emitter import emit_numpy, numpy_executable
from cortex.dialects.abi import FRAME_PARTS, SPLIT_ARGS, SPLIT_RESULTS, entry_ports, wire
from cortex.dialects.modes import DEFAULT_ENTRY, DEFAULT_MODE, INPUT_DEFAULTS, MODES
from cortex.dialects.state import WeightOp
from cortex.errors import CortexError, whole_number
from cortex.interpreter.calling import find_entry, weights_for_call
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import make_context, parse, verify_located
from cortex.lowering import POST_LOWERING_PASSES
from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass
from cortex.passes.calibrate import calibrate as _calibrate
from cortex.passes.decompose_scene_change import PRECISIONS, decompose_scene_change
from cortex.passes.frame_split import split_entry
from cortex.passes.outlining import FrameSplitError, defined_function, split_keys
from cortex.passes.specialize_mode import specialize_weights
from cortex.passes.specialize_shapes import is_shape_generic
from cortex.passes.stage_split import split_stages
from cortex.passes.state_analysis import classify_states
from cortex.passes.temporal_reuse import ReuseReport, temporal_reuse
from cortex.passes.translation_validation import SemanticsCallback
from cortex.registry import PipelineError, parse_pipeline
from cortex.reports.quant_report import quantize_with_report
from cortex.runtime.pipeline import CompiledPipeline
from cortex.runtime.program import Executable, FrameSplit, Part, Program, StateInfo
from cortex.runtime.threads import MAX_WORKERS
from cortex.shape_generic import ShapeGenericPipeline


def build_pipeline(pipeline: str) -> PassPipeline:
    """The pass instances of `pipeline` (`cortex.registry.parse_pipeline`), or a CortexError naming what is wrong."""
    return PassPipeline(parse_pipeline(pipeline))


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


@dataclass(frozen=True)
class Compilation:
    """What the compiler made of a module: the program the runtime runs, and the IR it came from."""

    program: Program
    optimised: ModuleOp  # the cortex module after specialisation and `passes`, before lowering
    lowered: ModuleOp  # the lowered entry module the "entry" executable was generated from
    temporal_reuse: list[ReuseReport] = field(default_factory=list)  # what `reduce_frame_work` carried


def compile_program(
    module_or_path: ModuleOp | str | Path,
    entry: str = DEFAULT_ENTRY,
    mode: str | None = DEFAULT_MODE,
    weights: Mapping[str, float] | None = None,
    passes: str | None = None,
    post_passes: str | None = "default",
    specialize: bool = True,
    split: bool = True,
    frame_work: bool = True,
    precision: str | None = None,
    backend: str = "numpy",
    device: str = "cpu",
) -> Compilation:
    """Lower `entry` of a cortex module (specialised to `mode`, then `passes`), run `post_passes` on the
    lowered module ("default": `POST_LOWERING_PASSES`, elementwise fusion; None or "": none), and build
    the `Program`: the entry's executable, and (`split=True`) the frame split and stage split's.

    Everything is compiled here, before the program exists: the runtime only loads it.
    `frame_work` (on by default): `reduce_frame_work` runs after `passes` — scene change decomposed,
    temporal reuse — in `precision` ("f64", the default, keeps every result's bits; "f32" only when
    asked for, or under the fast-math gate: `passes` with `fast-math=true`). On since the NumPy
    backend releases dead arrays (`backends/numpy_release`): the decomposed float64 scene change with
    reuse then measured less CPU than the OpenCV-backed kernel at 480×640 and 1080p
    (benchmarks/bench_schedule.py --scene-only). `frame_work=False`: the kernel as one extern call.
    `backend="iree"`: the extern-free parts run as code IREE compiled for `device` ("cpu" or "cuda";
    `cortex.backends.iree_backend`), the rest as on the NumPy backend.
    """
    check_backend_choice(backend, device)
    check_compile_flags(specialize=specialize, split=split, frame_work=frame_work, precision=precision)
    if post_passes == "default":
        post_passes = POST_LOWERING_PASSES
    table, source = weights_for_call(mode, weights)
    try:
        module = module_or_path if isinstance(module_or_path, ModuleOp) else parse(module_or_path)
        find_entry(module, entry)
        check_compile_options(module, mode, weights, passes, post_passes)
        if specialize and (mode is not None or weights):
            optimised = specialized(module, table)
        else:
            optimised = module.clone()  # kept: the frame split cuts this module
        if passes:
            run_pipeline(optimised, passes)
        reuse = reduce_frame_work(optimised, scene_precision(precision, passes)) if frame_work else []
        lowered = lower(optimised, post_passes=post_passes)
        program = build_program(optimised, lowered, entry, table, source, post_passes, split, backend, device)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError, ArgSpecParseError) as e:
        raise CortexError(str(e).strip()) from None
    return Compilation(program, optimised, lowered, reuse)


def compile_pipeline(
    module_or_path: ModuleOp | str | Path,
    entry: str = DEFAULT_ENTRY,
    mode: str | None = DEFAULT_MODE,
    weights: Mapping[str, float] | None = None,
    passes: str | None = None,
    post_passes: str | None = "default",
    workers: int = 1,
    specialize: bool = True,
    profile: bool = False,
    split: bool = True,
    frame_work: bool = True,
    precision: str | None = None,
    backend: str = "numpy",
    device: str = "cpu",
) -> CompiledPipeline | ShapeGenericPipeline:
    """`compile_program`, loaded by the runtime: the object `cortex.compile` returns.

    With a mode (or weights), the module is specialised first: the weights
    become constants, then canonicalize and dce (in power_save saliency and
    motion are never computed); `specialize=False` keeps them runtime
    inputs, a mode-agnostic artifact. Runtime inputs every mode shares (the
    blur gate's, `INPUT_DEFAULTS`) always stay inputs. `profile=True` turns
    `compiled.profile()` on. `workers` > 1: each call runs the frame's
    independent stages on that many threads (`cortex.runtime.threads`).
    `split=False` leaves out the frame and stage splits (a faster compile;
    `run_video` and `workers` > 1 then say so). `frame_work`, `precision`, `backend`, `device`: see
    `compile_program`; `compiled.temporal_reuse` says what temporal reuse carried. An entry with `?`
    input dimensions gives a `ShapeGenericPipeline`: the same compilation, run per concrete input shape
    (`cortex.shape_generic`).
    """
    check_backend_choice(backend, device)
    check_compile_flags(specialize=specialize, profile=profile, split=split, frame_work=frame_work, precision=precision)
    whole_number("workers", workers, 1, MAX_WORKERS)
    try:
        module = module_or_path if isinstance(module_or_path, ModuleOp) else parse(module_or_path)
        find_entry(module, entry)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError) as e:
        raise CortexError(str(e).strip()) from None
    check_compile_options(module, mode, weights, passes, post_passes)  # all at once: a shape-generic compile runs later
    if is_shape_generic(module, entry):  # compiled per concrete shape, on first use or `specialize`
        per_shape = functools.partial(
            compile_pipeline, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes,
            workers=workers, specialize=specialize, profile=profile, split=split, frame_work=frame_work,
            precision=precision, backend=backend, device=device,
        )
        return ShapeGenericPipeline(module, entry, per_shape)
    compilation = compile_program(module, entry, mode, weights, passes, post_passes, specialize, split,
                                  frame_work, precision, backend, device)
    compiled = CompiledPipeline(compilation.program, workers=workers, profile=profile)
    compiled.temporal_reuse = list(compilation.temporal_reuse)
    return compiled


def check_compile_options(module: ModuleOp, mode: str | None, weights: Mapping[str, float] | None,
                          passes: str | None, post_passes: str | None) -> None:
    """A CortexError for any option no shape changes: an unknown mode, weights that are not a mapping of
    finite numbers, a weight name neither the module reads nor any mode knows (`wq` for `wc` would
    otherwise be silently unused), or a pass pipeline that does not parse.

    The one check of these options for every compile: a shape-generic compile compiles per shape
    on the first frame, so without it a misspelt option surfaced only there (or never).
    """
    weights_for_call(mode, weights)
    if weights:
        known = {w.state_name_attr.data for w in module.walk() if isinstance(w, WeightOp)}
        known |= set(INPUT_DEFAULTS).union(*MODES.values())
        for name in weights:
            if name not in known:
                close = difflib.get_close_matches(str(name), sorted(known), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise CortexError(f"unknown weight {name!r} (known: {', '.join(sorted(known))}){hint}")
    for label, pipeline in (("passes", passes), ("post_passes", post_passes)):
        if pipeline is None or pipeline == "" or (label == "post_passes" and pipeline == "default"):
            continue
        if not isinstance(pipeline, str):
            raise CortexError(f"{label} must be a pipeline string like 'canonicalize,cse', got {type(pipeline).__name__}")
        build_pipeline(pipeline)


def check_compile_flags(precision: Any = None, **flags: Any) -> None:
    """A CortexError for a flag that is not a bool (`split="no"` is truthy: it compiled the splits) or a
    precision no scene change knows, or one that `frame_work=False` would silently ignore (the float
    type is chosen by the decomposition that frame work runs)."""
    for name, value in flags.items():
        if not isinstance(value, (bool, np.bool_)):
            raise CortexError(f"{name} must be True or False, got {value!r:.60}")
    if scene_precision(precision, None) != "f64" and flags.get("frame_work") is False:
        raise CortexError(f"precision={precision!r} needs frame_work=True (the default): without it scene change "
                          "is the float64 kernel")


def check_backend_choice(backend: str, device: str) -> None:
    """A CortexError for a backend or device no compile knows (before anything is compiled)."""
    if backend not in ("numpy", "iree") or not isinstance(device, str):
        raise CortexError(f"unknown backend {backend!r} (backends: numpy, iree)")
    if backend != "numpy" or device != "cpu":
        from cortex.backends.iree_backend import check_backend

        check_backend(backend, device)


def compile_lowered(lowered: ModuleOp, entry: str = DEFAULT_ENTRY, mode: str | None = None,
                    weights: Mapping[str, float] | None = None) -> CompiledPipeline:
    """A module already lowered (upstream IR, e.g. read back from `cortex-opt` output) as a runner.

    There is no cortex module to cut, so the program has no frame split."""
    find_entry(lowered, entry)
    table, source = weights_for_call(mode, weights)
    return CompiledPipeline(build_program(None, lowered, entry, table, source, None, split=False))


def build_program(optimised: ModuleOp | None, lowered: ModuleOp, entry: str, table: Mapping[str, float], weight_source: str,
                  post_passes: str | None, split: bool = True, backend: str = "numpy", device: str = "cpu") -> Program:
    """The `Program` of an entry: `lowered` (its lowering) as the "entry" executable and, when `split`, the frame
    split's parts and the stage split's stages of `optimised`, lowered together as the "split" executable.

    `backend="iree"`: "iree" executables (`iree_executable`); the split always runs its parallel part as
    stages (meta `split_in_stages`), and an entry with state runs the split for every call (meta
    `calls_split`): IREE compiles each cut into its own code, so one cut keeps every engine bit-identical.
    Its entry executable is then NumPy code (never called, kept for `compiled.source`). Unless the outlining
    cost rule left no IREE code in either (the L2 frame): then calls run the entry, as on the NumPy backend."""
    args, results = entry_ports(find_entry(lowered, entry))
    for port in args:
        if port.kind == "weight" and port.name not in table:
            raise CortexError(f"weight '{port.name}' has no value: {weight_source}")
    weights = {p.name: float(table[p.name]) for p in args if p.kind == "weight"}
    executables: dict[str, Executable] = {}

    def executable(module: ModuleOp, label: str, kind: str) -> Executable:
        if kind == "iree":
            from cortex.backends.iree_backend import iree_executable

            return iree_executable(module, label, device)
        return numpy_executable(module, label)

    entry_part = Part(
        "entry", "entry", entry,
        tuple(wire({"input": "input", "state": "state", "weight": "weight"}[p.kind], p.index if p.kind == "input" else p.name)
              for p in args),
        tuple(wire("output", p.index) if p.kind == "output" else wire("update", p.name) for p in results),
    )
    frame_split: FrameSplit | None = None
    split_error: str | None = "this pipeline was compiled with split=False: compile it with split=True to run frames in flight"
    classes = None
    if split and optimised is not None:
        try:
            classes = classify_states(defined_function(optimised, entry, "split"))
            split_module = split_for_schedules(optimised, entry)
        except FrameSplitError as e:
            split_error = f"this pipeline cannot be frame-split: {e}"
        else:
            lowered_split = lower(split_module, post_passes=post_passes)
            executables["split"] = executable(lowered_split, f"@{entry} split", backend)
            frame_split = split_parts(lowered_split, entry)
            split_error = None
    has_state = any(p.kind == "state" for p in args)
    calls_split = backend == "iree" and has_state and frame_split is not None
    if calls_split and not executables["split"].meta.get("segments"):
        entry_executable = executable(lowered, f"@{entry}", backend)
        if not entry_executable.meta.get("segments"):  # the cost rule left no IREE code: the NumPy backend's shape
            calls_split, executables["entry"] = False, entry_executable
    if "entry" not in executables:
        executables["entry"] = executable(lowered, f"@{entry}", "numpy" if calls_split else backend)
    meta: dict[str, Any] = {"backend": backend, "device": device}
    if backend == "iree":
        meta |= {"split_in_stages": True, "calls_split": calls_split}
    if classes is None:
        states = tuple(StateInfo(p.name, "unclassified", "the frame split did not run") for p in args if p.kind == "state")
    else:
        states = tuple(StateInfo(c.name, c.kind, c.reason) for c in classes.values())
    executables = {"entry": executables.pop("entry"), **executables}
    return Program(entry, tuple(args), tuple(results), weights, states, executables, entry_part, frame_split, split_error,
                   meta)


def split_for_schedules(module: ModuleOp, entry: str) -> ModuleOp:
    """A copy of `module` whose `@entry` is cut by the frame split (`@entry__delayed`, ...) and whose delayed
    and parallel parts are also cut by the stage split (`@entry__delayed__s0`, `@entry__parallel__s0`, ...),
    wholes and stages kept: what every scheduler runs. The delayed part's stages hand values to each other
    as `ahead:k`, so one frame's stages of both parts are one dependency graph (`run_stages`)."""
    work = module.clone()
    split_entry(work, entry)
    for part, value_kind in (("delayed", "ahead"), ("parallel", "stage")):
        whole = defined_function(work, f"{entry}__{part}", "split into stages")
        staged = ModuleOp([whole.clone()])
        anchor: func.FuncOp = whole
        for stage in split_stages(staged, f"{entry}__{part}", value_kind):
            staged.body.block.detach_op(stage)
            work.body.block.insert_op_after(stage, anchor)
            anchor = stage
    return work


def split_parts(lowered: ModuleOp, entry: str) -> FrameSplit:
    """The `Part`s of a lowered `split_for_schedules` module: wiring keys from the split's attributes, plus the
    weight arguments the lowering added (`weight:<name>`)."""
    functions = {op.sym_name.data: op for op in lowered.ops if isinstance(op, func.FuncOp) and not op.is_declaration}

    def part(name: str, symbol: str) -> Part:
        fn = functions[symbol]
        keys = split_keys(fn, SPLIT_ARGS) or []
        ports, _ = entry_ports(fn)
        keys += [wire("weight", p.name) for p in ports[len(keys):] if p.kind == "weight"]
        assert len(keys) == len(ports), f"@{symbol}: {len(ports)} arguments, {len(keys)} wiring keys"
        return Part(name, "split", symbol, tuple(keys), tuple(split_keys(fn, SPLIT_RESULTS) or []))

    def stages(of: str) -> tuple[Part, ...]:
        # stage functions only: `@entry__parallel__seg0` (an IREE segment outlined from a stage) is not one
        prefix = f"{entry}__{of}__s"
        found = sorted((s for s in functions if s.startswith(prefix) and s[len(prefix):].isdigit()),
                       key=lambda s: int(s[len(prefix):]))
        return tuple(part(f"{of} stage {s[len(prefix):]}", s) for s in found)

    return FrameSplit({name: part(name, f"{entry}__{name}") for name in FRAME_PARTS}, stages("parallel"), stages("delayed"))


def scene_precision(precision: str | None, passes: str | None) -> str:
    """The float type scene change is computed in: `precision` when given, else "f32" only under
    the fast-math gate (a `fast-math=true` pass option in `passes`), else "f64"."""
    if precision is None:
        return "f32" if passes and "fast-math=true" in passes.replace(" ", "") else "f64"
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise CortexError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r:.60}")
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
    module, entry: str = DEFAULT_ENTRY, mode: str | None = DEFAULT_MODE, weights=None, op_timer=None
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
    entry: str = DEFAULT_ENTRY,
    mode: str | None = DEFAULT_MODE,
    weights=None,
    passes=None,
    post_passes="default",
    workers: int = 1,
    specialize: bool = True,
    profile: bool = False,
    split: bool = True,
    frame_work: bool = True,
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
    workers=N)` runs several frames at once (`cortex.runtime.threads`).
    The frame and stage splits are compiled here too (`split=False` skips
    them): nothing compiles after this returns. `compiled.save(path)` writes
    the program; `cortex.load(path)` runs it again without the compiler.
    `backend="iree"` compiles the extern-free parts with IREE for `device` ("cpu", or "cuda" for an
    NVIDIA GPU): one IREE module per executable, cached on disk; externs stay Python calls
    (`cortex.backends.iree_backend`; the program carries "iree" executables).
    `frame_work` (on by default; False turns it off) decomposes scene change and applies temporal
    reuse (`reduce_frame_work`; `compiled.temporal_reuse` says what was carried; see compile_program);
    `precision="f32"` computes scene change in float32 (also under `fast-math=true` in `passes`).
    """
    return compile_pipeline(
        module_or_path, entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes,
        workers=workers, specialize=specialize, profile=profile, split=split, frame_work=frame_work,
        precision=precision, backend=backend, device=device,
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
    mode: str | None = DEFAULT_MODE,
    seed: int = 0,
) -> str | None:
    """Run `pipeline` on a copy of `module`, checking each pass: None if all keep the results, else why not.

    A pipeline that does not parse, or a module that cannot be run, raises
    CortexError; a pass that fails on its own (PassFailedException) raises.
    """
    work = module.clone()
    callback = SemanticsCallback(work, frames=frames, entry=entry, mode=mode, seed=seed)
    try:
        passes = PassPipeline(parse_pipeline(pipeline), callback)
    except PipelineError as e:
        raise CortexError(f"bad pass pipeline '{pipeline}': {e}") from None
    try:
        passes.apply(make_context(), work)
    except CortexError as e:
        return str(e)
    return None


__all__ = [
    "Compilation",
    "build_pipeline",
    "build_program",
    "calibrate",
    "compile",
    "compile_lowered",
    "compile_pipeline",
    "compile_program",
    "emit_numpy",
    "lower",
    "quantize",
    "reduce_frame_work",
    "reference",
    "run_passes",
    "run_pipeline",
    "validate_pipeline",
]
