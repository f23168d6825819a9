"""The compile driver: pass pipelines by name, lowering, compiling, the reference runner.

This module sits above every level it drives (passes, lowering, backends,
the interpreter); the root package's API (`cortex.compile`, `cortex.lower`,
...) is these functions, and the tools call them too. Nothing below this
module imports it.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # typing.Unpack is 3.11+; the project runs on 3.10 too
    from typing_extensions import Unpack

import numpy as np
import numpy.typing as npt
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, VerifyException

from cortex.backends.backend import HOST_BACKEND, Backend, backend_named
from cortex.backends.numpy.emitter import emit_numpy
from cortex.deprecation import OMITTED, renamed_function, warn_renamed
from cortex.dialects.abi import FRAME_PARTS, SPLIT_ARGS, SPLIT_RESULTS, entry_ports, wire
from cortex.dialects.state import WeightOp
from cortex.errors import CortexError, whole_number
from cortex.interpreter.calling import find_entry, resolve_entry
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import make_context, parse, verify_located
from cortex.options import CompileFields, CompileOptions, compile_options, compile_pipeline_text, compile_plan
from cortex.passes.calibrate import calibrate as _calibrate
from cortex.passes.frame_split import split_entry
from cortex.passes.mode_states import report_lines, source_live_states, states_across_modes
from cortex.passes.outlining import FrameSplitError, defined_function, split_keys
from cortex.passes.reporting import apply_pass
from cortex.passes.specialize_shapes import is_shape_generic
from cortex.passes.stage_split import split_stages
from cortex.passes.state_analysis import classify_states
from cortex.passes.temporal_reuse import ReuseReport
from cortex.passes.translation_validation import SemanticsCallback
from cortex.registry import PipelineError, parse_pipeline
from cortex.reports.quant_report import QuantReport, quantize_with_report
from cortex.runtime.modes import ModeSwitch
from cortex.runtime.pipeline import LoadedProgram, loaded
from cortex.runtime.program import Executable, FrameSplit, Part, Program, StateInfo, with_variants
from cortex.runtime.threads import MAX_WORKERS
from cortex.semantics.modes import DEFAULT_MODE, INPUT_DEFAULTS, MODES
from cortex.shape_generic import ShapeGenericPipeline


def build_pipeline(pipeline: str) -> PassPipeline:
    """The pass instances of `pipeline` (`cortex.registry.parse_pipeline`), or a CortexError naming what is wrong."""
    return PassPipeline(parse_pipeline(pipeline))


def run_passes(module: ModuleOp, pipeline: str) -> ModuleOp:
    """Apply a pass pipeline written as for `cortex-opt -p` (e.g.
    "canonicalize,cortex-specialize-mode{mode=power_save},dce") in place; returns the module.

    The passes run on a clone, which replaces the module's body only when
    every pass succeeded and its result verified (as cortex-opt verifies after
    each pass): a failed pipeline leaves `module` as it was.
    """
    if not isinstance(module, ModuleOp):
        raise CortexError(f"run_passes takes a builtin.module, got {type(module).__name__}")
    passes = build_pipeline(pipeline)
    verify_located(module)  # passes assume verified IR (dominance, yields, ...)
    work = module.clone()
    apply_passes(work, passes.passes)
    for block in list(module.body.blocks):
        module.body.detach_block(block).erase(safe_erase=False)
    work.body.move_blocks(module.body)
    module.attributes = dict(work.attributes)
    module.properties = dict(work.properties)
    return module


def apply_passes(module: ModuleOp, passes: Iterable[ModulePass]) -> list[object]:
    """Run `passes` on `module` in place, verifying after each (a failure names the pass); the reports of
    every pass that has some (`cortex.passes.reporting`: e.g. what `cortex-temporal-reuse` carried), in order."""
    ctx = make_context()
    reports: list[object] = []
    for p in passes:
        try:
            reports += apply_pass(p, ctx, module)
        except CortexError:
            raise
        except DiagnosticException as e:
            raise CortexError(" ".join(str(e).split())) from None
        except Exception as e:  # a bug in the pass (or an xDSL pass meeting IR it does not handle)
            detail = " ".join(str(e).split())
            raise CortexError(f"internal error: pass '{p.name}' crashed: {type(e).__name__}: {detail}") from e
        try:
            verify_located(module)
        except (VerifyException, CortexError, ValueError) as e:
            detail = " ".join(str(e).split())
            raise CortexError(f"pass '{p.name}' produced IR that does not verify: {detail}") from None
    return reports


def lower(module: ModuleOp, passes: str | None = None, post_passes: str | None = None) -> ModuleOp:
    """A lowered copy of `module` (see `cortex.lowering`); `passes` (cortex-opt `-p` syntax) run on the
    copy first, `post_passes` on the lowered module (e.g. `POST_LOWERING_PASSES`)."""
    if not isinstance(module, ModuleOp):
        raise CortexError(f"lower takes a builtin.module, got {type(module).__name__}")
    for name, value in (("passes", passes), ("post_passes", post_passes)):
        if value is not None and not isinstance(value, str):
            raise CortexError(f"{name} must be a pipeline string like 'canonicalize,cse', got {type(value).__name__}")
    return lowered_copy(module, ",".join(filter(None, (passes, LOWERING, post_passes))))


LOWERING = "convert-cortex-to-linalg,convert-cortex-to-extern"
"""cortex → upstream dialects with OpenCV stages as `func.call` externs (`cortex.lowering`)."""


def lowered_copy(module: ModuleOp, lowering: str | Sequence[ModulePass]) -> ModuleOp:
    """A copy of `module` with the pipeline `lowering` applied (`compile_phases`' second half; its text, or
    its passes already parsed)."""
    verify_located(module)
    lowered = module.clone()
    apply_passes(lowered, build_pipeline(lowering).passes if isinstance(lowering, str) else lowering)
    return lowered


@dataclass(frozen=True)
class Compilation:
    """What the compiler made of a module: the program the runtime runs, and the IR it came from."""

    program: Program
    optimised: ModuleOp  # the cortex module after specialisation and `passes`, before lowering
    lowered: ModuleOp  # the lowered entry module the "entry" executable was generated from
    temporal_reuse: list[ReuseReport] = field(default_factory=list)  # what the frame's own work carried
    options: CompileOptions = field(default_factory=CompileOptions)  # what it was compiled with (entry resolved)
    mode_report: list[str] = field(default_factory=list)  # a multi-mode compile: states dropped, decisions
    variants: dict[str, Compilation] = field(default_factory=dict)  # a multi-mode compile: each mode's


def parsed(module_or_path: ModuleOp | str | Path) -> ModuleOp:
    """`module_or_path` as a module (a path or MLIR text parsed), or a one-line CortexError."""
    if isinstance(module_or_path, ModuleOp):
        return module_or_path
    try:
        return parse(module_or_path)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError) as e:
        raise CortexError(str(e).strip()) from None


def compile_program(module_or_path: ModuleOp | str | Path, options: CompileOptions | None = None,
                    **fields: Unpack[CompileFields]) -> Compilation:
    """Compile a cortex module to a `Program` (everything compiled here: the runtime only loads it).

    `options` (a `CompileOptions`), or its fields as keywords, say what to make. The steps are the pipelines
    `compile_phases(options)` names — the weights baked in, `passes`, the frame's own work (scene change
    decomposed in `precision`, temporal reuse: on since the NumPy backend releases dead arrays, the decomposed
    float64 scene change with reuse measured less CPU than the OpenCV-backed kernel at 480×640 and 1080p),
    the lowering, `post_passes` — then the program builder cuts the frame and stage splits from the optimised
    module and hands every lowered part to the backend (`build_program`).
    """
    options = compile_options(options, **fields)
    module = parsed(module_or_path)
    return compile_checked(module, checked_for(module, options))


def checked_for(module: ModuleOp, options: CompileOptions) -> CompileOptions:
    """`options` (checked when made) with the entry resolved in `module` and their weight names (each mode's
    row, for `modes`) checked against it: the options' checks that need the module, made once per compile."""
    options = options.with_entry(resolve_entry(module, options.entry))
    for one in options.variants().values() if options.modes is not None else (options,):
        check_weight_names(module, one.weights)
    return options


