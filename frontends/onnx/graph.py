"""Walking one ONNX graph: graph inputs and outputs, values known at import time, each node through its converter."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import onnx
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import (
    DYNAMIC,
    ELEMENTS,
    ENTRY,
    FLOAT,
    NodeContext,
    f32_constant,
    is_integer_tensor,
    shape,
    ssa_name,
    type_name,
    typed_constant,
)
from cortex.frontends.onnx.table import OPERATORS, import_time_inputs, typed_read_inputs
from cortex.frontends.onnx_checks import (
    MAX_ELEMENTS,
    OnnxImportError,
    check_dims,
    load_model,
    node_problem,
    tensor_array,
)


class Importer:
    """Walks one ONNX graph in order, building the body of @main."""

    def __init__(
        self,
        model: onnx.ModelProto,
        constant_inputs: Mapping[str, np.ndarray] | None = None,
        input_shapes: Mapping[str, Sequence[int | None]] | None = None,
    ):
        self.model = model
        self.input_shapes = dict(input_shapes or {})
        self.graph = model.graph
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
        self.values: dict[str, SSAValue] = {}
        self.known: dict[str, np.ndarray] = {}  # names whose values are known now (shapes, axes, weights)
        self.block: Block | None = None
        self.constant_inputs = {k: np.asarray(v) for k, v in (constant_inputs or {}).items()}
        for init in self.graph.initializer:
            self.known[init.name] = tensor_array(init, f"onnx initializer '{init.name}'")
        for name, value in self.constant_inputs.items():
            self.known[name] = value

    # ---- values

    def emit(self, op: Operation) -> SSAValue:
        assert self.block is not None, "emit runs inside import_graph, after the block exists"
        self.block.add_op(op)
        return op.results[0]

    def constant(self, array: np.ndarray | np.generic) -> SSAValue:
        return self.emit(f32_constant(array))

    def value(self, name: str, ctx: NodeContext, what: str) -> SSAValue:
        """The SSA value of tensor `name`, turning a known float32 array into a cortex.constant on first use."""
        if name in self.values:
            v = self.values[name]
            element = v.type.element_type if isinstance(v.type, TensorType) else v.type
            if element != f32:
                raise ctx.error(f"{what} '{name}' is {element}; this operator takes float32 tensors (Cast, Where, the "
                                "comparisons and the logical operators take the other element types)")
            return v
        if name not in self.known and any(i.name == name and is_integer_tensor(i) for i in self.graph.input):
            elem = next(i for i in self.graph.input if i.name == name).type.tensor_type.elem_type
            raise ctx.error(f"{what} '{name}' is a graph input of {type_name(elem)}; cortex tensors are float32")
        if name in self.known:
            array = self.known[name]
            if array.dtype != np.float32:
                raise ctx.error(f"{what} '{name}' is {array.dtype}; this operator takes float32 tensors (it computes "
                                "integer data only at import time, when every input of the node is known)")
            v = self.constant(array)
            v.name_hint = ssa_name(name)
            self.values[name] = v
            return v
        raise ctx.error(f"{what} '{name}' is not defined before this node")

    def typed_value(self, name: str, ctx: NodeContext, what: str) -> SSAValue:
        """The SSA value of tensor `name` of any importable element type (`ELEMENTS`); a known array becomes a
        constant of its own type."""
        if name in self.values:
            return self.values[name]
        if name in self.known:
            array = np.asarray(self.known[name])
            elem = onnx.helper.np_dtype_to_tensor_dtype(array.dtype) if array.dtype.kind in "biuf" else None
            if elem not in ELEMENTS:
                raise ctx.error(f"{what} '{name}' is {array.dtype}, not an element type cortex tensors hold")
            v = self.emit(typed_constant(array, ELEMENTS[elem]))
            v.name_hint = ssa_name(name)
            self.values[name] = v
            return v
        return self.value(name, ctx, what)  # its error

    def optional(self, inputs: list[str], i: int, ctx: NodeContext, what: str) -> SSAValue | None:
        return self.value(inputs[i], ctx, what) if len(inputs) > i and inputs[i] else None

    def static(self, name: str, ctx: NodeContext, what: str) -> np.ndarray:
        """A value that must be known at import time (a shape, axes): an integer tensor, never truncated."""
        if name in self.known:
            array = self.known[name]
            if array.dtype.kind not in "iu":
                raise ctx.error(f"{what} '{name}' must be an integer tensor, got {array.dtype} (ONNX Runtime rejects it too)")
            return array
        kind = "a graph input" if any(i.name == name for i in self.graph.input) else "computed in the graph"
        raise ctx.error(
            f"{what} '{name}' is {kind}, not a constant; cortex shapes are static "
            "(make it an initializer, or pass its value in constant_inputs)"
        )

    def build(self, ctx: NodeContext, op_type: type[Operation], *args: Any, **kwargs: Any) -> SSAValue:
        """Emit one cortex op; a shape rule it breaks becomes an error naming the node."""
        try:
            return self.emit(op_type(*args, **kwargs))
        except (VerifyException, ValueError) as e:
            raise ctx.error(f"{op_type.name}: {e}") from None

    def reshape(self, ctx: NodeContext, x: SSAValue, new_shape: Sequence[int]) -> SSAValue:
        return x if shape(x) == tuple(new_shape) else self.build(ctx, ops.ReshapeOp, x, list(new_shape))

    # ---- the graph

    def run(self) -> ModuleOp:
        initialized = {i.name for i in self.graph.initializer}
        names = [i.name for i in self.graph.input]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise OnnxImportError(f"onnx graph input '{twice[0]}' is declared twice")
        args = [i for i in self.graph.input if i.name not in initialized and i.name not in self.constant_inputs]
        # An integer input can only be a shape or axes, which must be known now: the node reading it says so.
        # read where any element type is taken (Cast's data): an argument, also when a float32-only operator
        # reads it too (that operator then names the element type it refuses)
        runtime = typed_read_inputs(self.graph) - import_time_inputs(self.graph)
        unbound = {i.name: i for i in args if is_integer_tensor(i) and i.name not in runtime}
        args = [i for i in args if i.name not in unbound]
        types = [self.input_type(i) for i in args]
        self.block = Block(arg_types=types)
        for arg, info in zip(self.block.args, args):
            arg.name_hint = ssa_name(info.name)
            self.values[info.name] = arg
        for index, node in enumerate(self.graph.node):
            self.import_node(node, index)
        for info in unbound.values():  # an integer input no node reads: still not a cortex argument
            raise OnnxImportError(
                f"onnx graph input '{info.name}' is {type_name(info.type.tensor_type.elem_type)}; cortex tensors are "
                "float32 (an integer input used as a shape or axes can be given in constant_inputs)"
            )
        results = []
        for out in self.graph.output:
            ctx = NodeContext(onnx.helper.make_node("Output", [out.name], []), 0)
            ctx.label = f"graph output '{out.name}'"
            elem = out.type.tensor_type.elem_type if out.type.HasField("tensor_type") else 0
            if elem not in (0, *ELEMENTS):
                raise OnnxImportError(f"onnx graph output '{out.name}' is {type_name(elem)}, not an element type "
                                      "cortex tensors hold")
            results.append(self.value(out.name, ctx, "output") if elem in (0, FLOAT) else
                           self.typed_value(out.name, ctx, "output"))
        with ImplicitBuilder(self.block):
            func.ReturnOp(*results)
        main = func.FuncOp(ENTRY, (types, [r.type for r in results]), Region(self.block))
        return ModuleOp([main])

    def foldable(self, node: onnx.NodeProto) -> bool:
        """A node computed at import time: every input known, the first one not float32 data (a shape
        computation: Shape → Gather → Unsqueeze → Concat → Reshape's shape, integer arithmetic)."""
        inputs = [name for name in node.input if name]
        return bool(inputs) and all(n in self.known for n in inputs) and self.known[inputs[0]].dtype != np.float32

    def fold(self, ctx: NodeContext) -> None:
        """Compute the node with ONNX's reference implementation; its outputs become known values."""
        from onnx.reference import ReferenceEvaluator  # only models with shape computations need it

        feeds = {name: self.known[name] for name in ctx.node.input if name}
        try:
            results = ReferenceEvaluator(ctx.node, opsets={"": self.opset}).run(None, feeds)
        except Exception as e:  # noqa: BLE001 - the reference's own error, named by the node
            raise ctx.error(f"cannot be computed at import time: {type(e).__name__}: {e}") from None
        ctx.used.update(ctx.attrs)
        for name, value in zip(ctx.node.output, results):
            if name:
                self.known[name] = np.asarray(value)

    def input_type(self, info: onnx.ValueInfoProto) -> TensorType:
        if not info.type.HasField("tensor_type"):
            raise OnnxImportError(f"onnx graph input '{info.name}' is not a tensor (sequences, maps and optionals are not supported)")
        tt = info.type.tensor_type
        if tt.elem_type not in ELEMENTS:
            raise OnnxImportError(
                f"onnx graph input '{info.name}' is {type_name(tt.elem_type)}; cortex tensors are float32 (Cast, "
                "Where and the comparisons also take float16, float64, bool and signed integers)"
            )
        element = ELEMENTS[tt.elem_type]
        if info.name in self.input_shapes:
            return TensorType(element, self.explicit_shape(info))
        if not tt.HasField("shape"):
            raise OnnxImportError(
                f"onnx graph input '{info.name}' has no shape: give it in input_shapes (e.g. {{'{info.name}': [1, 3, 32, 32]}}, "
                "-1 or None for a dimension known only when the model runs)"
            )
        # a symbolic dimension ('N') or an unknown one imports as `?`: bound when the model runs
        dims = [d.dim_value if d.HasField("dim_value") else DYNAMIC for d in tt.shape.dim]
        check_dims([d for d in dims if d != DYNAMIC], f"onnx graph input '{info.name}'")
        return TensorType(element, dims)

    def explicit_shape(self, info: onnx.ValueInfoProto) -> list[int]:
        """The shape `input_shapes` gives `info` (-1 or None: `?`), checked against the model's own dims."""
        given = [DYNAMIC if d is None or d == -1 else d for d in self.input_shapes[info.name]]
        if any(not isinstance(d, int) or isinstance(d, bool) or (d < 0 and d != DYNAMIC) for d in given):
            raise OnnxImportError(
                f"input_shapes['{info.name}'] must be non-negative integers (-1 or None for '?'), got {self.input_shapes[info.name]}"
            )
        tt = info.type.tensor_type
        if tt.HasField("shape"):
            own = [d.dim_value if d.HasField("dim_value") else DYNAMIC for d in tt.shape.dim]
            if len(own) != len(given) or any(a != DYNAMIC and b != DYNAMIC and a != b for a, b in zip(own, given)):
                shown = "x".join("?" if d == DYNAMIC else str(d) for d in own)
                raise OnnxImportError(
                    f"input_shapes['{info.name}'] = {self.input_shapes[info.name]} does not fit the model's shape {shown}"
                )
        check_dims([d for d in given if d != DYNAMIC], f"input_shapes['{info.name}']")
        return given

    def import_node(self, node: onnx.NodeProto, index: int) -> None:
        ctx = NodeContext(node, index)
        if node.domain not in ("", "ai.onnx"):
            raise ctx.error(f"operators of domain '{node.domain}' are not supported")
        entry = OPERATORS.get(node.op_type)
        if entry is None:
            raise ctx.error(f"operator {node.op_type} is not supported (supported: {', '.join(sorted(OPERATORS))})")
        problem = node_problem(node, self.opset)
        if problem is not None:
            raise ctx.error(*problem)
        for name in node.output:
            if name and (name in self.values or name in self.known):
                raise ctx.error(f"output '{name}' is already defined (ONNX names each tensor once)")
        if self.foldable(node):
            self.fold(ctx)
            return
        outputs = entry.convert(self, ctx, list(node.input))
        for value in outputs:
            if value is not None and isinstance(value.type, TensorType):
                dims = list(value.type.get_shape())
                if math.prod(dims) > MAX_ELEMENTS:
                    raise ctx.error(f"its result has shape {dims}: more than {MAX_ELEMENTS} elements")
        unknown = sorted(set(ctx.attrs) - ctx.used)
        if unknown:
            raise ctx.error("attribute not supported", unknown[0])
        if len([o for o in node.output if o]) > len(outputs):
            raise ctx.error(f"only the first {len(outputs)} output(s) can be computed, the node asks for {len(node.output)}")
        for name, value in zip(node.output, outputs):
            if name in self.known and value is None:
                continue
            if value is not None:
                if not value.name_hint:
                    value.name_hint = ssa_name(name)
                self.values[name] = value


def from_onnx(
    model_or_path: onnx.ModelProto | str | Path | bytes,
    constant_inputs: Mapping[str, np.ndarray] | None = None,
    input_shapes: Mapping[str, Sequence[int | None]] | None = None,
) -> ModuleOp:
    """The cortex module of an ONNX model: `func.func @main(inputs) -> outputs`.

    `constant_inputs` gives values for graph inputs that are read as shapes or
    axes (they are then not arguments of @main). A symbolic dimension ('N')
    imports as `?` (the module is shape-generic: `cortex.compile` binds it per
    call shape); `input_shapes` gives an input's shape explicitly (for a model
    that has none, or to fix a symbolic one; -1 or None keeps a dimension `?`).
    """
    model = load_model(model_or_path)
    unknown = sorted(set(input_shapes or {}) - {i.name for i in model.graph.input})
    if unknown:
        raise OnnxImportError(f"input_shapes names {unknown[0]!r}, which is not a graph input")
    module = Importer(model, constant_inputs, input_shapes).run()
    try:
        module.verify()
    except VerifyException as e:
        raise OnnxImportError(f"the imported module does not verify: {e}") from None
    return module

