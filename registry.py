"""Every cortex pass and target, by the name pipelines use, and the one pipeline parser.

`cortex-opt`, the `xdsl.universe` entry point (plain `xdsl-opt`) and the
Python API all read these tables. Entries are (module, class) pairs,
imported when a pipeline first names them. `parse_pipeline` turns a
`-p` string into pass instances for every caller (`cortex-opt`,
`cortex-run`, `cortex.run_passes`, `cortex.compile`, `validate_pipeline`),
with one set of diagnostics: the position of a syntax error, "did you
mean" for a misspelt pass, the options a pass takes when one is wrong.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass, get_pass_option_infos
from xdsl.utils.arg_spec import parse_pipeline as parse_pipeline_spec
from xdsl.utils.exceptions import ArgSpecParseError
from xdsl.utils.target import Target

from cortex.backends.backend import BACKENDS
from cortex.errors import CortexError

PASS_LOCATIONS: dict[str, tuple[str, str]] = {
    # graph passes
    "cortex-canonicalize": ("cortex.passes.canonicalize", "CortexCanonicalizePass"),
    "cortex-specialize-mode": ("cortex.passes.specialize_mode", "SpecializeModePass"),
    "cortex-specialize-weights": ("cortex.passes.specialize_mode", "SpecializeWeightsPass"),
    "cortex-dce": ("cortex.passes.dce", "CortexDCEPass"),
    "cortex-drop-unread-states": ("cortex.passes.mode_states", "DropUnreadStatesPass"),
    "cortex-mode-states": ("cortex.passes.mode_states", "ModeStatesPass"),
    "cortex-shape-inference": ("cortex.passes.shape_inference", "ShapeInferencePass"),
    "cortex-specialize-shapes": ("cortex.passes.specialize_shapes", "SpecializeShapesPass"),
    "cortex-partition": ("cortex.passes.partition", "PartitionPass"),
    "cortex-profile": ("cortex.passes.profile", "ProfilePass"),
    "cortex-fuse-batch-norm": ("cortex.passes.fuse_batch_norm", "FuseBatchNormPass"),
    "cortex-recognize-gelu": ("cortex.passes.recognize_gelu", "RecognizeGeluPass"),
    # scheduling
    "cortex-schedule": ("cortex.passes.schedule", "SchedulePass"),
    "cortex-frame-split": ("cortex.passes.frame_split", "FrameSplitPass"),
    "cortex-stage-split": ("cortex.passes.stage_split", "StageSplitPass"),
    "cortex-expose-blur-gate": ("cortex.passes.expose_gate", "ExposeBlurGatePass"),
    "cortex-expose-scene-change": ("cortex.passes.expose_scene_change", "ExposeSceneChangePass"),
    "cortex-pad-frames": ("cortex.passes.pad_frames", "PadFramesPass"),
    # the frame's own work
    "cortex-decompose-scene-change": ("cortex.passes.decompose_scene_change", "DecomposeSceneChangePass"),
    "cortex-temporal-reuse": ("cortex.passes.temporal_reuse", "TemporalReusePass"),
    "cortex-stack-stencils": ("cortex.passes.stack_stencils", "StackStencilsPass"),
    # quantisation
    "cortex-calibrate": ("cortex.passes.calibrate", "CalibratePass"),
    "cortex-quantize": ("cortex.passes.quantize", "QuantizePass"),
    "cortex-convert-layout": ("cortex.passes.convert_layout", "ConvertLayoutPass"),
    # lowering
    "convert-cortex-to-linalg": ("cortex.lowering.cortex_to_linalg", "ConvertCortexToLinalgPass"),
    "convert-cortex-to-extern": ("cortex.lowering.cortex_to_extern", "ConvertCortexToExternPass"),
    "convert-cortex-frame-boundary": ("cortex.lowering.frame_boundary", "ConvertFrameBoundaryPass"),
    "cortex-fuse-linalg-elementwise": ("cortex.linalg_opt.fuse_elementwise", "FuseElementwisePass"),
    "cortex-conv-im2col": ("cortex.linalg_opt.conv_im2col", "ConvIm2colPass"),
    "cortex-unroll-pooling": ("cortex.linalg_opt.unroll_pooling", "UnrollPoolingPass"),
    "cortex-fold-constant-layouts": ("cortex.linalg_opt.fold_constant_layouts", "FoldConstantLayoutsPass"),
    # each backend's own passes, named by its record (`Backend.passes`: IREE's legalisation)
    **{name: (module, cls) for b in BACKENDS.values() for name, module, cls in b.passes},
}

TARGET_LOCATIONS: dict[str, tuple[str, str]] = {name: b.target for name, b in BACKENDS.items() if b.target}
"""`cortex-opt -t <name>`: each backend's textual form, as its record names it (`cortex.backends.backend`)."""