def compile_checked(module: ModuleOp, options: CompileOptions) -> Compilation:
    """`compile_program` of options that went through `checked_for` (for this module or its shape-bound copy)."""
    if options.modes is not None:
        return compile_modes(module, options)
    return compile_variant(module, options)


def compile_variant(module: ModuleOp, options: CompileOptions, keep: Sequence[str] = ()) -> Compilation:
    """`compile_program` for one mode (`options.entry` resolved): the updates of states no output reads
    any more under its weights are dropped, except `keep`'s (`cortex.passes.mode_states`)."""
    table, source = options.weight_table()
    live = sorted(source_live_states(ModuleOp([find_entry(module, options.entry or "").clone()])))
    optimise, lowering_phase = compile_plan(options, table, (live, keep))
    try:
        optimised = module.clone()  # kept: the frame split cuts this module
        verify_located(optimised)
        reports = apply_passes(optimised, optimise.passes()) if optimise.steps else []
        reuse = [r for r in reports if isinstance(r, ReuseReport)]
        lowering = lowering_phase.passes()
        lowered = lowered_copy(optimised, lowering)
        derived = with_derivations(lowered, [r for r in reuse if r.function == options.entry], lowering)
        program = build_program(optimised, lowered, table, source, options, lowering, derived)
    except CortexError:
        raise
    except (DiagnosticException, ParseError, ValueError, ArgSpecParseError) as e:
        raise CortexError(str(e).strip()) from None
    return Compilation(program, optimised, lowered, reuse, options)


