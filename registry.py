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
from xdsl.utils.arg_spec import ArgSpec
from xdsl.utils.arg_spec import parse_spec as parse_pass_spec
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


ANCHORS = ("builtin.module", "func.func", "any")
"""The ops a pipeline may anchor passes on, as MLIR writes them: `builtin.module(func.func(canonicalize))`."""

_NAME = re.compile(r"[A-Za-z0-9_.$-]+")


class _Anchors:
    """MLIR's textual pass pipeline (`builtin.module(func.func(cse),canonicalize)`), read down to its passes.

    The grammar is MLIR's: `pipeline ::= element (',' element)*`, `element ::= anchor '(' pipeline? ')'
    | pass`. Each pass (its name, `{options}`) is handed, with its offset, to xDSL's own pass-spec parser.
    Every Cortex and xDSL pass is a module pass, so a pass anchored on `func.func` runs once on the module:
    for a pass that rewrites the ops inside functions (canonicalize, cse, dce, ...) that is what MLIR's
    nested pass manager computes, function by function. `builtin.module` anchors only the outermost level,
    `func.func` goes inside it (or at the top, where the module is implied), `any` anywhere.
    """

    def __init__(self, spec: str):
        self.spec, self.pos = spec, 0
        self.passes: list[tuple[str, int]] = []  # (a pass's text, its offset in spec)

    def error(self, message: str, pos: int | None = None) -> PipelineError:
        line = self.spec.split("\n", 1)[0]
        return PipelineError(f"invalid pass pipeline: {message}", (1, (self.pos if pos is None else pos) + 1, line))

    def skip_space(self) -> None:
        while self.pos < len(self.spec) and self.spec[self.pos].isspace():
            self.pos += 1

    def pipeline(self, inside: str | None) -> None:
        self.skip_space()
        if self.pos >= len(self.spec) or (inside and self.spec[self.pos] == ")"):
            return  # an empty pipeline: `builtin.module()`, or no passes at all
        while True:
            self.element(inside)
            end = self.pos
            self.skip_space()
            if self.pos < len(self.spec) and self.spec[self.pos] == ",":
                self.pos += 1
                self.skip_space()
                continue
            if self.pos >= len(self.spec) or (inside and self.spec[self.pos] == ")"):
                return
            closing = f" or ')' closing '{inside}('" if inside else " or pass arguments"
            raise self.error(f"Expected a comma{closing} here", end)

    def element(self, inside: str | None) -> None:
        start = self.pos
        match = _NAME.match(self.spec, self.pos)
        if match is None:
            raise self.error("Expected pass name here")
        name, after = match.group(), match.end()
        rest = self.spec[after:].lstrip()
        if rest.startswith("("):
            self.anchor(name, inside)
            return
        self.pos = after
        for opener, closer in (("{", "}"), ("[", "]")):
            if self.spec.startswith(opener, self.pos):
                end = self.closing(opener, closer)
                if end is None:  # xDSL's parser says where it expected the closer
                    parse_pass_spec_at(self.spec, self.spec[start:], start)
                    raise self.error(f"'{opener}' is never closed")
                self.pos = end
        self.passes.append((self.spec[start:self.pos], start))

    def anchor(self, name: str, inside: str | None) -> None:
        start = self.pos
        allowed = {None: ANCHORS, "builtin.module": ("func.func", "any")}.get(inside, ("any",))
        if name not in allowed:
            if name not in ANCHORS:
                close = difflib.get_close_matches(name, ANCHORS, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else f" (anchors: {', '.join(ANCHORS)})"
                raise self.error(f"cannot anchor passes on '{name}'{hint}", start)
            raise self.error(f"'{name}(...)' cannot be nested in '{inside}(...)'", start)
        self.pos = self.spec.index("(", self.pos) + 1
        self.pipeline(name)
        if self.pos >= len(self.spec):
            raise self.error(f"'{name}(' is never closed", start)
        self.pos += 1  # the ')'

    def closing(self, opener: str, closer: str) -> int | None:
        """The position after the `closer` that ends the `opener` at `self.pos`, past quoted strings."""
        i, depth, quoted = self.pos, 0, False
        while i < len(self.spec):
            c = self.spec[i]
            if quoted:
                quoted = c != '"' or self.spec[i - 1] == "\\"
            elif c == '"':
                quoted = True
            elif c == opener:
                depth += 1
            elif c == closer:
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        return None


def pipeline_passes(spec: str) -> list[tuple[str, int]]:
    """The passes of a (possibly anchored) pipeline, each as (its text, its offset in `spec`)."""
    reader = _Anchors(spec)
    reader.pipeline(None)
    return reader.passes


def unanchored(pipeline: str) -> str:
    """A pipeline with MLIR's anchors (`builtin.module(func.func(canonicalize),cse)`) as the plain list of its
    passes (`canonicalize,cse`); a PipelineError if the anchors are wrong."""
    return ",".join(text for text, _ in pipeline_passes(pipeline))


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


def _syntax_error(e: ArgSpecParseError, spec: str, offset: int = 0) -> PipelineError:
    """ArgSpecParseError keeps only a rendered string: read `pass-pipeline:L:C` and the message back (the column
    in `spec`, where the pass xDSL parsed starts at `offset`)."""
    lines = str(e).splitlines()
    where = next((i for i, line in enumerate(lines) if re.fullmatch(r"pass-pipeline:\d+:\d+", line)), None)
    if where is None or len(lines) < where + 4:
        return PipelineError(f"invalid pass pipeline '{spec}': {lines[-1].strip() if lines else e}")
    _, line, col = lines[where].split(":")
    if int(line) == 1 and "\n" not in spec:  # the column in the whole pipeline, under its own text
        return PipelineError(f"invalid pass pipeline: {lines[where + 3].strip()}", (1, int(col) + offset, spec))
    return PipelineError(f"invalid pass pipeline: {lines[where + 3].strip()}", (int(line), int(col), lines[where + 1]))


def parse_pass_spec_at(spec: str, text: str, offset: int) -> ArgSpec:
    """xDSL's parse of one pass (`name{options}`) found at `offset` in the pipeline `spec`."""
    try:
        return parse_pass_spec(text)
    except ArgSpecParseError as e:  # a BaseException in xDSL 0.74
        raise _syntax_error(e, spec, offset) from None


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
    specs = [parse_pass_spec_at(spec, text, offset) for text, offset in pipeline_passes(spec)]
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
            close = difflib.get_close_matches(unknown[0], [k.replace("_", "-") for k in known], n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise PipelineError(f"pass '{name}' has no option '{unknown[0]}'{hint}; {describe_options(cls)}")
        try:
            passes.append(cls.from_pass_spec(pass_spec))
        except (ValueError, TypeError) as e:
            raise PipelineError(f"invalid options for pass '{name}': {e}; {describe_options(cls)}") from None
    return tuple(passes)
