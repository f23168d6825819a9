"""The options of one compile, in one object (as IREE's compiler options and `torch.compile`'s are).

`CompileOptions` is the single list of what decides the program a compile makes: the API
(`cortex.compile(module, options)` or the same names as keywords), `cortex-run` and the benchmarks all
build one. It checks every option when it is made, before any IR is touched, so a mistake is reported at
once for a static module and a shape-generic one alike (a shape-generic compile otherwise runs only on its
first frame). What a run does with the program — its stage threads, frames in flight, profiling, engine —
is not here: those are the runtime's (`compiled.stage_threads`, `compiled.profiling`, `run_video(workers=,
engine=)`).

`compile_pipeline_text(options)` is the pass pipeline the compile runs, in `cortex-opt -p` syntax: the
printable statement of what `cortex.compile` does (docs/compile-flow.md prints it for three option sets).
"""

from __future__ import annotations

import copy as _copy
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypedDict

if TYPE_CHECKING:  # typing.Unpack is 3.11+; the project runs on 3.10 too
    from typing_extensions import Unpack

import numpy as np
from xdsl.passes import ModulePass

from cortex.backends.backend import backend_named, check_device
from cortex.errors import CortexError
from cortex.passes.specialize_mode import weight_values_text
from cortex.registry import parse_pipeline
from cortex.semantics.defaults import SCENE_PRECISIONS
from cortex.semantics.modes import DEFAULT_MODE, INPUT_DEFAULTS, MODES, weights_for_call

Precision = Literal["f32", "f64"]
"""The float types scene change can be computed in (`cortex.semantics.defaults.SCENE_PRECISIONS`)."""