def compile_modes(module: ModuleOp, options: CompileOptions) -> Compilation:
    """One program for every mode of `options.modes`: a variant per mode (`compile_variant`), the states
    some mode reads and another's DCE would stop updating decided once (`states_across_modes`: keep the
    update alive everywhere, or recompute it on a switch), the named states shared by the variants."""
    assert options.entry is not None, "compile_modes takes options with the entry resolved"
    variants = options.variants()
    rows = {m: {k: v for k, v in o.weight_table()[0].items()} for m, o in variants.items()}
    decisions = states_across_modes(module, options.entry, rows)
    keep = sorted(s for s, d in decisions.items() if d.decision == "keep")
    made = {m: compile_variant(module, o, keep) for m, o in variants.items()}
    first = next(iter(made.values()))
    source = set(source_live_states(ModuleOp([find_entry(module, options.entry).clone()])))
    dropped = {m: sorted(source - program_states(c.program)) for m, c in made.items()}
    switch = {s: d.decision for s, d in decisions.items()}
    program = with_variants({m: c.program for m, c in made.items()}, switch)
    report = report_lines(decisions, dropped)
    return dataclasses.replace(first, program=program, options=options, mode_report=report,
                               variants={m: c for m, c in made.items()})


def program_states(program: Program) -> set[str]:
    """The states a program reads or writes (derived ones by their source)."""
    return {p.name for p in (*program.args, *program.results) if p.kind == "state"}


def compile_loaded(module_or_path: ModuleOp | str | Path, options: CompileOptions | None = None, *,
                   workers: int = OMITTED, profile: bool = OMITTED,
                   **fields: Unpack[CompileFields]) -> LoadedProgram | ModeSwitch | ShapeGenericPipeline:
    """`compile_program`, loaded by the runtime: the object `cortex.compile` returns.

    An entry with `?` input dimensions gives a `ShapeGenericPipeline`: the same options, compiled per
    concrete input shape (`cortex.shape_generic`) — checked now, so a bad option fails here, not on the
    first frame. How the result runs is set on it (`compiled.stage_threads`, `compiled.profiling`);
    `workers=` and `profile=` here are their deprecated spellings (`runtime_settings`).
    """
    options = compile_options(options, **fields)
    settings = runtime_settings("compile_loaded", workers, profile)
    return settings(compile_checked_loaded(module_or_path, options))


def runtime_settings(where: str, workers: int, profile: bool) -> Callable[[Any], Any]:
    """The deprecated runtime keywords of a compile (`workers=`, `profile=`), checked now and warned about at
    the caller of `where`: a function that sets them on the compiled result (`stage_threads`, `profiling`)."""
    if profile is not OMITTED:
        warn_renamed(f"cortex.{where}(profile=)", "compiled.profiling = True", stacklevel=4)
        if not isinstance(profile, (bool, np.bool_)):
            raise CortexError(f"profile must be True or False, got {profile!r:.60}")
    if workers is not OMITTED:
        warn_renamed(f"cortex.{where}(workers=)", "compiled.stage_threads = N", stacklevel=4)
        whole_number("workers", workers, 1, MAX_WORKERS)

    def apply(compiled: Any) -> Any:
        if workers is not OMITTED:
            compiled.stage_threads = workers
        if profile is not OMITTED and profile:
            compiled.profiling = True
        return compiled
    return apply


