"""The options of one compile, in one object (as IREE's compiler options and `torch.compile`'s are).

`CompileOptions` is the single list of what decides the program a compile makes: the API
(`cortex.compile(module, options)` or the same names as keywords), `cortex-run` and the benchmarks all
build one. It checks every option when it is made, before any IR is touched, so a mistake is reported at
once for a static module and a shape-generic one alike (a shape-generic compile otherwise runs only on its
first frame). What a run does with the program — how many workers, whether to profile, which engine —
is not here: those are the runtime's (`CompiledPipeline(workers=, profile=)`, `run_video(workers=,
engine=)`).

`compile_pipeline_text(options)` is the pass pipeline the compile runs, in `cortex-opt -p` syntax: the
printable statement of what `cortex.compile` does (docs/compile-flow.md prints it for three option sets).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:  # typing.Unpack is 3.11+; the project runs on 3.10 too
    from typing_extensions import Unpack

import numpy as np

from cortex.backends.backend import backend_named
from cortex.dialects.modes import DEFAULT_MODE, INPUT_DEFAULTS
from cortex.errors import CortexError
from cortex.interpreter.calling import weights_for_call
from cortex.lowering import POST_LOWERING_PASSES
from cortex.passes.decompose_scene_change import PRECISIONS
from cortex.passes.specialize_mode import weight_values_text
from cortex.registry import parse_pipeline


@dataclass(frozen=True)
class CompileOptions:
    """What a compile makes of a module; checked when made (a CortexError names the first bad option).

    - `entry`: the function to compile; None (the default) is the module's only public function.
    - `mode`, `weights`: the weights baked in as constants (`specialize=True`) or bound at each call; a mode
      of the built-in table, then `weights` overriding it. `mode=None` with no weights: the module must
      read no weight.
    - `passes`: a `cortex-opt -p` pipeline run on the cortex module before lowering; `post_passes` on the
      lowered module ("default": elementwise fusion, `cortex.lowering.POST_LOWERING_PASSES`; None: none).
    - `specialize`: the weights become constants and the stages a zero weight leaves unused are dropped.
    - `split`: also compile the frame and stage splits (what `run_video` and `workers > 1` run).
    - `frame_work`: decompose scene change and carry what the next frame can reuse (temporal reuse).
    - `precision`: the float type scene change is computed in ("f64" keeps every bit; "f32" is faster);
      None: "f64", or "f32" under a `fast-math=true` pass option.
    - `backend`, `device`: "numpy" (CPU), or "iree" for "cpu" or "cuda".
    """

    entry: str | None = None
    mode: str | None = DEFAULT_MODE
    weights: Mapping[str, float] | None = None
    passes: str | None = None
    post_passes: str | None = "default"
    specialize: bool = True
    split: bool = True
    frame_work: bool = True
    precision: str | None = None
    backend: str = "numpy"
    device: str = "cpu"

    def __post_init__(self) -> None:
        if self.entry is not None and (not isinstance(self.entry, str) or not self.entry):
            raise CortexError(f"entry must be a function name, got {self.entry!r:.60}")
        for name in ("specialize", "split", "frame_work"):
            value = getattr(self, name)
            if not isinstance(value, (bool, np.bool_)):
                raise CortexError(f"{name} must be True or False, got {value!r:.60}")
        if self.mode is not None and not isinstance(self.mode, str):
            raise CortexError(f"mode must be a mode name or None, got {self.mode!r:.60}")
        weights_for_call(self.mode, self.weights)  # an unknown mode, weights that are not finite numbers
        if self.weights is not None:  # a copy: the caller's dict may change after this check
            object.__setattr__(self, "weights", dict(self.weights))
        for name in ("passes", "post_passes"):
            spec = getattr(self, name)
            if spec is None or spec == "" or (name == "post_passes" and spec == "default"):
                continue
            if not isinstance(spec, str):
                raise CortexError(f"{name} must be a pipeline string like 'canonicalize,cse', got {type(spec).__name__}")
            try:
                parse_pipeline(spec)
            except CortexError as e:
                raise CortexError(f"{name}: {e}") from None
        scene_precision(self.precision, self.passes)
        if scene_precision(self.precision, None) != "f64" and self.frame_work is False:
            raise CortexError(f"precision={self.precision!r} needs frame_work=True (the default): without it scene "
                              "change is the float64 kernel")
        check_backend_choice(self.backend, self.device)

    def replace(self, **changes: Unpack[CompileFields]) -> CompileOptions:
        """A copy with `changes` (checked again)."""
        return dataclasses.replace(self, **changes)

    @property
    def lowered_passes(self) -> str | None:
        """The post-lowering pipeline itself ("default" resolved)."""
        return POST_LOWERING_PASSES if self.post_passes == "default" else (self.post_passes or None)

    def weight_table(self) -> tuple[dict[str, float], str]:
        """The weights a call binds (runtime inputs' defaults, the mode's row, `weights`), and where they were
        looked for (for the message about a missing one)."""
        return weights_for_call(self.mode, self.weights)

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
    precision: str | None
    backend: str
    device: str


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


def scene_precision(precision: str | None, passes: str | None) -> str:
    """The float type scene change is computed in: `precision` when given, else "f32" only under
    the fast-math gate (a `fast-math=true` pass option in `passes`), else "f64"."""
    if precision is None:
        return "f32" if passes and "fast-math=true" in passes.replace(" ", "") else "f64"
    if not isinstance(precision, str) or precision not in PRECISIONS:
        raise CortexError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r:.60}")
    return precision


def check_backend_choice(backend: str, device: str) -> None:
    """A CortexError for a backend or device no compile knows (before anything is compiled)."""
    backend_named(backend).check_device(device)


def compile_phases(options: CompileOptions, table: Mapping[str, float] | None = None) -> tuple[str, str]:
    """The passes `cortex.compile` runs for `options`, as two `cortex-opt -p` pipelines: on the cortex module
    (the backend's legalisation — e.g. IREE's channels-last convolutions —, the weights baked in, the user's
    `passes`, the frame's own work) and from it to the lowered module (the
    lowering, the post-lowering passes). `table`: the weights to bake, when already looked up. Between the
    two the program builder keeps the optimised module: the frame and stage splits are cut from it."""
    optimise: list[str] = list(filter(None, [backend_named(options.backend).legalisation()]))
    if options.specializes():
        table = options.weight_table()[0] if table is None else table
        baked = weight_values_text({k: v for k, v in table.items() if k not in INPUT_DEFAULTS})
        optimise += [f'cortex-specialize-weights{{weights="{baked}"}}', "canonicalize", "dce"]
    if options.passes:
        optimise.append(options.passes)
    if options.frame_work:
        optimise += [f"cortex-decompose-scene-change{{precision={scene_precision(options.precision, options.passes)}}}",
                     "cortex-temporal-reuse{report=false}"]
    lowering = ["convert-cortex-to-linalg", "convert-cortex-to-extern"]
    if options.lowered_passes:
        lowering.append(options.lowered_passes)
    return ",".join(optimise), ",".join(lowering)


def compile_pipeline_text(options: CompileOptions) -> str:
    """`compile_phases` as the one pipeline `cortex.compile` runs for `options`, printable and runnable
    with `cortex-opt -p`."""
    return ",".join(filter(None, compile_phases(options)))


__all__ = [
    "COMPILE_OPTION_NAMES",
    "CompileOptions",
    "check_backend_choice",
    "compile_options",
    "compile_phases",
    "compile_pipeline_text",
    "scene_precision",
]
