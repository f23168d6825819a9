"""Lowering of the quantised ops to linalg on i8 / i32 (upstream MLIR runs it).

- quantize / dequantize / requantize / qrelu: one elementwise `linalg.generic`
  each (`arith.divf`, `math.roundeven`, clamp, `arith.fptosi` to i8;
  `arith.extsi`, `arith.subi`, `arith.sitofp`, `arith.mulf` back);
- qconv2d / qlinear / qmatmul: a zero-point-padded copy (conv), then a
  `linalg.generic` contraction with the body `acc + (extsi x − x_zp)·(extsi w − w_zp)`
  on i32 (upstream's `linalg.quantized_matmul` / `conv_2d_nchw_fchw_q`
  semantics; written as generics, which xDSL 0.74 has), accumulating
  into the broadcast i32 bias; then one elementwise rescale to i8 with the
  per-channel f32 multipliers;
- qmax_pool: a −128-padded copy and a windowed `linalg.generic` of `arith.maxsi`.

Each computes the same integers as its reference kernel
(`cortex.semantics.quant_kernels`).
"""

from __future__ import annotations

import math as pymath

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, f32, i32
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from cortex.dialects import quant as q
from cortex.dialects.quant import Q_MAX, Q_MIN, i8
from cortex.lowering.base import CortexLowering, lowers
from cortex.lowering.builders import PARALLEL, REDUCTION, LinalgBuilder, affine_map, shape_of
from cortex.lowering.tensor_ops import constant_value

# ---------------------------------------------------------------- scalar bodies


def _f(value: float) -> SSAValue:
    return arith.ConstantOp(FloatAttr(float(value), f32)).result


def _i(value: int, element: IntegerType = i32) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(int(value), element)).result


def widen(x: SSAValue, zero_point: int) -> SSAValue:
    """i8 → i32, minus the zero point."""
    wide = arith.ExtSIOp(x, i32).result
    return arith.SubiOp(wide, _i(zero_point)).result if zero_point else wide


def to_f32(x: SSAValue) -> SSAValue:
    return arith.SIToFPOp(x, f32).result


def saturate(v: SSAValue, zero_point: int) -> SSAValue:
    """f32 → i8: clamp(round_half_even(v) + zero_point, −128, 127)."""
    v = math.RoundEvenOp(v).result
    if zero_point:
        v = arith.AddfOp(v, _f(zero_point)).result
    v = arith.MinimumfOp(arith.MaximumfOp(v, _f(Q_MIN)).result, _f(Q_MAX)).result
    return arith.FPToSIOp(v, i8).result


# ---------------------------------------------------------------- edges


@lowers(q.QuantizeOp)
class LowerQuantize(CortexLowering[q.QuantizeOp]):
    def lower(self, op: q.QuantizeOp, b: LinalgBuilder) -> list[SSAValue]:
        scale, zp = op.params
        return [b.elementwise(lambda x: saturate(arith.DivfOp(x, _f(scale)).result, zp), op.x, element=i8)]


@lowers(q.DequantizeOp)
class LowerDequantize(CortexLowering[q.DequantizeOp]):
    def lower(self, op: q.DequantizeOp, b: LinalgBuilder) -> list[SSAValue]:
        scale, zp = op.params
        return [b.elementwise(lambda x: arith.MulfOp(to_f32(widen(x, zp)), _f(scale)).result, op.x, element=f32)]


@lowers(q.RequantizeOp)
class LowerRequantize(CortexLowering[q.RequantizeOp]):
    def lower(self, op: q.RequantizeOp, b: LinalgBuilder) -> list[SSAValue]:
        multiplier = float(op.multiplier())
        in_zp, out_zp = op.in_zero_point.value.data, op.zero_point.value.data
        return [
            b.elementwise(lambda x: saturate(arith.MulfOp(to_f32(widen(x, in_zp)), _f(multiplier)).result, out_zp), op.x, element=i8)
        ]


@lowers(q.QReluOp)
class LowerQRelu(CortexLowering[q.QReluOp]):
    def lower(self, op: q.QReluOp, b: LinalgBuilder) -> list[SSAValue]:
        zp = op.zero_point.value.data
        return [b.elementwise(lambda x: arith.MaxSIOp(x, _i(zp, i8)).result, op.x, element=i8)]


@lowers(q.QMaxPoolOp)
class LowerQMaxPool(CortexLowering[q.QMaxPoolOp]):
    """−128-padded copy, then window maxima (`arith.maxsi`) from −128."""

    def lower(self, op: q.QMaxPoolOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], Q_MIN)
        init = b.full(shape_of(op.result), Q_MIN, i8)
        kernel, (sh, sw) = op.kernel_shape.get_values(), op.strides.get_values()
        n, c, oh, ow, kh, kw = (AffineDimExpr(i) for i in range(6))
        maps = [affine_map(6, [n, c, oh * sh + kh, ow * sw + kw]), affine_map(6, [kh, kw]), affine_map(6, [n, c, oh, ow])]
        window = b.empty(kernel, i8)
        body = lambda value, _w, acc: arith.MaxSIOp(value, acc).result  # noqa: E731
        return [b.generic([x, window], init, maps, [PARALLEL] * 4 + [REDUCTION] * 2, body)]


# ---------------------------------------------------------------- int8 × int8 → int32 → int8


