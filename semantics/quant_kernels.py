"""Reference kernels of the quantised ops: integer arithmetic, as the hardware would do it.

Values are int8 arrays; products accumulate in int32 (exact integer matmul /
tensordot, no float emulation; summed in int64 so that a sum beyond int32 is a
CortexError naming the op instead of a wrapped value); only the final per-channel rescale
multiplies the i32 accumulator by an f32 factor and rounds half to even,
which is what the lowering and the NumPy backend compute too.
"""

from __future__ import annotations

import numpy as np

from cortex.errors import CortexError
from cortex.semantics.defaults import Q_MAX, Q_MIN, ZERO_POINT
from cortex.semantics.kernel_table import kernel
from cortex.semantics.tensor_kernels import _pad_hw, _windows

I32 = np.int32
I64 = np.int64
I32_MAX = int(np.iinfo(np.int32).max)


def accumulator(acc: np.ndarray, op: str) -> np.ndarray:
    """The int64 sum `acc` as the int32 accumulator it stands for, or a CortexError naming `op` where it overflows."""
    if acc.size and (int(acc.max()) > I32_MAX or int(acc.min()) < -I32_MAX - 1):
        peak = int(max(acc.max(), -acc.min()))
        raise CortexError(f"{op}: the int32 accumulator overflows (a sum reaches {peak}); it would wrap")
    return acc.astype(I32)


def saturate(values: np.ndarray) -> np.ndarray:
    """Round-half-even then clamp to int8 (values are f32)."""
    return np.clip(np.rint(values), Q_MIN, Q_MAX).astype(np.int8)


@kernel("cortex.quantize")
def quantize(x, *, scale: float, zero_point: int = ZERO_POINT) -> np.ndarray:
    scaled = np.divide(np.asarray(x, np.float32), np.float32(scale), dtype=np.float32)
    return np.clip(np.rint(scaled) + np.float32(zero_point), Q_MIN, Q_MAX).astype(np.int8)


@kernel("cortex.dequantize")
def dequantize(x, *, scale: float, zero_point: int = ZERO_POINT) -> np.ndarray:
    centred = np.asarray(x).astype(I32) - I32(zero_point)
    return centred.astype(np.float32) * np.float32(scale)


@kernel("cortex.requantize")
def requantize(x, *, in_scale: float, in_zero_point: int, scale: float, zero_point: int) -> np.ndarray:
    multiplier = np.float32(in_scale / scale)
    centred = (np.asarray(x).astype(I32) - I32(in_zero_point)).astype(np.float32)
    return np.clip(np.rint(centred * multiplier) + np.float32(zero_point), Q_MIN, Q_MAX).astype(np.int8)


def multipliers(x_scale: float, w_scales, out_scale: float) -> np.ndarray:
    """x_scale·w_scale[c]/out_scale per output channel, in f32 (as `QuantComputeOp.multipliers`)."""
    return (x_scale * np.asarray(w_scales, np.float64) / out_scale).astype(np.float32)


def rescale(acc: np.ndarray, factors: np.ndarray, out_zero_point: int) -> np.ndarray:
    """i32 accumulator → i8 output: clamp(rint(f32(acc)·factor) + zp)."""
    scaled = acc.astype(np.float32) * factors
    return np.clip(np.rint(scaled) + np.float32(out_zero_point), Q_MIN, Q_MAX).astype(np.int8)


def centred(q, zero_point: int) -> np.ndarray:
    return np.asarray(q).astype(I32) - I32(zero_point)


def wide(q, zero_point: int) -> np.ndarray:
    """`centred` in int64: the accumulation's own type, so an overflow is seen, not wrapped."""
    return np.asarray(q).astype(I64) - I64(zero_point)


@kernel("cortex.qconv2d")
def qconv2d(
    x, weight, bias=None, *, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1),
    x_scale, x_zero_point=0, w_scales, w_zero_point=0, out_scale, out_zero_point=0,
):
    """NCHW × OIHW; x is padded with its zero point (the quantised 0.0)."""
    xc = _pad_hw(wide(x, x_zero_point), pads, 0)
    patches = _windows(xc, np.asarray(weight).shape[2:], strides, dilations)
    acc = np.tensordot(patches, wide(weight, w_zero_point), axes=([1, 4, 5], [1, 2, 3]))  # N×OH×OW×O
    acc = np.ascontiguousarray(acc.transpose(0, 3, 1, 2))
    if bias is not None:
        acc += np.asarray(bias, I32).astype(I64).reshape(1, -1, 1, 1)
    acc = accumulator(acc, "cortex.qconv2d")
    factors = multipliers(x_scale, w_scales, out_scale).reshape(1, -1, 1, 1)
    return rescale(acc, factors, out_zero_point)


@kernel("cortex.qlinear")
def qlinear(x, weight, bias=None, *, x_scale, x_zero_point=0, w_scales, w_zero_point=0, out_scale, out_zero_point=0):
    acc = np.matmul(wide(x, x_zero_point), wide(weight, w_zero_point).T)
    if bias is not None:
        acc += np.asarray(bias, I32).astype(I64)
    acc = accumulator(acc, "cortex.qlinear")
    return rescale(acc, multipliers(x_scale, w_scales, out_scale), out_zero_point)


@kernel("cortex.qmatmul")
def qmatmul(a, b, *, x_scale, x_zero_point=0, w_scales, w_zero_point=0, out_scale, out_zero_point=0):
    acc = accumulator(np.matmul(wide(a, x_zero_point), wide(b, w_zero_point)), "cortex.qmatmul")
    return rescale(acc, multipliers(x_scale, w_scales, out_scale), out_zero_point)


@kernel("cortex.qrelu")
def qrelu(x, *, zero_point=0):
    return np.maximum(np.asarray(x, np.int8), np.int8(zero_point))


@kernel("cortex.qmax_pool")
def qmax_pool(x, *, kernel_shape, strides=(1, 1), pads=(0, 0, 0, 0)):
    x = np.asarray(x, np.int8)
    return _windows(_pad_hw(x, pads, Q_MIN), kernel_shape, strides, (1, 1)).max(axis=(4, 5))


@kernel("cortex.qadd")
def qadd(lhs, rhs, *, lhs_scale, lhs_zero_point=0, rhs_scale, rhs_zero_point=0, out_scale, out_zero_point=0):
    """Each side rescaled to the output's scale in f32, summed, rounded half to even, clamped."""
    ma, mb = np.float32(lhs_scale / out_scale), np.float32(rhs_scale / out_scale)
    a = centred(lhs, lhs_zero_point).astype(np.float32) * ma
    b = centred(rhs, rhs_zero_point).astype(np.float32) * mb
    return np.clip(np.rint(a + b) + np.float32(out_zero_point), Q_MIN, Q_MAX).astype(np.int8)


__all__ = ["dequantize", "multipliers", "quantize", "requantize"]