def compile_checked_loaded(module_or_path: ModuleOp | str | Path,
                           options: CompileOptions) -> LoadedProgram | ModeSwitch | ShapeGenericPipeline:
    """`compile_loaded` once its options are made."""
    module = parsed(module_or_path)
    options = checked_for(module, options)  # all at once: a shape-generic compile runs later
    entry = options.entry
    assert entry is not None
    if is_shape_generic(module, entry):  # compiled per concrete shape, on first use or `specialize`
        for one in options.variants().values() if options.modes is not None else (options,):
            check_weight_values(module, *one.weight_table())  # now, not at the first call
        return ShapeGenericPipeline(module, entry, functools.partial(load_checked, options=options))
    return load_checked(module, options)


def load_checked(module: ModuleOp, options: CompileOptions) -> LoadedProgram | ModeSwitch:
    """`compile_checked`, loaded by the runtime (`compile_loaded` once the options and the module are checked;
    a shape-generic pipeline's compile of each static shape)."""
    compilation = compile_checked(module, options)
    compiled = loaded(compilation.program)
    if isinstance(compiled, ModeSwitch):
        compiled.mode_report = list(compilation.mode_report)
        for mode, runner in compiled.runners.items():
            runner.temporal_reuse = list(compilation.variants[mode].temporal_reuse)
    else:
        compiled.temporal_reuse = list(compilation.temporal_reuse)
    return compiled


