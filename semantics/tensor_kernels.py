"""Reference kernels of the generic tensor ops (ONNX semantics, NCHW / OIHW).

Operands are NumPy arrays in the op's operand order (an absent optional
bias is `None`); properties are keyword arguments named as the op's
properties. Elementwise ops broadcast as NumPy does; every result is an
`ndarray` of the op's declared float type (rank 0 for a full reduction
without keepdims): float64 operands (`cortex.cast` makes them: scene
change's decomposition computes its SSIM moments in float64) give float64,
anything else float32. The reference is the ground truth and canonicalize
folds with these kernels, so none may round an f64 operand to float32.
Convolution and pooling are vectorised over sliding-window views: no
per-pixel Python loops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from cortex.errors import CortexError
from cortex.semantics import defaults as D
from cortex.semantics.kernel_table import kernel

F32 = np.float32


def as_f32(x) -> np.ndarray:
    return np.asarray(x, dtype=F32)


def as_float(x, *others) -> np.ndarray:
    """`x` as the op's float type (`float_type` of `x` and the op's other operands)."""
    return np.asarray(x, dtype=float_type(x, *others))


def float_type(*values) -> type[np.floating]:
    """float64 when an operand is a float64 array (the op's type says f64), else float32."""
    return np.float64 if any(getattr(v, "dtype", None) == np.float64 for v in values) else F32


# ---------------------------------------------------------------- constants, elementwise


@kernel("cortex.constant")
def constant(*, value) -> np.ndarray:
    """`value`: anything array-like (`op_params` gives a `dense<...>` property as its array)."""
    return np.asarray(value)


@kernel("cortex.add")
def add(lhs, rhs):
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE: overflow to ±inf, inf - inf = nan
        return np.add(lhs, rhs, dtype=float_type(lhs, rhs))


@kernel("cortex.sub")
def sub(lhs, rhs):
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE: overflow to ±inf, inf - inf = nan
        return np.subtract(lhs, rhs, dtype=float_type(lhs, rhs))


@kernel("cortex.mul")
def mul(lhs, rhs):
    with np.errstate(over="ignore", invalid="ignore"):  # IEEE: overflow to ±inf, inf · 0 = nan
        return np.multiply(lhs, rhs, dtype=float_type(lhs, rhs))


@kernel("cortex.div")
def div(lhs, rhs):
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # IEEE: x/0 = ±inf, 0/0 = nan
        return np.divide(lhs, rhs, dtype=float_type(lhs, rhs))


@kernel("cortex.pow")
def pow(lhs, rhs):  # noqa: A001 - the op's name
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        t = float_type(lhs, rhs)
        return np.power(np.asarray(lhs, t), np.asarray(rhs, t), dtype=t)


@kernel("cortex.neg")
def neg(x):
    return np.negative(x, dtype=float_type(x))


@kernel("cortex.exp")
def exp(x):
    with np.errstate(over="ignore"):
        return np.exp(x, dtype=float_type(x))


@kernel("cortex.log")
def log(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.log(x, dtype=float_type(x))


@kernel("cortex.sqrt")
def sqrt(x):
    with np.errstate(invalid="ignore"):
        return np.sqrt(x, dtype=float_type(x))


@kernel("cortex.abs")
def abs(x):  # noqa: A001 - the op's name
    return np.abs(x, dtype=float_type(x))


@kernel("cortex.relu")
def relu(x):
    t = float_type(x)
    return np.maximum(x, t(0), dtype=t)


@kernel("cortex.sigmoid")
def sigmoid(x):
    """1 / (1 + e^−x), with e^−x allowed to overflow to inf (giving 0)."""
    with np.errstate(over="ignore"):
        return (1.0 / (1.0 + np.exp(-np.asarray(x, np.float64)))).astype(float_type(x))


@kernel("cortex.tanh")
def tanh(x):
    return np.tanh(x, dtype=float_type(x))


_erfc = np.frompyfunc(math.erfc, 1, 1)


@kernel("cortex.gelu")
def gelu(x, *, approximate: str = D.GELU_APPROXIMATE):
    """x·Φ(x): exact with erf ("none"), or 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) ("tanh").

    Written without the cancelling 1 + erf / 1 + tanh, so the negative tail keeps its digits
    (gelu(-6) = -5.9e-9, not 0): Φ(x) = erfc(-x/√2)/2, and 1 + tanh(u) = 2/(1 + e^(-2u)).
    """
    x64 = np.asarray(x, np.float64)
    if approximate == "none":
        cdf = 0.5 * np.asarray(_erfc(-x64 / math.sqrt(2.0)), np.float64)
    elif approximate == "tanh":
        with np.errstate(over="ignore"):
            cdf = 1.0 / (1.0 + np.exp(-2.0 * D.GELU_TANH_C * (x64 + D.GELU_TANH_K * x64**3)))
    else:
        raise CortexError(f'gelu: approximate must be "none" or "tanh", got "{approximate}"')
    with np.errstate(invalid="ignore"):  # -inf · 0
        return (x64 * cdf).astype(float_type(x))


# ---------------------------------------------------------------- linear algebra


@kernel("cortex.max")
def maximum(lhs, rhs):
    return np.maximum(lhs, rhs, dtype=float_type(lhs, rhs))


@kernel("cortex.select")
def select(cond, x, y):
    """`x` where `cond`, else `y` (NumPy broadcasting; ONNX Where)."""
    return np.asarray(np.where(np.asarray(cond, bool), x, y))


_COMPARE = {"eq": np.equal, "gt": np.greater, "lt": np.less, "ge": np.greater_equal, "le": np.less_equal}


@kernel("cortex.compare")
def compare(lhs, rhs, *, predicate: str):
    """`lhs <predicate> rhs` as a bool array (NumPy broadcasting; false where either side is nan)."""
    if predicate not in _COMPARE:
        raise CortexError(f"compare: predicate must be one of {', '.join(_COMPARE)}, got \"{predicate}\"")
    with np.errstate(invalid="ignore"):
        return np.asarray(_COMPARE[predicate](np.asarray(lhs), np.asarray(rhs)))


@kernel("cortex.not")
def logical_not(x):
    return np.asarray(np.logical_not(np.asarray(x, bool)))


@kernel("cortex.and")
def logical_and(lhs, rhs):
    return np.asarray(np.logical_and(np.asarray(lhs, bool), np.asarray(rhs, bool)))


@kernel("cortex.or")
def logical_or(lhs, rhs):
    return np.asarray(np.logical_or(np.asarray(lhs, bool), np.asarray(rhs, bool)))


@kernel("cortex.xor")
def logical_xor(lhs, rhs):
    return np.asarray(np.logical_xor(np.asarray(lhs, bool), np.asarray(rhs, bool)))


@kernel("cortex.min")
def minimum(lhs, rhs):
    return np.minimum(lhs, rhs, dtype=float_type(lhs, rhs))


_ERF = np.vectorize(math.erf, otypes=[np.float64])


@kernel("cortex.erf")
def erf(x):
    """math.erf of each element, computed in float64 and rounded once to the op's type."""
    x = np.asarray(x)
    return np.asarray(_ERF(x.astype(np.float64)), dtype=float_type(x)).reshape(x.shape)


@kernel("cortex.matmul")
def matmul(a, b):
    return np.matmul(a, b, dtype=float_type(a, b))


@kernel("cortex.linear")
def linear(x, weight, bias=None):
    """x·Wᵀ + b with W of shape N×K."""
    y = np.matmul(x, np.swapaxes(weight, -1, -2), dtype=F32)
    if bias is not None:
        y += as_f32(bias)
    return y


@kernel("cortex.batch_norm")
def batch_norm(x, scale, bias, mean, var, *, epsilon: float = D.BATCH_NORM_EPSILON):
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


@kernel("cortex.conv2d")
def conv2d(x, weight, bias=None, *, strides=D.STRIDES, pads=D.PADS, dilations=D.DILATIONS, group: int = D.CONV_GROUP):
    """NCHW × OIHW convolution (cross-correlation, as ONNX Conv), pads (top, left, bottom, right);
    `group` g: the channels and the filters in g groups, filter group i on channel group i."""
    x, weight = as_f32(x), as_f32(weight)
    patches = _windows(_pad_hw(x, pads, 0.0), weight.shape[2:], strides, dilations)
    n, c, oh, ow, kh, kw = patches.shape
    grouped = patches.reshape(n, group, c // group, oh, ow, kh, kw)
    filters = weight.reshape(group, weight.shape[0] // group, *weight.shape[1:])  # G×O/G×C/G×KH×KW
    y = np.einsum("ngchwij,gocij->nhwgo", grouped, filters, optimize=True).reshape(n, oh, ow, -1)  # N×OH×OW×O
    y = np.ascontiguousarray(y.transpose(0, 3, 1, 2), dtype=F32)
    if bias is not None:
        y += as_f32(bias).reshape(1, -1, 1, 1)
    return y


@kernel("cortex.avg_pool")
def avg_pool(x, *, kernel_shape, strides=D.STRIDES, pads=D.PADS, dilations=D.DILATIONS):
    """Average over each (dilated) window; padded cells are not counted (ONNX count_include_pad=0)."""
    x = as_f32(x)
    sums = _windows(_pad_hw(x, pads, 0.0), kernel_shape, strides, dilations).sum(axis=(4, 5), dtype=np.float64)
    ones = np.ones((1, 1) + x.shape[2:], np.float64)
    counts = _windows(_pad_hw(ones, pads, 0.0), kernel_shape, strides, dilations).sum(axis=(4, 5))
    return (sums / counts).astype(F32)


@kernel("cortex.max_pool")
def max_pool(x, *, kernel_shape, strides=D.STRIDES, pads=D.PADS, dilations=D.DILATIONS):
    """Maximum over each (dilated) window; padding is −inf, so it never wins."""
    x = as_f32(x)
    return _windows(_pad_hw(x, pads, -np.inf), kernel_shape, strides, dilations).max(axis=(4, 5))


# ---------------------------------------------------------------- layout, reductions


@kernel("cortex.transpose")
def transpose(x, *, perm):
    return np.transpose(as_float(x), perm)


@kernel("cortex.reshape")
def reshape(x, *, shape):
    """`shape` is the result type's shape: `run_kernel` reads it off the op (the op has no property)."""
    x = np.asarray(x)
    return np.reshape(x if x.dtype.kind in "iu" else as_f32(x), tuple(shape))  # i8 stays i8


@kernel("cortex.softmax")
def softmax(x, *, axis: int = D.SOFTMAX_AXIS):
    x = as_float(x)
    if x.size == 0:  # nothing to normalise (a zero-size axis has no max): the empty result, as ONNX Runtime gives
        return x.copy()
    shifted = x - x.max(axis=axis, keepdims=True)
    e = np.exp(shifted)
    return e / e.sum(axis=axis, keepdims=True)


def _axes(axes: Sequence[int]) -> tuple[int, ...] | None:
    return tuple(axes) if len(axes) else None


@kernel("cortex.reduce_sum")
def reduce_sum(x, *, axes=(), keepdims: int = D.KEEPDIMS):
    t = float_type(x)
    return np.asarray(np.sum(np.asarray(x, t), axis=_axes(axes), keepdims=bool(keepdims), dtype=t))


@kernel("cortex.reduce_mean")
def reduce_mean(x, *, axes=(), keepdims: int = D.KEEPDIMS):
    t = float_type(x)
    return np.asarray(np.mean(np.asarray(x, t), axis=_axes(axes), keepdims=bool(keepdims), dtype=t))


@kernel("cortex.cast")
def cast(x, *, dtype):
    """`x` converted to `dtype` (the result's float type; round to nearest even when narrowing)."""
    return np.asarray(x).astype(dtype)


@kernel("cortex.to_scalar")
def to_scalar(x, *, dtype):
    """The one element of a rank-0 tensor, rounded to `dtype`, as a Python float."""
    return float(np.asarray(x).astype(dtype).reshape(()))


@kernel("cortex.reduce_max")
def reduce_max(x, *, axes=(), keepdims: int = D.KEEPDIMS):
    """The maximum; of an empty set, −inf (ONNX ReduceMax)."""
    return np.asarray(np.max(as_float(x), axis=_axes(axes), keepdims=bool(keepdims), initial=-np.inf))


# ---------------------------------------------------------------- data movement


@kernel("cortex.concat")
def concat(inputs, *, axis: int):
    """The operands (one variadic group, a sequence) joined along `axis`."""
    return np.concatenate([np.asarray(v) for v in inputs], axis=axis).astype(float_type(*inputs), copy=False)


@kernel("cortex.pad")
def pad(x, *, pads, value: float = 0.0):
    """ONNX Pad, constant mode: `pads` = (before each axis..., after each axis...)."""
    x = as_float(x)
    rank = x.ndim
    widths = list(zip(pads[:rank], pads[rank:]))
    return np.pad(x, widths, constant_values=x.dtype.type(value))


@kernel("cortex.slice")
def slice_(x, *, starts, sizes, steps):
    """Along each axis `sizes` elements from `starts`, `steps` apart (a negative size: the whole axis)."""
    x = as_float(x)
    index = tuple(
        slice(None) if size < 0 else slice(start, start + (size - 1) * step + 1 if size else start, step)
        for start, size, step in zip(starts, sizes, steps)
    )
    return np.ascontiguousarray(x[index])
