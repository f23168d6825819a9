"""The lowered-module ABI: what the lowering writes and the backends, runtime and graph view read.

The attribute names live here once; so do the encoding of an extern's
properties and the description of the entry function's ports. The names are
discardable attributes of the `cortex` namespace (MLIR gives a dialect its
prefixed attributes), which is why this module sits with the dialect: the
passes that read lowered modules (partition, graph view) are below the
lowering in the package's levels.

Dialects. `func`, `arith`, `math`, `tensor`, `linalg`, `scf` on tensors,
plus `func.call`s to extern declarations. Shapes are static (run
`cortex-shape-inference` first; a dynamic shape is an error), except the
encoder's `tensor<?xi8>` result. Used ops:

- `arith.constant` (scalars and `dense<...>` tensors), scalar `arith`/`math`
  ops outside and inside linalg bodies (`addf subf mulf divf negf maximumf
  cmpf select uitofp`, `math.exp log sqrt absf tanh erf powf`);
- `tensor.empty`, `tensor.expand_shape`, `tensor.collapse_shape`,
  `tensor.insert_slice` (constant padding: fill, then insert);
- `linalg.fill`, `linalg.generic`, `linalg.matmul` (default maps only),
  `linalg.reduce` (add or maximumf), `linalg.transpose`, `linalg.broadcast`,
  `linalg.conv_2d_nchw_fchw`. Upstream's `batch_matmul`, `pooling_nchw_sum`
  and `pooling_nchw_max` are written as `linalg.generic` (xDSL 0.74 lacks
  the first two and builds the third with a wrong body). Generic indexing maps may hold the constant
  0 (a broadcast size-1 dim) and `d0 * s + d1` (strided windows); a scalar
  (non-tensor) input has the map `(...) -> ()`.

Provenance. Every op the lowering inserts at function level carries the
discardable attribute `cortex.origin = "<name>"`: the SSA name of the source
op's first result when it has one (`"saliency"`, `"gray"`, `"encoded"`),
else the source op's name (`"cortex.saliency_dft"`). Ops inside linalg
bodies belong to their linalg op and are not tagged. In-memory modules
(`lower()`) keep every origin; so does the generic printed form
(`--print-op-generic`). xDSL's custom printers of `tensor.empty`,
`arith.cmpf`, `linalg.transpose`, `linalg.broadcast` and `linalg.reduce`
drop discardable attributes, so text meant to be read back should be generic.

Externs. Each external op (blur_detector, scene_change, text_roi, encoder)
becomes `func.call @cortex_<op>(...) {cortex.origin = ...}` to a private
declaration with attributes `cortex.extern = "cortex.<op>"` and
`cortex.props = {<every property, defaults included>}`; one declaration per
distinct (op, properties, signature), named `@cortex_<op>`, `@cortex_<op>_1`, ...

Frame boundary. In each function definition (the entry):
- `cortex.state "x"` reads → extra arguments `{cortex.state = "x"}`, one per
  name, after the original arguments, in order of first read;
- unspecialised `cortex.weight "w"` → extra f32 arguments
  `{cortex.weight = "w"}` after the states, in order of first use;
- `cortex.update_state "x"` → extra results `{cortex.state = "x"}` after the
  original results, in order of first update (the last update of a name
  wins); updates must sit at the function's top level.
The runtime feeds each state result back as the same-named state argument
of the next frame (zeros before the first).

Unsigned data. uint8 travels as signless `i8` (MLIR's arith rejects `ui8`):
a ui8 frame argument becomes `tensor<HxWx3xi8> {cortex.unsigned}`, the
encoder's bytes `tensor<?xi8> {cortex.unsigned}` (results and extern
declarations alike); `arith.uitofp` reads the pixels. (xDSL prints the
argument attributes of a declaration only in the generic form.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation

from cortex.errors import CortexError
from cortex.semantics.values import attr_value, numpy_dtype, properties_with_defaults

ORIGIN = "cortex.origin"
"""On every op the lowering inserts at function level: the source op's SSA name (or op name)."""
STATE = "cortex.state"
"""On an entry argument/result: the name of the frame state it carries."""
WEIGHT = "cortex.weight"
"""On an entry argument: the name of the runtime weight it carries."""
UNSIGNED = "cortex.unsigned"
"""On an `i8` argument/result: the data is uint8 (MLIR's arith has no unsigned types)."""
EXTERN = "cortex.extern"
"""On a private declaration: the cortex op (and kernel) it stands for."""
PROPS = "cortex.props"
"""On an extern declaration: the op's properties, defaults filled in, as the kernel's keyword arguments."""
SEGMENT = "cortex.segment"
"""On a function `cortex-outline-segments` made: a run of extern-free ops a native backend (IREE) compiles."""


