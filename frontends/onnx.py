"""ONNX → cortex dialect: `from_onnx(model) -> ModuleOp` with one `func.func @main`.

The function's arguments are the graph inputs that are not initializers (in
order), its results the graph outputs; float32 initializers become
`cortex.constant`. Each supported ONNX operator maps to cortex ops that
have its exact semantics, sometimes several (Gemm with alpha/beta, 1-D
MatMul through reshapes, ceil-mode pooling as extra padding,
count_include_pad as a constant rescale, 1-D conv/pool through a unit
height). Integer tensors are only ever read at import time, as shapes and
axes: they must be constants (an initializer, a Constant node, or a value
given in `constant_inputs`).

Anything the dialect cannot express — an operator, an attribute value, a
non-float32 tensor — is one CortexError naming the
node, its operator and the attribute, never a silently different graph.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

import numpy as np
import onnx
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects import tensor_ops as ops
from cortex.dialects.base import shape_of
from cortex.frontends.onnx_checks import (
    MAX_ELEMENTS,
    OnnxImportError,
    attribute_value,
    check_dims,
    load_model,
    node_problem,
    tensor_array,
)
from cortex.semantics.values import numpy_to_dense

ENTRY = "main"
FLOAT = onnx.TensorProto.FLOAT
DYNAMIC = shapes.DYNAMIC




def f32_constant(array: np.ndarray | np.generic) -> ops.ConstantOp:
    """A `cortex.constant` holding `array` as float32 (bit-exact bytes, any size)."""
    array = np.asarray(array)
    dense = numpy_to_dense(array, TensorType(f32, list(array.shape)))
    assert dense is not None  # f32 has a NumPy dtype
    return ops.ConstantOp(dense)


def shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value, "the value")


def same_pads(size: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int], upper: bool) -> list[int]:
    """ONNX SAME_UPPER / SAME_LOWER: output = ceil(size / stride), the odd cell at the end (upper) or start."""
    begins, ends = [], []
    for n, k, s, d in zip(size, kernel, strides, dilations):
        total = (math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n  # negative (a crop) when stride > kernel
        small, big = total // 2, total - total // 2
        begins.append(small if upper else big)
        ends.append(big if upper else small)
    return begins + ends


def ceil_extra(n: int, k: int, s: int, lo: int, hi: int) -> int:
    """Padding to add at the end so that floor division gives ONNX's ceil_mode output size.

    ONNX (as PyTorch) drops a last window that would start in the end padding.
    """
    span = n + lo + hi - k
    out = -(-span // s) + 1
    if (out - 1) * s >= n + lo:
        out -= 1
    return max(0, (out - 1) * s + k - (n + lo + hi))


def window_cells(n: int, k: int, s: int, lo: int, out: int, limit_lo: int, limit_hi: int, d: int = 1) -> np.ndarray:
    """Per output position, how many of the k window cells (d apart) lie in [limit_lo, limit_hi) (input coordinates)."""
    cells = (np.arange(out) * s - lo)[:, None] + np.arange(k)[None, :] * d
    return ((cells >= limit_lo) & (cells < limit_hi)).sum(axis=1)


class NodeContext:
    """The node being imported: its attributes as Python values, and errors that name it."""

    def __init__(self, node: onnx.NodeProto, index: int):
        self.node = node
        name = node.name if len(node.name) <= 80 else node.name[:77] + "..."
        self.label = f"node {name!r}" if node.name else f"node #{index}"
        self.attrs: dict[str, Any] = {a.name: attribute_value(a) for a in node.attribute}
        self.used: set[str] = set()

    def error(self, message: str, attribute: str | None = None) -> OnnxImportError:
        where = f"onnx {self.label} ({self.node.op_type})"
        if attribute is not None:
            value = self.attrs.get(attribute)
            shown = value.decode(errors="replace") if isinstance(value, bytes) else value
            text = repr(shown)
            text = text if len(text) <= 60 else text[:57] + "..."  # the message must stay one short line
            where += f", attribute '{attribute}'" + (f" = {text}" if attribute in self.attrs else "")
        return OnnxImportError(f"{where}: {message}")

    def get(self, name: str, default: Any = None) -> Any:
        self.used.add(name)
        value = self.attrs.get(name, default)
        return value.decode(errors="replace") if isinstance(value, bytes) else value

    @overload
    def ints(self, name: str, default: Sequence[int]) -> list[int]: ...
    @overload
    def ints(self, name: str, default: None = None) -> list[int] | None: ...
    def ints(self, name: str, default: Sequence[int] | None = None) -> list[int] | None:
        value = self.get(name, default)
        return None if value is None else [int(v) for v in value]

    def require(self, name: str, allowed: Sequence[Any], default: Any, why: str) -> Any:
        value = self.get(name, default)
        if value not in allowed:
            raise self.error(why, name)
        return value


Handler = Callable[["Importer", NodeContext, list[str]], Sequence[SSAValue | None]]
"""A node's outputs: an SSA value each, or None for one known at import time only (see `Importer.known`)."""
HANDLERS: dict[str, Handler] = {}


