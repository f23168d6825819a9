"""MLIR values as NumPy values and back: element dtypes, dense attributes, properties.

The one home of these conversions: the kernels, folding, the lowering, the
interpreter and the NumPy backend all read attributes through here, so an
element type maps to the same dtype everywhere.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from xdsl.dialects.builtin import (
    ArrayAttr,
    BytesAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation

from cortex.errors import CortexError


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The NumPy dtype of an MLIR element type (f16/f32/f64, i1, [u]i8…i64, index)."""
    if isinstance(element_type, Float32Type):
        return np.dtype(np.float32)
    if isinstance(element_type, Float64Type):
        return np.dtype(np.float64)
    if isinstance(element_type, Float16Type):
        return np.dtype(np.float16)
    if isinstance(element_type, IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, IntegerType):
        width = element_type.width.data
        if width == 1:
            return np.dtype(np.bool_)
        if width in (8, 16, 32, 64):
            unsigned = element_type.signedness.data == Signedness.UNSIGNED
            return np.dtype(f"{'u' if unsigned else ''}int{width}")
    raise CortexError(f"no NumPy dtype for element type {element_type}")


def element_dtype(element: Attribute) -> np.dtype | None:
    """The little-endian NumPy dtype of `element` (xDSL's byte layout), if it has one."""
    try:
        return numpy_dtype(element).newbyteorder("<")
    except CortexError:
        return None


def dense_to_numpy(value: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The array a `dense<...>` attribute holds (splats expanded, read-only)."""
    dtype = numpy_dtype(value.get_element_type())
    shape = tuple(value.get_shape())
    if dtype == np.bool_:
        flat = np.array(list(value.get_values()), dtype=np.bool_)
    else:
        flat = np.frombuffer(value.data.data, dtype=dtype.newbyteorder("<")).astype(dtype, copy=False)
    size = math.prod(shape)
    if flat.size == 1 and size != 1:
        return np.broadcast_to(flat.reshape(()), shape)
    return flat.reshape(shape)


def numpy_to_dense(array: np.ndarray, tensor_type: TensorType) -> DenseIntOrFPElementsAttr | None:
    """A dense attribute of `tensor_type` holding `array` (cast to its element type)."""
    dtype = element_dtype(tensor_type.element_type)
    if dtype is None:
        return None
    data = np.ascontiguousarray(np.broadcast_to(np.asarray(array), tuple(tensor_type.get_shape())), dtype=dtype)
    return DenseIntOrFPElementsAttr(tensor_type, BytesAttr(data.tobytes()))  # type: ignore[arg-type]


def dense_of(array: np.ndarray, tensor_type: TensorType[Any]) -> DenseIntOrFPElementsAttr:
    """`numpy_to_dense` where the element type must have a dtype (a pass building a constant)."""
    dense = numpy_to_dense(array, tensor_type)
    if dense is None:
        raise ValueError(f"no NumPy dtype for the element type {tensor_type.element_type}")
    return dense


def attr_value(attr: Attribute):
    """A property as a plain Python value (int, float, str, tuple, or the attribute itself)."""
    if isinstance(attr, IntegerAttr):
        return attr.value.data
    if isinstance(attr, FloatAttr):
        return attr.value.data
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, DenseArrayBase):
        return tuple(attr.get_values())
    if isinstance(attr, ArrayAttr):
        return tuple(attr_value(a) for a in attr.data)
    return attr


def properties_with_defaults(op: IRDLOperation) -> dict[str, Attribute]:
    """Every property of `op`, absent ones with their IRDL default (segment sizes left out)."""
    props: dict[str, Attribute] = {}
    for name, definition in type(op).get_irdl_definition().properties.items():
        value = op.properties.get(name, definition.default_value)
        if value is not None and name != "operandSegmentSizes":
            props[name] = value
    return props


def op_params(op: IRDLOperation) -> dict[str, object]:
    """The op's properties as Python values, defaults filled in: a kernel's keyword arguments.

    A `dense<...>` property becomes its array here, so the kernels take plain NumPy values and
    import no xDSL (the runtime calls them where xDSL cannot be imported)."""
    return {
        k: dense_to_numpy(v) if isinstance(v, DenseIntOrFPElementsAttr) else attr_value(v)
        for k, v in properties_with_defaults(op).items()
    }


__all__ = ["attr_value", "dense_to_numpy", "element_dtype", "numpy_dtype", "numpy_to_dense", "op_params", "properties_with_defaults"]