@dataclass(frozen=True)
class CompileOptions:
    """What a compile makes of a module; checked when made (a CortexError names the first bad option).

    - `entry`: the function to compile; None (the default) is the module's only public function.
    - `mode`, `weights`: the weights baked in as constants (`specialize=True`) or bound at each call; a mode
      of the built-in table, then `weights` overriding it. `mode=None` with no weights: the module must
      read no weight.
    - `passes`: a `cortex-opt -p` pipeline run on the cortex module before lowering; `post_passes` on the
      lowered module ("default": the backend's `post_lowering` passes, elementwise fusion for both; None: none).
    - `specialize`: the weights become constants and the stages a zero weight leaves unused are dropped.
    - `split`: also compile the frame and stage splits (what `run_video` and `workers > 1` run).
    - `frame_work`: decompose scene change and carry what the next frame can reuse (temporal reuse).
    - `precision`: the float type scene change is computed in ("f64" keeps every bit; "f32" is faster);
      None: "f64", or "f32" under a `fast-math=true` pass option.
    - `backend`, `device`: "numpy" (CPU), or "iree" for "cpu" or "cuda".
    - `modes`: one program for several request types: "all" (every row of the mode table) or a sequence of
      mode names; one specialised variant per mode (each with its own DCE), picked per call
      (`compiled(frame, mode=...)`, the first by default). `weights` is then either one row applied to
      every mode or `{mode: {weight: value}}` (a mode the table does not have needs its whole row there);
      `mode` is not used. See `cortex.passes.mode_states` for what the variants do with shared state.
    """

    entry: str | None = None
    mode: str | None = DEFAULT_MODE
    weights: Mapping[str, float] | None = None
    passes: str | None = None
    post_passes: str | None = "default"
    specialize: bool = True
    split: bool = True
    frame_work: bool = True
    precision: Precision | None = None
    backend: str = "numpy"
    device: str = "cpu"
    modes: str | Sequence[str] | None = None

    if TYPE_CHECKING:  # set on each object by `_check` (not fields): what the checked options resolve to
        _table: ClassVar[tuple[dict[str, float], str] | None]
        _parsed: ClassVar[dict[str, tuple[ModulePass, ...]]]
        _precision: ClassVar[Precision]
        _variants: ClassVar[dict[str, CompileOptions]]

    def __post_init__(self) -> None:
        self._check()

    def _check(self, parsed_before: Mapping[str, tuple[str, tuple[ModulePass, ...]]] | None = None) -> None:
        """Every option checked, once per made object, into plain values the compile reads: the weight table
        (`weight_table`), the parsed pipelines (`pass_list`), the scene-change precision (`scene_precision`).
        `with_entry` and `variants` derive copies from these without checking again; `replace` hands over
        the pipelines it already parsed (`parsed_before`: name → (text, passes)), which are not parsed again."""
        if self.entry is not None and (not isinstance(self.entry, str) or not self.entry):
            raise CortexError(f"entry must be a function name, got {self.entry!r:.60}")
        for name in ("specialize", "split", "frame_work"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise CortexError(f"{name} must be True or False, got {value!r:.60}")
        if self.mode is not None and not isinstance(self.mode, str):
            raise CortexError(f"mode must be a mode name or None, got {self.mode!r:.60}")
        if self.modes is not None:
            self._check_modes()
            object.__setattr__(self, "_table", None)
        else:
            # an unknown mode, weights that are not finite numbers
            object.__setattr__(self, "_table", weights_for_call(self.mode, self.weights))
            if self.weights is not None:  # a copy: the caller's dict may change after this check
                object.__setattr__(self, "weights", dict(self.weights))
        parsed: dict[str, tuple[ModulePass, ...]] = {}
        for name in ("passes", "post_passes"):
            spec = getattr(self, name)
            if spec is None or spec == "" or (name == "post_passes" and spec == "default"):
                continue
            if not isinstance(spec, str):
                raise CortexError(f"{name} must be a pipeline string like 'canonicalize,cse', got {type(spec).__name__}")
            before = (parsed_before or {}).get(name)
            if before is not None and before[0] == spec:
                parsed[name] = before[1]
                continue
            try:
                parsed[name] = parse_pipeline(spec)
            except CortexError as e:
                raise CortexError(f"{name}: {e}") from None
        object.__setattr__(self, "_parsed", parsed)
        object.__setattr__(self, "_precision", scene_precision(self.precision, parsed.get("passes", ())))
        if scene_precision(self.precision, ()) != "f64" and self.frame_work is False:
            raise CortexError(f"precision={self.precision!r} needs frame_work=True (the default): without it scene "
                              "change is the float64 kernel")
        check_backend_choice(self.backend, self.device)
        # each mode's row checked (an unknown mode, a weight that is not a number), last: a variant copies the rest
        object.__setattr__(self, "_variants", {} if self.modes is None else self._make_variants())

    def _derived(self, **changes: Any) -> CompileOptions:
        """A copy with `changes` that are already checked (no second `_check`)."""
        copy = _copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(copy, name, value)
        return copy

    def with_entry(self, entry: str) -> CompileOptions:
        """A copy whose `entry` is the resolved function name (the other options are not checked again)."""
        if not isinstance(entry, str) or not entry:
            raise CortexError(f"entry must be a function name, got {entry!r:.60}")
        derived = self._derived(entry=entry)
        if self.modes is not None:
            object.__setattr__(derived, "_variants", {m: v._derived(entry=entry) for m, v in self.variants().items()})
        return derived

    def _check_modes(self) -> None:
        modes = self.modes
        if isinstance(modes, str):
            if modes != "all":
                raise CortexError(f"modes must be 'all' or a sequence of mode names, got {modes!r:.60}")
            modes = tuple(MODES)
        elif isinstance(modes, Sequence) and all(isinstance(m, str) and m for m in modes):
            modes = tuple(modes)
        else:
            raise CortexError(f"modes must be 'all' or a sequence of mode names, got {modes!r:.60}")
        if not modes:
            raise CortexError("modes names no mode (give 'all' or at least one mode name)")
        twice = sorted({m for m in modes if modes.count(m) > 1})
        if twice:
            raise CortexError(f"modes names {', '.join(repr(m) for m in twice)} twice")
        if not self.specialize:
            raise CortexError("modes= compiles one specialised variant per mode: it needs specialize=True "
                              "(specialize=False already takes any mode's weights at each call)")
        weights: Any = self.weights  # one row {weight: value}, or a row per mode {mode: {weight: value}}
        if weights is not None and not isinstance(weights, Mapping):
            raise CortexError(f"weights must be a mapping of weight name to number, got {type(weights).__name__}")
        if weights is not None and any(isinstance(v, Mapping) for v in weights.values()):
            extra = sorted(set(weights) - set(modes))
            if extra or not all(isinstance(v, Mapping) for v in weights.values()):
                raise CortexError("weights per mode map each compiled mode to a row {weight: value}"
                                  + (f"; {', '.join(map(repr, extra))} is not in modes" if extra else ""))
            object.__setattr__(self, "weights", {m: dict(r) for m, r in weights.items()})
        elif weights is not None:
            object.__setattr__(self, "weights", dict(weights))
        object.__setattr__(self, "modes", modes)

    def variants(self) -> dict[str, CompileOptions]:
        """One single-mode `CompileOptions` per mode of `modes`, in order ({} without `modes`); made (and each
        mode's row checked) with the options, not again."""
        if self.modes is None:
            return {}
        return dict(self._variants)

    def _make_variants(self) -> dict[str, CompileOptions]:
        out: dict[str, CompileOptions] = {}
        weights: Any = self.weights or {}
        per_mode = any(isinstance(v, Mapping) for v in weights.values())
        assert self.modes is not None
        for m in self.modes:
            row = weights.get(m) if per_mode else self.weights
            if m not in MODES and not row:
                raise CortexError(f"unknown mode '{m}' (known: {', '.join(sorted(MODES))}; a mode of your own "
                                  f"needs its row in weights={{'{m}': {{...}}}})")
            mode = m if m in MODES else None
            row = None if row is None else dict(row)
            out[m] = self._derived(modes=None, mode=mode, weights=row, _table=weights_for_call(mode, row),
                                   _variants={})
        return out

    def replace(self, **changes: Unpack[CompileFields]) -> CompileOptions:
        """A copy with `changes` (a new object: checked again, its unchanged pipelines not parsed again)."""
        unknown = sorted(set(changes) - set(COMPILE_OPTION_NAMES))
        if unknown:
            raise TypeError(f"CompileOptions.replace() got an unexpected keyword argument {unknown[0]!r}")
        copy = _copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(copy, name, value)
        copy._check({name: (getattr(self, name), passes) for name, passes in self._parsed.items()})
        return copy

    @property
    def lowered_passes(self) -> str | None:
        """The post-lowering pipeline itself ("default" resolved)."""
        return backend_named(self.backend).post_lowering if self.post_passes == "default" else (self.post_passes or None)

    def weight_table(self) -> tuple[dict[str, float], str]:
        """The weights a call binds (runtime inputs' defaults, the mode's row, `weights`), and where they were
        looked for (for the message about a missing one)."""
        assert self._table is not None, "a multi-mode options' tables are its variants'"
        table, source = self._table
        return dict(table), source

    @property
    def scene_precision(self) -> Precision:
        """The float type scene change is computed in (`precision`, or the fast-math gate of `passes`)."""
        return self._precision

    def pass_list(self, name: str) -> tuple[ModulePass, ...]:
        """The passes of the pipeline option `name` ("passes" or "post_passes"; "default" not resolved),
        parsed when the options were made."""
        return self._parsed.get(name, ())

    def specializes(self) -> bool:
        """Whether the compile bakes weights in (`specialize` and something to bake)."""
        return bool(self.specialize and (self.mode is not None or self.weights))


class CompileFields(TypedDict, total=False):
    """`CompileOptions`' fields as keywords (`cortex.compile(module, mode=None, ...)`): a type checker then
    flags a misspelt option or a wrong value type before the call's own check does."""

    entry: str | None
    mode: str | None
    weights: Mapping[str, float] | None
    passes: str | None
    post_passes: str | None
    specialize: bool
    split: bool
    frame_work: bool
    precision: Precision | None
    backend: str
    device: str
    modes: str | Sequence[str] | None


COMPILE_OPTION_NAMES = tuple(f.name for f in dataclasses.fields(CompileOptions))
"""The keyword names `cortex.compile` forwards into `CompileOptions` (every other keyword is the runtime's)."""


def compile_options(options: CompileOptions | None = None, **fields: Unpack[CompileFields]) -> CompileOptions:
    """`options` with `fields` replaced, or `CompileOptions(**fields)`: what every entry point calls, so an
    unknown keyword is one message naming the options there are."""
    unknown = sorted(set(fields) - set(COMPILE_OPTION_NAMES))
    if unknown:
        raise CortexError(f"unknown compile option{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} "
                          f"(options: {', '.join(COMPILE_OPTION_NAMES)})")
    if options is None:
        return CompileOptions(**fields)
    if not isinstance(options, CompileOptions):
        raise CortexError(f"options must be a cortex.CompileOptions, got {type(options).__name__}")
    return options.replace(**fields) if fields else options


def scene_precision(precision: str | None, passes: Sequence[ModulePass]) -> Precision:
    """The float type scene change is computed in: `precision` when given, else "f32" only under
    the fast-math gate (a pass of `passes` run with its `fast_math` option on), else "f64"."""
    if precision is None:
        return "f32" if any(getattr(p, "fast_math", False) is True for p in passes) else "f64"
    if not isinstance(precision, str) or precision not in SCENE_PRECISIONS:
        raise CortexError(f"precision must be one of {', '.join(SCENE_PRECISIONS)}, got {precision!r:.60}")
    return "f32" if precision == "f32" else "f64"


def check_backend_choice(backend: str, device: str) -> None:
    """A CortexError for a backend or device no compile knows (before anything is compiled)."""
    check_device(backend, device)


Step = tuple[str, "tuple[ModulePass, ...] | None"]
"""One step of a phase: its `cortex-opt -p` text, and its passes when already parsed (a user's pipeline)."""


@dataclass(frozen=True)
class Phase:
    """One half of a compile's passes, as steps: the user's pipelines as parsed when the options were checked,
    the generated ones as text, parsed when the phase runs (`passes`)."""

    steps: tuple[Step, ...]

    @property
    def text(self) -> str:
        """The phase as one `cortex-opt -p` pipeline."""
        return ",".join(text for text, _ in self.steps)

    def passes(self) -> tuple[ModulePass, ...]:
        """The pass instances, in order (the generated steps parsed together, the user's reused)."""
        out: list[ModulePass] = []
        pending: list[str] = []
        for text, parsed in (*self.steps, ("", ())):
            if parsed is None:
                pending.append(text)
                continue
            if pending:
                out += parse_pipeline(",".join(pending))
                pending = []
            out += parsed
        return tuple(out)


def compile_plan(options: CompileOptions, table: Mapping[str, float] | None = None,
                 states: tuple[Sequence[str], Sequence[str]] | None = None) -> tuple[Phase, Phase]:
    """`compile_phases` as `Phase`s: the text and the passes themselves, what the driver runs."""
    optimise: list[Step] = [
        (text, None) for text in filter(None, [backend_named(options.backend).legalisation()])]
    if options.specializes():
        table = options.weight_table()[0] if table is None else table
        baked = weight_values_text({k: v for k, v in table.items() if k not in INPUT_DEFAULTS})
        optimise += [(f'cortex-specialize-weights{{weights="{baked}"}}', None), ("canonicalize", None), ("dce", None)]
        if states is not None and states[0]:
            names, keep = (",".join(sorted(group)) for group in states)
            optimise.append((f'cortex-drop-unread-states{{states="{names}"' + (f' keep="{keep}"}}' if keep else "}"),
                             None))
    if options.passes:
        optimise.append((options.passes, options.pass_list("passes")))
    if options.frame_work:
        optimise += [(f"cortex-decompose-scene-change{{precision={options.scene_precision}}}", None),
                     ("cortex-temporal-reuse{report=false}", None)]
    lowering: list[Step] = [
        ("convert-cortex-to-linalg", None), ("convert-cortex-to-extern", None)]
    if options.post_passes == "default":
        lowering += [(options.lowered_passes, None)] if options.lowered_passes else []
    elif options.post_passes:
        lowering.append((options.post_passes, options.pass_list("post_passes")))
    return Phase(tuple(optimise)), Phase(tuple(lowering))


def compile_phases(options: CompileOptions, table: Mapping[str, float] | None = None,
                   states: tuple[Sequence[str], Sequence[str]] | None = None) -> tuple[str, str]:
    """The passes `cortex.compile` runs for `options`, as two `cortex-opt -p` pipelines: on the cortex module
    (the backend's legalisation — e.g. IREE's channels-last convolutions —, the weights baked in, the user's
    `passes`, the frame's own work) and from it to the lowered module (the
    lowering, the post-lowering passes). `table`: the weights to bake, when already looked up. Between the
    two the program builder keeps the optimised module: the frame and stage splits are cut from it.
    `states`: (the states the module's outputs depend on, those to keep updating whatever the mode):
    the specialised module then drops the updates of the first that no output depends on any more
    (`cortex-drop-unread-states`; the driver knows them from the module)."""
    optimise, lowering = compile_plan(options, table, states)
    return optimise.text, lowering.text


def compile_pipeline_text(options: CompileOptions) -> str:
    """`compile_phases` as the one pipeline `cortex.compile` runs for `options`, printable and runnable
    with `cortex-opt -p`."""
    return ",".join(filter(None, compile_phases(options)))


__all__ = [
    "COMPILE_OPTION_NAMES",
    "CompileOptions",
    "Precision",
    "check_backend_choice",
    "compile_options",
    "Phase",
    "compile_phases",
    "compile_plan",
    "compile_pipeline_text",
    "scene_precision",
]