def handles(*op_types: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        for t in op_types:
            HANDLERS[t] = fn
        return fn

    return register


SUPPORTED_OPS = HANDLERS  # filled below; its keys are the ONNX operators the importer maps


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
            return self.values[name]
        if name not in self.known and any(i.name == name and is_integer_tensor(i) for i in self.graph.input):
            elem = next(i for i in self.graph.input if i.name == name).type.tensor_type.elem_type
            raise ctx.error(f"{what} '{name}' is a graph input of {type_name(elem)}; cortex tensors are float32")
        if name in self.known:
            array = self.known[name]
            if array.dtype != np.float32:
                raise ctx.error(f"{what} '{name}' is {array.dtype}; cortex tensors are float32")
            v = self.constant(array)
            v.name_hint = ssa_name(name)
            self.values[name] = v
            return v
        raise ctx.error(f"{what} '{name}' is not defined before this node")

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
        unbound = {i.name: i for i in args if is_integer_tensor(i)}
        args = [i for i in args if i.name not in unbound]
        types = [self.input_type(i) for i in args]
        self.block = Block(arg_types=types)
        for arg, info in zip(self.block.args, args):
            arg.name_hint = ssa_name(info.name)
            self.values[info.name] = arg
        for index, node in enumerate(self.graph.node):
            self.import_node(node, index)
        for info in unbound.values():
            self.input_type(info)  # an integer input no node reads: still not a cortex argument
        results = []
        for out in self.graph.output:
            ctx = NodeContext(onnx.helper.make_node("Output", [out.name], []), 0)
            ctx.label = f"graph output '{out.name}'"
            elem = out.type.tensor_type.elem_type if out.type.HasField("tensor_type") else None
            if elem not in (None, 0, FLOAT):
                raise OnnxImportError(f"onnx graph output '{out.name}' is {type_name(elem)}; cortex tensors are float32")
            results.append(self.value(out.name, ctx, "output"))
        with ImplicitBuilder(self.block):
            func.ReturnOp(*results)
        main = func.FuncOp(ENTRY, (types, [r.type for r in results]), Region(self.block))
        return ModuleOp([main])

    def input_type(self, info: onnx.ValueInfoProto) -> TensorType:
        if not info.type.HasField("tensor_type"):
            raise OnnxImportError(f"onnx graph input '{info.name}' is not a tensor (sequences, maps and optionals are not supported)")
        tt = info.type.tensor_type
        if tt.elem_type != FLOAT:
            raise OnnxImportError(
                f"onnx graph input '{info.name}' is {type_name(tt.elem_type)}; cortex tensors are float32 "
                "(an integer input used as a shape or axes can be given in constant_inputs)"
            )
        if info.name in self.input_shapes:
            return TensorType(f32, self.explicit_shape(info))
        if not tt.HasField("shape"):
            raise OnnxImportError(
                f"onnx graph input '{info.name}' has no shape: give it in input_shapes (e.g. {{'{info.name}': [1, 3, 32, 32]}}, "
                "-1 or None for a dimension known only when the model runs)"
            )
        # a symbolic dimension ('N') or an unknown one imports as `?`: bound when the model runs
        dims = [d.dim_value if d.HasField("dim_value") else DYNAMIC for d in tt.shape.dim]
        check_dims([d for d in dims if d != DYNAMIC], f"onnx graph input '{info.name}'")
        return TensorType(f32, dims)

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
        handler = HANDLERS.get(node.op_type)
        if handler is None:
            raise ctx.error(f"operator {node.op_type} is not supported (supported: {', '.join(sorted(HANDLERS))})")
        problem = node_problem(node, self.opset)
        if problem is not None:
            raise ctx.error(*problem)
        for name in node.output:
            if name and (name in self.values or name in self.known):
                raise ctx.error(f"output '{name}' is already defined (ONNX names each tensor once)")
        outputs = handler(self, ctx, list(node.input))
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


INTEGER_TYPES = {
    onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
    onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64,
}


def is_integer_tensor(info: onnx.ValueInfoProto) -> bool:
    return info.type.HasField("tensor_type") and info.type.tensor_type.elem_type in INTEGER_TYPES


def type_name(elem_type: int) -> str:
    try:
        return onnx.TensorProto.DataType.Name(elem_type).lower()
    except ValueError:
        return f"element type {elem_type}"


def ssa_name(name: str) -> str | None:
    """An ONNX tensor name as an SSA name hint (letters, digits, _ and ., not starting with a digit)."""
    clean = re.sub(r"[^A-Za-z0-9_.$]", "_", name)
    if not clean:
        return None
    return clean if not clean[0].isdigit() else f"v{clean}"


# ---------------------------------------------------------------- elementwise

UNARY = {
    "Relu": ops.ReluOp,
    "Neg": ops.NegOp,
    "Exp": ops.ExpOp,
    "Log": ops.LogOp,
    "Sqrt": ops.SqrtOp,
    "Abs": ops.AbsOp,
    "Sigmoid": ops.SigmoidOp,
    "Tanh": ops.TanhOp,
}
BINARY = {"Add": ops.AddOp, "Sub": ops.SubOp, "Mul": ops.MulOp, "Div": ops.DivOp, "Pow": ops.PowOp}


@handles(*UNARY)
def unary(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    return [im.build(ctx, UNARY[ctx.node.op_type], im.value(inputs[0], ctx, "input"))]


@handles(*BINARY)
def binary(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    # opset < 7: `broadcast` = 1 is NumPy's trailing broadcast, but not along an explicit axis
    if ctx.get("broadcast", 0) and ctx.get("axis") is not None:
        raise ctx.error("legacy broadcasting along an axis is not supported", "axis")
    lhs, rhs = im.value(inputs[0], ctx, "input A"), im.value(inputs[1], ctx, "input B")
    return [im.build(ctx, BINARY[ctx.node.op_type], lhs, rhs)]


@handles("Gelu")
def gelu(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    approximate = ctx.require("approximate", ops.GELU_APPROXIMATIONS, "none", 'must be "none" or "tanh"')
    return [im.build(ctx, ops.GeluOp, im.value(inputs[0], ctx, "input"), approximate)]


@handles("Identity")
def identity(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue | None]:
    if inputs[0] in im.known and inputs[0] not in im.values:
        propagate_known(im, ctx, inputs[0])
        return [None]
    return [im.value(inputs[0], ctx, "input")]


def propagate_known(im: Importer, ctx: NodeContext, name: str) -> None:
    """An Identity of a known value is known too (it may be a shape)."""
    im.known[ctx.node.output[0]] = im.known[name]


@handles("Constant")
def constant(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue | None]:
    if "value" in ctx.attrs:
        array = tensor_array(ctx.get("value"), f"onnx {ctx.label} (Constant), attribute 'value'")
    elif "value_float" in ctx.attrs:
        array = np.array(ctx.get("value_float"), np.float32)
    elif "value_floats" in ctx.attrs:
        array = np.array(ctx.get("value_floats"), np.float32)
    elif "value_int" in ctx.attrs:
        array = np.array(ctx.get("value_int"), np.int64)
    elif "value_ints" in ctx.attrs:
        array = np.array(ctx.get("value_ints"), np.int64)
    else:
        name = next(iter(ctx.attrs), None)
        raise ctx.error("this kind of constant is not supported", name)
    im.known[ctx.node.output[0]] = array
    return [None]  # materialised as a cortex.constant where it is used as data


# ---------------------------------------------------------------- contractions


@handles("MatMul")
def matmul(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """ONNX MatMul; a 1-D operand is promoted (K → 1×K or K×1) and the unit dimension removed after."""
    a, b = im.value(inputs[0], ctx, "input A"), im.value(inputs[1], ctx, "input B")
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise ctx.error("MatMul operands must have rank >= 1")
    a2 = im.reshape(ctx, a, (1, *sa)) if len(sa) == 1 else a
    b2 = im.reshape(ctx, b, (*sb, 1)) if len(sb) == 1 else b
    y = im.build(ctx, ops.MatmulOp, a2, b2)
    out = list(shape(y))
    if len(sb) == 1:
        out.pop(-1)
    if len(sa) == 1:
        out.pop(-2 if len(sb) != 1 else -1)
    return [im.reshape(ctx, y, out)]


@handles("Gemm")
def gemm(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """alpha·A'·B' + beta·C. A constant B becomes the weight of one `cortex.linear` (transposed
    and scaled at import time); a bias that is a vector of N (or broadcasts to one) its bias."""
    alpha, beta = float(ctx.get("alpha", 1.0)), float(ctx.get("beta", 1.0))
    trans_a, trans_b = int(ctx.get("transA", 0)), int(ctx.get("transB", 0))
    if "broadcast" in ctx.attrs:  # opset < 7: bias broadcasting was opt-in; semantics are the same when shapes agree
        ctx.get("broadcast")
    a = im.value(inputs[0], ctx, "input A")
    if len(shape(a)) != 2:
        raise ctx.error(f"Gemm input A must be 2-D, got shape {shape(a)}")
    if trans_a:
        a = im.build(ctx, ops.TransposeOp, a, [1, 0])
    bias_name = inputs[2] if len(inputs) > 2 and inputs[2] else None
    if inputs[1] in im.known and inputs[1] not in im.values:
        b_array = im.known[inputs[1]]
        if b_array.dtype != np.float32 or b_array.ndim != 2:
            raise ctx.error(f"Gemm input B must be a 2-D float32 tensor, got {b_array.dtype} {b_array.shape}")
        weight = b_array if trans_b else b_array.T  # N×K
        if alpha != 1.0:
            weight = weight * np.float32(alpha)
        n = weight.shape[0]
        bias_vector = None
        if bias_name is not None and bias_name in im.known and bias_name not in im.values:
            c = im.known[bias_name]
            if c.dtype == np.float32 and c.ndim <= 2 and all(d == 1 for d in c.shape[:-1]) and c.shape[-1:] in ((), (1,), (n,)):
                bias_vector = np.broadcast_to(c.reshape(-1) * np.float32(beta) if beta != 1.0 else c.reshape(-1), (n,))
        w = im.constant(weight)
        w.name_hint = ssa_name(inputs[1])
        bias = im.constant(bias_vector) if bias_vector is not None else None
        if bias is not None and bias_name is not None:
            bias.name_hint = ssa_name(bias_name)
        y = im.build(ctx, ops.LinearOp, a, w, bias)
        if bias_name is None or bias_vector is not None:
            return [y]
    else:
        b_value = im.value(inputs[1], ctx, "input B")
        if len(shape(b_value)) != 2:
            raise ctx.error(f"Gemm input B must be 2-D, got shape {shape(b_value)}")
        if trans_b:
            b_value = im.build(ctx, ops.TransposeOp, b_value, [1, 0])
        y = im.build(ctx, ops.MatmulOp, a, b_value)
        if alpha != 1.0:
            y = im.build(ctx, ops.MulOp, y, im.constant(np.float32(alpha)))
        if bias_name is None:
            return [y]
    c_value = im.value(bias_name, ctx, "input C")
    if not unidirectional(shape(c_value), shape(y)):
        raise ctx.error(f"input C of shape {list(shape(c_value))} does not broadcast to the product's {list(shape(y))}")
    if beta != 1.0:
        c_value = im.build(ctx, ops.MulOp, c_value, im.constant(np.float32(beta)))
    return [im.build(ctx, ops.AddOp, y, c_value)]


def unidirectional(source: Sequence[int], target: Sequence[int]) -> bool:
    """ONNX's unidirectional broadcasting: `source` stretches to `target`, never the other way."""
    if len(source) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(source), reversed(target)))


@handles("BatchNormalization")
def batch_norm(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    ctx.require("training_mode", (0,), 0, "training mode (batch statistics) is not supported; export the model in eval mode")
    ctx.require("spatial", (1,), 1, "only spatial batch normalization (per channel) is supported")
    ctx.get("momentum")  # only used in training
    if "is_test" in ctx.attrs:
        ctx.require("is_test", (1,), 1, "only inference (is_test = 1) is supported")
    if "consumed_inputs" in ctx.attrs:
        ctx.get("consumed_inputs")
    epsilon = float(ctx.get("epsilon", 1e-5))
    names = ("X", "scale", "B", "mean", "var")
    operands = [im.value(inputs[i], ctx, f"input {names[i]}") for i in range(5)]
    return [im.build(ctx, ops.BatchNormOp, *operands, epsilon=epsilon)]


# ---------------------------------------------------------------- windows: conv and pooling


class Window:
    """kernel/strides/dilations/pads of a 1-D or 2-D windowed node, resolved against the input size."""

    def __init__(self, ctx: NodeContext, spatial: Sequence[int], kernel: Sequence[int]):
        rank = len(spatial)
        self.kernel = list(kernel)
        self.strides = ctx.ints("strides", [1] * rank)
        self.dilations = ctx.ints("dilations", [1] * rank)
        auto_pad = ctx.get("auto_pad", "NOTSET")
        pads = ctx.ints("pads", [0] * (2 * rank))
        for attr, values, size in (("strides", self.strides, rank), ("dilations", self.dilations, rank), ("pads", pads, 2 * rank)):
            if len(values) != size:
                raise ctx.error(f"expected {size} values for a {rank}-D input", attr)
        for attr, values in (("strides", self.strides), ("dilations", self.dilations), ("kernel_shape", self.kernel)):
            if any(v < 1 for v in values):
                raise ctx.error("must be positive", attr)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pads = same_pads(spatial, self.kernel, self.strides, self.dilations, auto_pad == "SAME_UPPER")
        elif auto_pad == "VALID":
            pads = [0] * (2 * rank)
        elif auto_pad != "NOTSET":
            raise ctx.error("must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", "auto_pad")
        if any(p < 0 for p in pads):
            raise ctx.error(
                f"gives negative padding {pads} (a stride larger than the window): a crop, which cortex pads "
                "cannot express (ONNX Runtime rejects it too)",
                "auto_pad" if auto_pad != "NOTSET" else "pads",
            )
        self.begin, self.end = pads[:rank], pads[rank:]
        padded = [n + b + e for n, b, e in zip(spatial, self.begin, self.end)]
        if math.prod(padded) > MAX_ELEMENTS:
            raise ctx.error(f"pads the input to {padded}: more than {MAX_ELEMENTS} elements", "pads")

    def as_2d(self, rank: int) -> tuple[list[int], list[int], list[int], list[int]]:
        """kernel, strides, dilations, pads (top, left, bottom, right) of the 2-D op; 1-D gets a unit height."""
        if rank == 1:
            return [1, *self.kernel], [1, *self.strides], [1, *self.dilations], [0, self.begin[0], 0, self.end[0]]
        return self.kernel, self.strides, self.dilations, [*self.begin, *self.end]


def spatial_input(im: Importer, ctx: NodeContext, name: str) -> tuple[SSAValue, int]:
    """The input lifted to NCHW (N×C×L → N×C×1×L) and its number of spatial dimensions."""
    x = im.value(name, ctx, "input X")
    rank = len(shape(x)) - 2
    if rank not in (1, 2):
        raise ctx.error(f"only 1-D and 2-D inputs (N×C×L, N×C×H×W) are supported, got shape {shape(x)}")
    if rank == 1:
        n, c, length = shape(x)
        x = im.reshape(ctx, x, (n, c, 1, length))
    return x, rank


def restore_rank(im: Importer, ctx: NodeContext, y: SSAValue, rank: int) -> SSAValue:
    if rank == 1:
        n, c, _, length = shape(y)
        return im.reshape(ctx, y, (n, c, length))
    return y


@handles("Conv")
def conv(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x, rank = spatial_input(im, ctx, inputs[0])
    weight = im.value(inputs[1], ctx, "input W")
    ws = shape(weight)
    if len(ws) != rank + 2:
        raise ctx.error(f"weight shape {ws} does not match a {rank}-D convolution")
    kernel = ctx.ints("kernel_shape", list(ws[2:]))
    if list(kernel) != list(ws[2:]):
        raise ctx.error(f"does not match the weight's spatial shape {list(ws[2:])}", "kernel_shape")
    group = ctx.get("group", 1)
    if group != 1:
        raise ctx.error("grouped convolution is not expressible by cortex.conv2d (group must be 1)", "group")
    orig_spatial = shape(im.value(inputs[0], ctx, "input X"))[2:]
    window = Window(ctx, orig_spatial, kernel)
    _, strides, dilations, pads = window.as_2d(rank)
    if rank == 1:
        weight = im.reshape(ctx, weight, (ws[0], ws[1], 1, ws[2]))
    bias = im.optional(inputs, 2, ctx, "input B")
    y = im.build(ctx, ops.Conv2dOp, x, weight, bias, strides=strides, pads=pads, dilations=dilations)
    return [restore_rank(im, ctx, y, rank)]


@handles("MaxPool", "AveragePool")
def pool(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Pooling; ceil_mode becomes extra end padding (never counted, never the max), and
    count_include_pad = 1 a constant rescale of the dialect's count-excluding average."""
    is_max = ctx.node.op_type == "MaxPool"
    if len([o for o in ctx.node.output if o]) > 1:
        raise ctx.error("the Indices output (argmax) is not supported")
    original = im.value(inputs[0], ctx, "input X")
    x, rank = spatial_input(im, ctx, inputs[0])
    spatial = shape(original)[2:]
    kernel = ctx.ints("kernel_shape")
    if kernel is None or len(kernel) != rank:
        raise ctx.error(f"must give {rank} sizes", "kernel_shape")
    window = Window(ctx, spatial, kernel)
    if any(p >= k for p, k in zip([*window.begin, *window.end], [*kernel, *kernel])):
        # a window wholly in the padding: -inf for a max, 0/0 for an average (ONNX Runtime rejects it)
        raise ctx.error(f"must be smaller than the kernel {list(kernel)}", "pads")
    if is_max:
        ctx.require("storage_order", (0,), 0, "only row-major storage order is supported")
    ceil_mode = ctx.require("ceil_mode", (0, 1), 0, "must be 0 or 1")
    include_pad = 0 if is_max else ctx.require("count_include_pad", (0, 1), 0, "must be 0 or 1")
    begin, end = list(window.begin), list(window.end)
    stated_end = (0, end[0]) if rank == 1 else (end[0], end[1])  # the padding count_include_pad counts
    if ceil_mode:
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, window.dilations)]
        end = [e + ceil_extra(n, k, s, b, e) for n, k, s, b, e in zip(spatial, spans, window.strides, begin, end)]
    window.end = end
    kernel2, strides2, dilations2, pads2 = window.as_2d(rank)
    op = ops.MaxPoolOp if is_max else ops.AvgPoolOp
    y = im.build(ctx, op, x, kernel2, strides2, pads2, dilations2)
    if include_pad:
        out = shape(y)[2:]
        size2 = [1, *spatial] if rank == 1 else list(spatial)
        begin2 = (pads2[0], pads2[1])
        real, counted = [], []
        for axis in range(2):
            n, k, s, lo, d = size2[axis], kernel2[axis], strides2[axis], begin2[axis], dilations2[axis]
            real.append(window_cells(n, k, s, lo, out[axis], 0, n, d))
            counted.append(window_cells(n, k, s, lo, out[axis], -lo, n + stated_end[axis], d))
        scale = np.outer(real[0], real[1]) / np.outer(counted[0], counted[1])
        if not np.all(scale == 1.0):
            y = im.build(ctx, ops.MulOp, y, im.constant(scale.astype(np.float32)))
    return [restore_rank(im, ctx, y, rank)]


# ---------------------------------------------------------------- layout


@handles("Transpose")
def transpose(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    perm = ctx.ints("perm", list(reversed(range(len(shape(x))))))
    return [im.build(ctx, ops.TransposeOp, x, perm)]


def resolve_reshape(ctx: NodeContext, source: Sequence[int], target: Sequence[int], allowzero: int) -> list[int]:
    """ONNX Reshape's shape rules: 0 copies the input dimension (unless allowzero), −1 is inferred."""
    out = [int(d) for d in target]
    if not allowzero:
        for i, d in enumerate(out):
            if d == 0:
                if i >= len(source):
                    raise ctx.error(f"shape {list(target)}: 0 at position {i} has no input dimension to copy")
                out[i] = source[i]
    if out.count(-1) > 1 or any(d < -1 and d != DYNAMIC for d in out):
        raise ctx.error(f"shape {list(target)}: at most one −1, and no other negative size")
    if DYNAMIC in source:  # a `?` (batch) dimension, carried by a 0 (the −1 is then the rest) or not
        carried = sum(1 for i, d in enumerate(target) if d == 0 and not allowzero and source[i] == DYNAMIC)
        if -1 in out and carried == source.count(DYNAMIC):
            total, known = math.prod(d for d in source if d != DYNAMIC), math.prod(d for d in out if d not in (-1, DYNAMIC))
            if known == 0 or total % known:
                raise ctx.error(f"shape {list(target)} cannot hold the elements of {shapes.fmt(source)}")
            out[out.index(-1)] = total // known
        return [DYNAMIC if d == -1 else d for d in out]
    total = math.prod(source)
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ctx.error(f"shape {list(target)} cannot hold the {total} elements of {list(source)}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ctx.error(f"shape {list(target)} cannot hold the {total} elements of {list(source)}")
    return out


@handles("Reshape")
def reshape(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    if len(inputs) > 1:
        target = [int(d) for d in im.static(inputs[1], ctx, "input shape").reshape(-1)]
    else:  # opset < 5
        stated = ctx.ints("shape")
        if stated is None:
            raise ctx.error("Reshape needs a shape")
        target = stated
    allowzero = ctx.require("allowzero", (0, 1), 0, "must be 0 or 1")
    return [im.reshape(ctx, x, resolve_reshape(ctx, shape(x), target, allowzero))]


@handles("Flatten")
def flatten(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    s = shape(x)
    axis = ctx.get("axis", 1)
    if not -len(s) <= axis <= len(s):
        raise ctx.error(f"out of range for rank {len(s)}", "axis")
    if axis < 0:
        axis += len(s)
    return [im.reshape(ctx, x, (product(s[:axis]), product(s[axis:])))]


def product(dims: Sequence[int]) -> int:
    """The element count of `dims`, `?` if any of them is."""
    return DYNAMIC if DYNAMIC in dims else math.prod(dims)


@handles("Softmax")
def softmax(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Opset ≥ 13: along `axis` (default −1). Before: over the input flattened to 2-D at `axis` (default 1)."""
    x = im.value(inputs[0], ctx, "input")
    s = shape(x)
    axis = ctx.get("axis", -1 if im.opset >= 13 else 1)
    if not -len(s) <= axis < max(len(s), 1):
        raise ctx.error(f"out of range for rank {len(s)}", "axis")
    axis %= max(len(s), 1)
    if im.opset >= 13 or axis == len(s) - 1:
        return [im.build(ctx, ops.SoftmaxOp, x, axis)]
    flat = im.reshape(ctx, x, (math.prod(s[:axis]), math.prod(s[axis:])))
    return [im.reshape(ctx, im.build(ctx, ops.SoftmaxOp, flat, 1), s)]


# ---------------------------------------------------------------- reductions

REDUCE = {"ReduceSum": (ops.ReduceSumOp, 13), "ReduceMean": (ops.ReduceMeanOp, 18), "ReduceMax": (ops.ReduceMaxOp, 18)}


@handles(*REDUCE)
def reduce(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Axes from the attribute (older opsets) or a constant second input; empty axes reduce
    everything unless noop_with_empty_axes = 1, which makes the node an identity."""
    op, axes_as_input_since = REDUCE[ctx.node.op_type]
    x = im.value(inputs[0], ctx, "input data")
    if im.opset >= axes_as_input_since and "axes" in ctx.attrs:
        raise ctx.error(f"is an input since opset {axes_as_input_since} (this model's opset is {im.opset})", "axes")
    if len(inputs) > 1 and inputs[1]:
        axes = [int(a) for a in im.static(inputs[1], ctx, "input axes").reshape(-1)]
    else:
        axes = ctx.ints("axes", [])
    keepdims = ctx.require("keepdims", (0, 1), 1, "must be 0 or 1")
    noop = ctx.require("noop_with_empty_axes", (0, 1), 0, "must be 0 or 1")
    if not axes and noop:
        return [x]
    return [im.build(ctx, op, x, axes, bool(keepdims))]


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


__all__ = ["ENTRY", "SUPPORTED_OPS", "OnnxImportError", "ceil_extra", "from_onnx", "load_model", "same_pads"]