# ---------------------------------------------------------------- extern properties


def encode_props(op: IRDLOperation) -> DictionaryAttr:
    """Every property of `op`, defaults filled in (segment sizes left out): the `cortex.props` value."""
    return DictionaryAttr(properties_with_defaults(op))


def extern_of(decl: func.FuncOp) -> tuple[str, dict[str, Any]]:
    """The kernel name and keyword arguments an extern declaration asks for, or a CortexError."""
    symbol = decl.sym_name.data
    kernel = decl.attributes.get(EXTERN)
    if not isinstance(kernel, StringAttr):
        raise CortexError(f"@{symbol} is a declaration without a '{EXTERN}' attribute: no kernel to call")
    props = decl.attributes.get(PROPS, DictionaryAttr({}))
    if not isinstance(props, DictionaryAttr):
        raise CortexError(f"@{symbol}: '{PROPS}' must be a dictionary, got {props}")
    values = {}
    for key, attr in props.data.items():
        value = attr_value(attr)
        if not isinstance(value, (int, float, str, tuple)):
            raise CortexError(f"@{symbol}: property {key} = {attr} has no Python value")
        values[key] = value
    return kernel.data, values


# ---------------------------------------------------------------- the entry's ports


@dataclass(frozen=True)
class ValueSpec:
    """What one argument or result is, as the runtime checks and converts it: plain data, no xDSL.

    The runtime (`cortex.runtime`) reads programs without the compiler, so a
    port carries its type as NumPy facts; `type` keeps the MLIR spelling for
    messages ("an f32 scalar", "tensor<?xi8>").
    """

    type: str  # the MLIR spelling: "tensor<96x128x3xi8>", "f32"
    dtype: str | None  # NumPy dtype of the element as the generated code computes it; None: no NumPy dtype
    shape: tuple[int, ...] | None  # None: a scalar; -1: a dynamic size
    unsigned: bool = False  # i8 data the caller exchanges as uint8 ({cortex.unsigned})

    @property
    def is_tensor(self) -> bool:
        return self.shape is not None


def value_spec(type_: Attribute, unsigned: bool = False) -> ValueSpec:
    """The `ValueSpec` of an MLIR type (tensor or scalar)."""
    element = type_.element_type if isinstance(type_, TensorType) else type_
    try:
        dtype: str | None = numpy_dtype(element).name
    except CortexError:
        dtype = None
    shape = tuple(type_.get_shape()) if isinstance(type_, TensorType) else None
    return ValueSpec(str(type_), dtype, shape, unsigned)


@dataclass(frozen=True)
class Port:
    """One argument or result of the lowered entry function, as a runner sees it."""

    index: int
    kind: str  # "input" | "state" | "weight" | "output"
    name: str  # state/weight name, the argument's SSA name, or "#i" for a result
    spec: ValueSpec

    @property
    def unsigned(self) -> bool:
        return self.spec.unsigned


def _attr_dict(attrs: ArrayAttr | None, index: int) -> dict[str, Attribute]:
    if attrs is None:
        return {}
    entry = attrs.data[index]
    return dict(entry.data) if isinstance(entry, DictionaryAttr) else {}


def _named(attrs: dict[str, Attribute], key: str) -> str | None:
    value = attrs.get(key)
    return value.data if isinstance(value, StringAttr) else None