def mac_body(x_zp: int, w_zp: int):
    """acc + (extsi x − x_zp)·(extsi w − w_zp), on i32."""
    return lambda x, w, acc: arith.AddiOp(acc, arith.MuliOp(widen(x, x_zp), widen(w, w_zp)).result).result


def rescale(b: LinalgBuilder, op: q.QuantComputeOp, acc: SSAValue, channel_dim: int) -> SSAValue:
    """i32 accumulator → i8: clamp(rint(f32(acc)·M[c]) + out_zp), M per channel along `channel_dim`."""
    factors = op.multipliers()
    zp = op.out_zero_point.value.data
    if len(factors) == 1:
        m = float(factors[0])
        return b.elementwise(lambda a: saturate(arith.MulfOp(to_f32(a), _f(m)).result, zp), acc, element=i8)
    shape = shape_of(acc)
    rank = len(shape)
    per_channel = b.constant(factors, f32)
    maps = [affine_map(rank, range(rank)), affine_map(rank, [channel_dim]), affine_map(rank, range(rank))]
    body = lambda a, m, _out: saturate(arith.MulfOp(to_f32(a), m).result, zp)  # noqa: E731
    return b.generic([acc, per_channel], b.empty(shape, i8), maps, [PARALLEL] * rank, body)


def accumulator(b: LinalgBuilder, bias: SSAValue | None, shape, added_dims) -> SSAValue:
    if bias is not None:
        return b.broadcast(bias, shape, added_dims)
    return b.full(shape, 0, i32)


@lowers(q.QConv2dOp)
class LowerQConv2d(CortexLowering[q.QConv2dOp]):
    """x padded with its zero point; Σ over (c, kh, kw) in a `linalg.generic` on i32; rescale."""

    def lower(self, op: q.QConv2dOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x_zp, w_zp = op.x_zero_point.value.data, op.w_zero_point.value.data
        x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], x_zp)
        out = shape_of(op.result)
        acc = accumulator(b, op.bias, out, [0, 2, 3])
        (sh, sw), (dh, dw) = op.strides.get_values(), op.dilations.get_values()
        n, o, oh, ow, c, kh, kw = (AffineDimExpr(i) for i in range(7))
        maps = [
            affine_map(7, [n, c, oh * sh + kh * dh, ow * sw + kw * dw]),
            affine_map(7, [o, c, kh, kw]),
            affine_map(7, [n, o, oh, ow]),
        ]
        acc = b.generic([x, op.weight], acc, maps, [PARALLEL] * 4 + [REDUCTION] * 3, mac_body(x_zp, w_zp))
        return [rescale(b, op, acc, 1)]


def matmul_i32(b: LinalgBuilder, a: SSAValue, w: SSAValue, acc: SSAValue, a_zp: int, w_zp: int) -> SSAValue:
    maps = [affine_map(3, [0, 2]), affine_map(3, [2, 1]), affine_map(3, [0, 1])]
    return b.generic([a, w], acc, maps, [PARALLEL, PARALLEL, REDUCTION], mac_body(a_zp, w_zp))


@lowers(q.QLinearOp)
class LowerQLinear(CortexLowering[q.QLinearOp]):
    """x·Wᵀ on i32 (a constant W is transposed at compile time) into the broadcast bias; rescale."""

    def lower(self, op: q.QLinearOp, b: LinalgBuilder) -> list[SSAValue]:
        n, k = shape_of(op.weight)
        weight = constant_value(op.weight)
        weight_t = b.constant(np.ascontiguousarray(weight.T), i8) if weight is not None else b.transpose(op.weight, [1, 0])
        out = shape_of(op.result)
        rows = pymath.prod(out[:-1])
        x = b.reshape(op.x, (rows, k))
        acc = accumulator(b, op.bias, (rows, n), [0])
        acc = matmul_i32(b, x, weight_t, acc, op.x_zero_point.value.data, op.w_zero_point.value.data)
        return [b.reshape(rescale(b, op, acc, 1), out)]


@lowers(q.QMatmulOp)
class LowerQMatmul(CortexLowering[q.QMatmulOp]):
    def lower(self, op: q.QMatmulOp, b: LinalgBuilder) -> list[SSAValue]:
        acc = b.full(shape_of(op.result), 0, i32)
        acc = matmul_i32(b, op.a, op.b, acc, op.x_zero_point.value.data, op.w_zero_point.value.data)
        return [rescale(b, op, acc, 1)]


@lowers(q.QAddOp)
class LowerQAdd(CortexLowering[q.QAddOp]):
    """One elementwise generic (broadcasting): each side to f32 at the output's scale, add, saturate."""

    def lower(self, op: q.QAddOp, b: LinalgBuilder) -> list[SSAValue]:
        ma, mb = (float(m) for m in op.multipliers())
        za, zb, zo = (getattr(op, n).value.data for n in ("lhs_zero_point", "rhs_zero_point", "out_zero_point"))

        def body(x: SSAValue, y: SSAValue) -> SSAValue:
            a = arith.MulfOp(to_f32(widen(x, za)), _f(ma)).result
            c = arith.MulfOp(to_f32(widen(y, zb)), _f(mb)).result
            return saturate(arith.AddfOp(a, c).result, zo)

        return [b.elementwise(body, op.lhs, op.rhs, element=i8, shape=shape_of(op.result))]

__all__ = ["LowerDequantize", "LowerQAdd", "LowerQConv2d", "LowerQLinear", "LowerQMatmul", "LowerQMaxPool", "LowerQRelu", "LowerQuantize", "LowerRequantize"]
