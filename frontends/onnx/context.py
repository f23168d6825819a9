"""What every converter shares: the node being imported (its attributes, errors that name it) and small helpers."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, overload

import numpy as np
import onnx
from xdsl.dialects.builtin import Float16Type, Float64Type, IntegerType, TensorType, f32
from xdsl.ir import Attribute, SSAValue

from cortex.dialects import shapes
from cortex.dialects import tensor_ops as ops
from cortex.dialects.base import shape_of
from cortex.frontends.onnx_checks import OnnxImportError, attribute_value
from cortex.semantics.values import numpy_to_dense

ENTRY = "main"
FLOAT = onnx.TensorProto.FLOAT
DYNAMIC = shapes.DYNAMIC


def typed_constant(array: np.ndarray, element: Attribute) -> ops.ConstantOp:
    """A `cortex.constant` of `array` with the element type `element` (one of `ELEMENTS`)."""
    dense = numpy_to_dense(np.asarray(array), TensorType(element, list(np.shape(array))))
    assert dense is not None, "every importable element type has a NumPy dtype"
    return ops.ConstantOp(dense)


def f32_constant(array: np.ndarray | np.generic) -> ops.ConstantOp:
    """A `cortex.constant` holding `array` as float32 (bit-exact bytes, any size)."""
    array = np.asarray(array)
    dense = numpy_to_dense(array, TensorType(f32, list(array.shape)))
    assert dense is not None  # f32 has a NumPy dtype
    return ops.ConstantOp(dense)


def shape(value: SSAValue) -> tuple[int, ...]:
    return shape_of(value, "the value")


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


INTEGER_TYPES = {
    onnx.TensorProto.INT8, onnx.TensorProto.INT16, onnx.TensorProto.INT32, onnx.TensorProto.INT64,
    onnx.TensorProto.UINT8, onnx.TensorProto.UINT16, onnx.TensorProto.UINT32, onnx.TensorProto.UINT64,
}


ELEMENTS: dict[int, Attribute] = {
    onnx.TensorProto.FLOAT: f32, onnx.TensorProto.DOUBLE: Float64Type(), onnx.TensorProto.FLOAT16: Float16Type(),
    onnx.TensorProto.BOOL: IntegerType(1), onnx.TensorProto.INT8: IntegerType(8), onnx.TensorProto.INT16: IntegerType(16),
    onnx.TensorProto.INT32: IntegerType(32), onnx.TensorProto.INT64: IntegerType(64),
}
"""The ONNX element types a cortex tensor holds (booleans as i1, signed integers signless); float32 is what
every operator takes, the others only the operators' `typed_inputs` (Cast, Where)."""


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


def unidirectional(source: Sequence[int], target: Sequence[int]) -> bool:
    """ONNX's unidirectional broadcasting: `source` stretches to `target`, never the other way."""
    if len(source) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(source), reversed(target)))


def product(dims: Sequence[int]) -> int:
    """The element count of `dims`, `?` if any of them is."""
    return DYNAMIC if DYNAMIC in dims else math.prod(dims)


def normalise_axis(ctx: NodeContext, axis: int, rank: int, attribute: str | None = "axis") -> int:
    """`axis` in [-rank, rank) as a non-negative axis, else an error naming the node."""
    if not -rank <= axis < max(rank, 1):
        raise ctx.error(f"axis {axis} is out of range for rank {rank}", attribute)
    return axis % max(rank, 1)
