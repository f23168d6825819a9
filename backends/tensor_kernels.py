"""Reference kernels of the generic tensor ops (ONNX semantics, NCHW / OIHW).

Operands are NumPy arrays in the op's operand order (an absent optional
bias is `None`); properties are keyword arguments named as the op's
properties. Elementwise ops broadcast as NumPy does; every result is a
float32 `ndarray` (rank 0 for a full reduction without keepdims).
Convolution and pooling are vectorised over sliding-window views: no
per-pixel Python loops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

from cortex.ir import CortexError

F32 = np.float32


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


def as_f32(x) -> np.ndarray:
    return np.asarray(x, dtype=F32)


# ---------------------------------------------------------------- constants, elementwise


def constant(*, value) -> np.ndarray:
    """`value`: a DenseIntOrFPElementsAttr (as `op_params` gives it) or anything array-like."""
    if isinstance(value, DenseIntOrFPElementsAttr):
        return dense_to_numpy(value)
    return np.asarray(value)


def add(lhs, rhs):
    return np.add(lhs, rhs, dtype=F32)


def sub(lhs, rhs):
    return np.subtract(lhs, rhs, dtype=F32)


def mul(lhs, rhs):
    return np.multiply(lhs, rhs, dtype=F32)


def div(lhs, rhs):
    with np.errstate(divide="ignore", invalid="ignore"):  # IEEE: x/0 = ±inf, 0/0 = nan
        return np.divide(lhs, rhs, dtype=F32)


def pow(lhs, rhs):  # noqa: A001 - the op's name
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        return np.power(as_f32(lhs), as_f32(rhs), dtype=F32)


def neg(x):
    return np.negative(x, dtype=F32)


def exp(x):
    with np.errstate(over="ignore"):
        return np.exp(x, dtype=F32)


def log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x, dtype=F32)


def sqrt(x):
    with np.errstate(invalid="ignore"):
        return np.sqrt(x, dtype=F32)


def abs(x):  # noqa: A001 - the op's name
    return np.abs(x, dtype=F32)


def relu(x):
    return np.maximum(x, F32(0), dtype=F32)


def sigmoid(x):
    """1 / (1 + e^−x), with e^−x allowed to overflow to inf (giving 0)."""
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))).astype(F32)


def tanh(x):
    return np.tanh(x, dtype=F32)


_erf = np.frompyfunc(math.erf, 1, 1)


def gelu(x, *, approximate: str = "none"):
    """x·Φ(x): exact with erf ("none"), or 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) ("tanh")."""
    x64 = np.asarray(x, np.float64)
    if approximate == "none":
        cdf = 0.5 * (1.0 + _erf(x64 / math.sqrt(2.0)).astype(np.float64))
    elif approximate == "tanh":
        cdf = 0.5 * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x64 + 0.044715 * x64**3)))
    else:
        raise CortexError(f'gelu: approximate must be "none" or "tanh", got "{approximate}"')
    return (x64 * cdf).astype(F32)


# ---------------------------------------------------------------- linear algebra


def matmul(a, b):
    return np.matmul(a, b, dtype=F32)


def linear(x, weight, bias=None):
    """x·Wᵀ + b with W of shape N×K."""
    y = np.matmul(x, np.swapaxes(weight, -1, -2), dtype=F32)
    if bias is not None:
        y += as_f32(bias)
    return y


def batch_norm(x, scale, bias, mean, var, *, epsilon: float = 1e-5):
    """Inference batch norm over channel axis 1: (x − mean)/√(var + ε)·scale + bias."""
    x = as_f32(x)
    channel = (1, -1) + (1,) * (x.ndim - 2)

    def per_channel(p):
        return as_f32(p).reshape(channel)

    inv_std = per_channel(1.0 / np.sqrt(np.asarray(var, np.float64) + epsilon))
    return ((x - per_channel(mean)) * inv_std * per_channel(scale) + per_channel(bias)).astype(F32, copy=False)


def _pad_hw(x: np.ndarray, pads: Sequence[int], fill: float) -> np.ndarray:
    top, left, bottom, right = pads
    if not any(pads):
        return x
    return np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)


def _windows(x: np.ndarray, kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]) -> np.ndarray:
    """N×C×OH×OW×KH×KW view of the (already padded) NCHW input."""
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilations
    extent = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    if x.shape[2] < extent[0] or x.shape[3] < extent[1]:
        raise CortexError(f"window of extent {extent} does not fit the padded input of shape {x.shape}")
    view = sliding_window_view(x, extent, axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def conv2d(x, weight, bias=None, *, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1)):
    """NCHW × OIHW convolution (cross-correlation, as ONNX Conv), pads (top, left, bottom, right)."""
    x, weight = as_f32(x), as_f32(weight)
    patches = _windows(_pad_hw(x, pads, 0.0), weight.shape[2:], strides, dilations)
    y = np.tensordot(patches, weight, axes=([1, 4, 5], [1, 2, 3]))  # N×OH×OW×O
    y = np.ascontiguousarray(y.transpose(0, 3, 1, 2), dtype=F32)
    if bias is not None:
        y += as_f32(bias).reshape(1, -1, 1, 1)
    return y


def avg_pool(x, *, kernel_shape, strides=(1, 1), pads=(0, 0, 0, 0)):
    """Average over each window; padded cells are not counted (ONNX count_include_pad=0)."""
    x = as_f32(x)
    sums = _windows(_pad_hw(x, pads, 0.0), kernel_shape, strides, (1, 1)).sum(axis=(4, 5), dtype=np.float64)
    ones = np.ones((1, 1) + x.shape[2:], np.float64)
    counts = _windows(_pad_hw(ones, pads, 0.0), kernel_shape, strides, (1, 1)).sum(axis=(4, 5))
    return (sums / counts).astype(F32)


def max_pool(x, *, kernel_shape, strides=(1, 1), pads=(0, 0, 0, 0)):
    """Maximum over each window; padding is −inf, so it never wins."""
    x = as_f32(x)
    return _windows(_pad_hw(x, pads, -np.inf), kernel_shape, strides, (1, 1)).max(axis=(4, 5))


# ---------------------------------------------------------------- layout, reductions


def transpose(x, *, perm):
    return np.transpose(as_f32(x), perm)


def reshape(x, *, shape):
    """`shape` is the result type's shape: `run_kernel` reads it off the op (the op has no property)."""
    x = np.asarray(x)
    return np.reshape(x if x.dtype.kind in "iu" else as_f32(x), tuple(shape))  # i8 stays i8