def entry_ports(f: func.FuncOp) -> tuple[list[Port], list[Port]]:
    """The ports of a lowered entry function: (arguments, results), in order."""
    args = []
    for i, (arg, t) in enumerate(zip(f.body.block.args, f.function_type.inputs.data)):
        attrs = _attr_dict(f.arg_attrs, i)
        spec = value_spec(t, UNSIGNED in attrs)
        if (state := _named(attrs, STATE)) is not None:
            args.append(Port(i, "state", state, spec))
        elif (weight := _named(attrs, WEIGHT)) is not None:
            args.append(Port(i, "weight", weight, spec))
        else:
            args.append(Port(i, "input", arg.name_hint or f"arg{i}", spec))
    results = []
    for i, t in enumerate(f.function_type.outputs.data):
        attrs = _attr_dict(f.res_attrs, i)
        spec = value_spec(t, UNSIGNED in attrs)
        if (state := _named(attrs, STATE)) is not None:
            results.append(Port(i, "state", state, spec))
        else:
            results.append(Port(i, "output", f"#{i}", spec))
    return args, results


# ---------------------------------------------------------------- wiring between the parts of a split entry


SPLIT_ARGS = "cortex.split_args"
"""On a part of a split entry (frame split, stage split): the wiring key of each argument, in order."""
SPLIT_RESULTS = "cortex.split_results"
"""On a part of a split entry: the wiring key of each result, in order."""

STAGE_KINDS = ("stage", "ahead")
"""The kinds of the values one stage hands to another stage of the same part (the parallel part's, the delayed
part's): never a part's own argument or result."""

WIRE_KINDS = ("input", "state", "update", "output", "weight", "value", *STAGE_KINDS)
"""What a wiring key names: the entry's input #i, a state's value before the frame (`state:x`) and after it
(`update:x`), the entry's output #i, a runtime weight, a value one frame-split part hands to a later one
(`value:k`), a value one stage hands to another (`stage:k`), and one stage of the delayed part (which runs
ahead of the frame's other parts) to another (`ahead:k`)."""

_NUMBERED = frozenset({"input", "output", "value", *STAGE_KINDS})

FRAME_PARTS = ("delayed", "parallel", "recurrence", "tail")
"""The frame split's parts (`@f__delayed`, ...), in the order one frame runs them."""


@dataclass(frozen=True)
class WireKey:
    """One wiring key, parsed: `WireKey.parse("state:prev_gray")`, `str(key)` gives the text back."""

    kind: str
    ident: str  # a number for input/output/value/stage, a name for state/update/weight

    @classmethod
    def parse(cls, text: str) -> WireKey:
        kind, sep, ident = text.partition(":")
        if not sep or kind not in WIRE_KINDS or not ident:
            raise CortexError(f"bad wiring key '{text}': expected <kind>:<id> with kind one of {', '.join(WIRE_KINDS)}")
        if kind in _NUMBERED and not ident.isdigit():
            raise CortexError(f"bad wiring key '{text}': '{kind}' keys are numbered ({kind}:0, {kind}:1, ...)")
        return cls(kind, ident)

    @property
    def number(self) -> int:
        return int(self.ident)

    def __str__(self) -> str:
        return f"{self.kind}:{self.ident}"


def wire(kind: str, ident: int | str) -> str:
    """The text of a wiring key (checked): `wire("value", 3)` == "value:3"."""
    return str(WireKey.parse(f"{kind}:{ident}"))


__all__ = [
    "EXTERN",
    "FRAME_PARTS",
    "ORIGIN",
    "PROPS",
    "SPLIT_ARGS",
    "SPLIT_RESULTS",
    "STAGE_KINDS",
    "STATE",
    "UNSIGNED",
    "WEIGHT",
    "WIRE_KINDS",
    "Port",
    "ValueSpec",
    "WireKey",
    "encode_props",
    "entry_ports",
    "extern_of",
    "value_spec",
    "wire",
]