_MODULE_ANCHOR = re.compile(r"\s*builtin\.module\s*\((?P<inner>.*)\)\s*", re.S)


def unanchored(pipeline: str) -> str:
    """MLIR's anchored form `builtin.module(canonicalize,cse)` as the plain list `canonicalize,cse`.

    Every pass here runs on the whole module, so the anchor says nothing more; mlir-opt users type
    it by habit (`--pass-pipeline='builtin.module(...)'`). Nested anchors (`func.func(...)`) are
    left for the pipeline parser to reject, naming them.
    """
    match = _MODULE_ANCHOR.fullmatch(pipeline)
    return match["inner"].strip() if match else pipeline


def _loader(module: str, name: str) -> Callable[[], type]:
    return lambda: getattr(import_module(module), name)


def _loaders(table: dict[str, tuple[str, str]]) -> dict[str, Callable[[], type]]:
    return {key: _loader(module, name) for key, (module, name) in table.items()}


def cortex_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return _loaders(PASS_LOCATIONS)


def cortex_targets() -> dict[str, Callable[[], type[Target]]]:
    return _loaders(TARGET_LOCATIONS)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes (canonicalize, cse, dce, ...) and cortex's."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **cortex_passes()}


# ---------------------------------------------------------------- the pipeline parser


class PipelineError(CortexError):
    """What is wrong with a pass pipeline. `at`: (line, column, the pipeline's line) of a syntax error;
    `internal`: a pass that exists but cannot be loaded (a bug, not the pipeline's fault)."""

    def __init__(self, message: str, at: tuple[int, int, str] | None = None, internal: bool = False):
        super().__init__(message)
        self.message, self.at, self.internal = message, at, internal


def _syntax_error(e: ArgSpecParseError, spec: str) -> PipelineError:
    """ArgSpecParseError keeps only a rendered string: read `pass-pipeline:L:C`, the line and the message back."""
    lines = str(e).splitlines()
    where = next((i for i, line in enumerate(lines) if re.fullmatch(r"pass-pipeline:\d+:\d+", line)), None)
    if where is None or len(lines) < where + 4:
        return PipelineError(f"invalid pass pipeline '{spec}': {lines[-1].strip() if lines else e}")
    _, line, col = lines[where].split(":")
    return PipelineError(f"invalid pass pipeline: {lines[where + 3].strip()}", (int(line), int(col), lines[where + 1]))


def describe_options(cls: type[ModulePass]) -> str:
    """`its options are terms: int|None = 4, ...` (or that it takes none), for a message about a pass."""
    infos = get_pass_option_infos(cls)
    if not infos:
        return "it takes no options"
    return "its options are " + ", ".join(
        f"{info.name.replace('_', '-')}: {info.expected_type.strip(chr(39))}"
        + (f" = {info.default_value}" if info.default_value is not None else "")
        for info in infos
    )


def parse_pipeline(spec: str, available: dict[str, Callable[[], type[ModulePass]]] | None = None) -> tuple[ModulePass, ...]:
    """The pipeline `spec` ("canonicalize,cortex-specialize-mode{mode=motion},dce") as pass instances,
    or a PipelineError naming what is wrong. `available`: the passes by name (default: `all_passes()`)."""
    if not isinstance(spec, str):
        raise PipelineError(f"a pass pipeline is a string like 'canonicalize,cse', got {type(spec).__name__}")
    available = all_passes() if available is None else available
    try:
        specs = list(parse_pipeline_spec(unanchored(spec)))
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        raise _syntax_error(e, spec) from None
    passes: list[ModulePass] = []
    for pass_spec in specs:
        name = pass_spec.name
        if name not in available:
            close = difflib.get_close_matches(name, list(available), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else " (cortex-opt --list-passes lists them)"
            raise PipelineError(f"unknown pass '{name}'{hint}")
        try:
            cls = available[name]()
        except Exception as e:
            raise PipelineError(f"cannot load pass '{name}': {type(e).__name__}: {e}", internal=True) from e
        known = {f.name for f in dataclasses.fields(cls) if f.init and f.name != "name"}
        given = pass_spec.normalize_parameter_names().parameters
        unknown = [k.replace("_", "-") for k in given if k not in known]
        if unknown:
            raise PipelineError(f"pass '{name}' has no option '{unknown[0]}'; {describe_options(cls)}")
        try:
            passes.append(cls.from_pass_spec(pass_spec))
        except (ValueError, TypeError) as e:
            raise PipelineError(f"invalid options for pass '{name}': {e}; {describe_options(cls)}") from None
    return tuple(passes)