def softmax(x, *, axis: int = -1):
    x = as_f32(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _axes(axes: Sequence[int]) -> tuple[int, ...] | None:
    return tuple(axes) if len(axes) else None


def reduce_sum(x, *, axes=(), keepdims: int = 1):
    return np.asarray(np.sum(as_f32(x), axis=_axes(axes), keepdims=bool(keepdims), dtype=F32))


def reduce_mean(x, *, axes=(), keepdims: int = 1):
    return np.asarray(np.mean(as_f32(x), axis=_axes(axes), keepdims=bool(keepdims), dtype=F32))


def reduce_max(x, *, axes=(), keepdims: int = 1):
    return np.asarray(np.max(as_f32(x), axis=_axes(axes), keepdims=bool(keepdims)))


TENSOR_KERNELS = {
    "cortex.constant": constant,
    "cortex.add": add,
    "cortex.sub": sub,
    "cortex.mul": mul,
    "cortex.div": div,
    "cortex.pow": pow,
    "cortex.neg": neg,
    "cortex.exp": exp,
    "cortex.log": log,
    "cortex.sqrt": sqrt,
    "cortex.abs": abs,
    "cortex.relu": relu,
    "cortex.sigmoid": sigmoid,
    "cortex.tanh": tanh,
    "cortex.gelu": gelu,
    "cortex.matmul": matmul,
    "cortex.linear": linear,
    "cortex.batch_norm": batch_norm,
    "cortex.conv2d": conv2d,
    "cortex.avg_pool": avg_pool,
    "cortex.max_pool": max_pool,
    "cortex.transpose": transpose,
    "cortex.reshape": reshape,
    "cortex.softmax": softmax,
    "cortex.reduce_sum": reduce_sum,
    "cortex.reduce_mean": reduce_mean,
    "cortex.reduce_max": reduce_max,
}
