"""The lowered-module ABI: what the lowering writes and the backends, runtime and graph view read.

The plain facts -- the attribute names, `Port`/`ValueSpec`, the wiring keys
-- live once in `cortex.semantics.abi_facts`, below the runtime, which reads saved
programs without xDSL; this module re-exports them and adds what needs the
IR: the encoding of an extern's properties and the entry function's ports.
It sits with the dialect because the passes that read lowered modules
(partition, graph view) are below the lowering in the package's levels.

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

from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation

from cortex.errors import CortexError
from cortex.semantics.abi_facts import (
    EXTERN,
    FRAME_PARTS,
    ORIGIN,
    PROPS,
    SEGMENT,
    SPLIT_ARGS,
    SPLIT_RESULTS,
    STAGE_KINDS,
    STATE,
    UNSIGNED,
    WEIGHT,
    WIRE_KINDS,
    Port,
    ValueSpec,
    WireKey,
    wire,
)
from cortex.semantics.values import attr_value, numpy_dtype, properties_with_defaults

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


def value_spec(type_: Attribute, unsigned: bool = False) -> ValueSpec:
    """The `ValueSpec` of an MLIR type (tensor or scalar)."""
    element = type_.element_type if isinstance(type_, TensorType) else type_
    try:
        dtype: str | None = numpy_dtype(element).name
    except CortexError:
        dtype = None
    shape = tuple(type_.get_shape()) if isinstance(type_, TensorType) else None
    return ValueSpec(str(type_), dtype, shape, unsigned)


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


__all__ = [
    "EXTERN",
    "FRAME_PARTS",
    "ORIGIN",
    "PROPS",
    "SEGMENT",
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