def check_weight_names(module: ModuleOp, weights: Mapping[str, float] | None) -> None:
    """A CortexError for a weight name neither the module reads nor any mode knows (`wq` for `wc` would
    otherwise be silently unused): the one option check that needs the module (`CompileOptions` checks
    the rest when it is made)."""
    if not weights:
        return
    known = {w.state_name_attr.data for w in module.walk() if isinstance(w, WeightOp)}
    known |= set(INPUT_DEFAULTS).union(*MODES.values())
    for name in weights:
        if name not in known:
            close = difflib.get_close_matches(str(name), sorted(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise CortexError(f"unknown weight {name!r} (known: {', '.join(sorted(known))}){hint}")


def check_weight_values(module: ModuleOp, table: Mapping[str, float], weight_source: str) -> None:
    """A CortexError for a weight the module reads that has no value (`build_program`'s check, made before a
    shape-generic compile defers the rest to the first call)."""
    for name in sorted({w.state_name_attr.data for w in module.walk() if isinstance(w, WeightOp)}):
        if name not in table:
            raise CortexError(f"weight '{name}' has no value: {weight_source}")


def compile_lowered(lowered: ModuleOp, entry: str | None = None, mode: str | None = None,
                    weights: Mapping[str, float] | None = None) -> LoadedProgram:
    """A module already lowered (upstream IR, e.g. read back from `cortex-opt` output) as a runner.

    There is no cortex module to cut, so the program has no frame split."""
    options = CompileOptions(entry=resolve_entry(lowered, entry), mode=mode, weights=weights, split=False)
    table, source = options.weight_table()
    return LoadedProgram(build_program(None, lowered, table, source, options, None))


def with_derivations(lowered: ModuleOp, reports: list[ReuseReport],
                     lowering: str | Sequence[ModulePass]) -> list[tuple[str, str, str]]:
    """Lower each carried state's `derive` function into `lowered` (so into the entry executable);
    (state, source, symbol) per derived state, for `build_program`."""
    carried = [c for r in reports for c in r.carried if c.derive is not None]
    if not carried:
        return []
    derivations = lowered_copy(ModuleOp([c.derive.clone() for c in carried if c.derive is not None]), lowering)
    present = {op.sym_name.data for op in lowered.ops if isinstance(op, func.FuncOp)}
    for op in list(derivations.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data in present:
            continue  # an extern's declaration the entry already has
        derivations.body.block.detach_op(op)
        lowered.body.block.add_op(op)
    return [(c.state, c.source, c.derive.sym_name.data) for c in carried if c.derive is not None]


def build_program(optimised: ModuleOp | None, lowered: ModuleOp, table: Mapping[str, float], weight_source: str,
                  options: CompileOptions, lowering: str | Sequence[ModulePass] | None,
                  derived: list[tuple[str, str, str]] | None = None) -> Program:
    """The `Program` of `options.entry`: `lowered` (its lowering) as the "entry" executable and, when
    `options.split`, the frame split's parts and the stage split's stages of `optimised`, lowered together by
    `lowering` as the "split" executable.

    `backend="iree"`: "iree" executables (`iree_executable`); the split always runs its parallel part as
    stages (`BackendTraits.split_in_stages`), and an entry with state runs the split for every call
    (`BackendTraits.calls_split`): IREE compiles each cut into its own code, so one cut keeps every engine bit-identical.
    Its entry executable is then NumPy code (never called, kept for `compiled.source`). Unless the outlining
    cost rule left no IREE code in either (the L2 frame): then calls run the entry, as on the NumPy backend."""
    entry, backend, device = options.entry, backend_named(options.backend), options.device
    assert entry is not None, "build_program takes options with the entry resolved"
    args, results = entry_ports(find_entry(lowered, entry))
    for port in args:
        if port.kind == "weight" and port.name not in table:
            raise CortexError(f"weight '{port.name}' has no value: {weight_source}")
    weights = {p.name: float(table[p.name]) for p in args if p.kind == "weight"}
    executables: dict[str, Executable] = {}

    def executable(module: ModuleOp, label: str, target: Backend) -> Executable:
        return target.produce(module, label, device)

    entry_part = Part(
        "entry", "entry", entry,
        tuple(wire({"input": "input", "state": "state", "weight": "weight"}[p.kind], p.index if p.kind == "input" else p.name)
              for p in args),
        tuple(wire("output", p.index) if p.kind == "output" else wire("update", p.name) for p in results),
    )
    frame_split: FrameSplit | None = None
    split_error: str | None = "this pipeline was compiled with split=False: compile it with split=True to run frames in flight"
    classes = None
    if options.split and optimised is not None and lowering is not None:
        try:
            classes = classify_states(defined_function(optimised, entry, "split"))
            split_module = split_for_schedules(optimised, entry)
        except FrameSplitError as e:
            split_error = f"this pipeline cannot be frame-split: {e}"
        else:
            lowered_split = lowered_copy(split_module, lowering)
            executables["split"] = executable(lowered_split, f"@{entry} split", backend)
            frame_split = split_parts(lowered_split, entry)
            split_error = None
    has_state = any(p.kind == "state" for p in args)
    calls_split = backend.stateful_calls_split and has_state and frame_split is not None
    if calls_split and not backend.native(executables["split"]):
        entry_executable = executable(lowered, f"@{entry}", backend)
        if not backend.native(entry_executable):  # the cost rule left no native code: the NumPy backend's shape
            calls_split, executables["entry"] = False, entry_executable
    if "entry" not in executables:
        executables["entry"] = executable(lowered, f"@{entry}", HOST_BACKEND if calls_split else backend)
    if classes is None:
        states = tuple(StateInfo(p.name, "unclassified", "the frame split did not run") for p in args if p.kind == "state")
    else:
        states = tuple(StateInfo(c.name, c.kind, c.reason) for c in classes.values())
    executables = {"entry": executables.pop("entry"), **executables}
    derived_parts = []
    for state, source, symbol in derived or ():  # temporal reuse's states, each recomputed from its source on demand
        ports, _ = entry_ports(find_entry(lowered, symbol))
        keys = (wire("state", source), *(wire("weight", p.name) for p in ports[1:] if p.kind == "weight"))
        derived_parts.append(Part(f"derive {state}", "entry", symbol, keys, (wire("update", state),)))
    return Program(entry, tuple(args), tuple(results), weights, states, executables, entry_part, frame_split, split_error,
                   {}, tuple(derived_parts), backend.traits(executables["entry"], device, calls_split))


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


def reference(module: ModuleOp | str | Path, entry: str | None = None, mode: str | None = DEFAULT_MODE,
              weights: Mapping[str, Any] | None = None,
              op_timer: Callable[[Operation, float], None] | None = None,
              modes: str | Sequence[str] | None = None) -> ReferenceRunner | ModeSwitch | ShapeGenericPipeline:
    """The eager reference interpreter over `module`'s `entry` function (None: its only public function).

    `op_timer(op, seconds)`, when given, is called after each cortex op runs. An entry with `?` input
    dimensions gives a `ShapeGenericPipeline` of interpreters, one per concrete input shape. `modes`
    (as `CompileOptions.modes`, `weights` likewise) gives the call a multi-mode program has:
    `runner(frame, mode=...)`, `run_video(frames, modes=...)`, one interpreter per mode over one state.
    """
    module = parsed(module)
    entry = resolve_entry(module, entry)
    if modes is not None:
        variants = CompileOptions(entry=entry, modes=modes, weights=weights).variants()

        def per_mode(static: ModuleOp) -> ModeSwitch:
            return ModeSwitch({m: ReferenceRunner(static, entry=entry, mode=o.mode, weights=o.weights, op_timer=op_timer)
                               for m, o in variants.items()})
        if is_shape_generic(module, entry):
            return ShapeGenericPipeline(module, entry, per_mode)
        return per_mode(module)
    if is_shape_generic(module, entry):
        make = functools.partial(ReferenceRunner, entry=entry, mode=mode, weights=weights, op_timer=op_timer)
        return ShapeGenericPipeline(module, entry, make)
    return ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=op_timer)


def compile(  # noqa: A001
    module_or_path: ModuleOp | str | Path,
    options: CompileOptions | None = None,
    *,
    workers: int = OMITTED,
    profile: bool = OMITTED,
    **fields: Unpack[CompileFields],
) -> LoadedProgram | ModeSwitch | ShapeGenericPipeline:
    """Compile a module's entry to NumPy (or `backend="iree"`: native code); same call shape as `reference`.

    What to compile is `options` (a `cortex.CompileOptions`) or its fields as keywords (`entry`, `mode`,
    `weights`, `passes`, `post_passes`, `specialize`, `split`, `frame_work`, `precision`, `backend`,
    `device`: see `CompileOptions`); every option is checked before anything compiles. By default the module
    is specialised to the "balanced" mode (its weights become constants; canonicalize and dce drop the
    stages a zero weight leaves unused); `specialize=False` keeps the weights as runtime inputs (one
    artifact for every mode's weights). `cortex.compile_pipeline_text(options)` prints the passes it runs.
    The frame and stage splits are compiled here too: nothing compiles after this returns.

    How the result runs is set on it, not here: `compiled.stage_threads = N` runs a call's independent
    stages on N threads, `compiled.profiling = True` turns on `compiled.profile()` (ms per source op),
    `compiled.run_video(frames, workers=N)` keeps N frames in flight. (`workers=` and `profile=` here still
    work for one release, with a DeprecationWarning.) `compiled.save(path)` writes the program;
    `cortex.load(path)` runs it again without the compiler.
    """
    options = compile_options(options, **fields)
    settings = runtime_settings("compile", workers, profile)
    return settings(compile_checked_loaded(module_or_path, options))


def calibrate(module: ModuleOp, inputs: Iterable[Sequence[npt.ArrayLike]], entry: str | None = None) -> ModuleOp:
    """Attach each tensor's observed range (min, max, histogram) over `inputs` to its producer, in place."""
    return _calibrate(module, inputs, entry)


def quantize(module: ModuleOp, calibration: Iterable[Sequence[npt.ArrayLike]], precision: str = "int8",
             schema: str = "symmetric", granularity: str = "tensor", clip: str = "minmax",
             held_out: Iterable[Sequence[npt.ArrayLike]] | None = None,
             entry: str | None = None) -> tuple[ModuleOp, QuantReport]:
    """`(qmodule, report)`: an int8 copy of `module` calibrated on `calibration` (an iterable of input
    tuples), and the per-op error report against the float graph (on `held_out` too, when given)."""
    return quantize_with_report(module, calibration, precision, schema, granularity, clip, held_out, entry)


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


compile_pipeline = renamed_function("cortex.driver.compile_pipeline", compile_loaded)
"""Deprecated name of `compile_loaded` ("pipeline" is a pass pipeline; this compiles and loads a program)."""
run_pipeline = renamed_function("cortex.driver.run_pipeline", run_passes)
"""Deprecated name of `run_passes`."""


__all__ = [
    "CompileOptions",
    "Compilation",
    "build_pipeline",
    "build_program",
    "calibrate",
    "compile",
    "compile_loaded",
    "compile_lowered",
    "compile_pipeline_text",
    "compile_program",
    "lowered_copy",
    "emit_numpy",
    "lower",
    "quantize",
    "reference",
    "run_passes",
    "validate_pipeline",
]
