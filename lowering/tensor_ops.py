"""Lowering of the generic tensor ops (ONNX semantics) to linalg/tensor/arith/math.

Elementwise ops become one `linalg.generic` whose indexing maps encode
NumPy broadcasting; contractions use `linalg.matmul` (a broadcasting
`linalg.generic` for batched ones), convolution the NCHW named op and
pooling a windowed `linalg.generic`, both after a constant-padded copy;
reductions `linalg.reduce`.
Semantics are the reference kernels' (`cortex.semantics.tensor_kernels`).
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap

from cortex.dialects import tensor_ops as ops
from cortex.dialects.folding import constant_array
from cortex.dialects.shapes import normalise_axis
from cortex.lowering import builders as s
from cortex.lowering.base import CortexLowering, lowers, register_lowering
from cortex.lowering.builders import (
    PARALLEL,
    REDUCTION,
    LinalgBuilder,
    affine_map,
    element_of,
    shape_of,
)
from cortex.semantics import defaults as D

# ---------------------------------------------------------------- elementwise


def _c(like: SSAValue, value: float) -> SSAValue:
    """A scalar constant of `like`'s float type, inside a body."""
    return s.const(value, like.type)


def _relu(x: SSAValue) -> SSAValue:
    return s.maxf(x, _c(x, 0.0))


def _sigmoid(x: SSAValue) -> SSAValue:
    return s.divf(_c(x, 1.0), s.addf(_c(x, 1.0), s.exp(s.negf(x))))


ERFC_COEFFICIENTS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398,
                     1.48851587, -0.82215223, 0.17087277)
"""erfc(z) ≈ t·exp(-z² + c₀ + t·(c₁ + t·(c₂ + … + t·c₉))), t = 1/(1 + z/2), for z ≥ 0: relative error under
1.2e-7 everywhere (Numerical Recipes' Chebyshev fit), i.e. the tail keeps its digits where 1 + erf cancels."""


def _tail_factors(x: SSAValue) -> tuple[SSAValue, SSAValue]:
    """(f, g) with f·g = erfc(|x|/√2)/2 = Φ(-|x|), accurate in relative terms out to where it underflows;
    f is of order 1 and g = exp(-h²/2) carries the magnitude.

    exp(-x²/2) is exp(-h²/2)·exp(-(|x|-h)(|x|+h)/2) with h = ⌊64|x|⌋/64: h² is exact, so the large exponent
    carries no rounding error (computing z = |x|/√2 first and squaring it cost ~x² ULPs: 100 at x = -9).
    The caller multiplies x into f before g, so no intermediate underflows before the result does (IREE
    flushes subnormals). |x| is clamped where Φ underflows (16 for f32, 40 for f64): inf stays finite.
    """
    limit = 16.0 if getattr(x.type, "bitwidth", 32) <= 32 else 40.0
    a = s.minf(s.absf(x), _c(x, limit))
    t = s.divf(_c(x, 1.0), s.addf(_c(x, 1.0), s.mulf(a, _c(x, 0.5 * pymath.sqrt(0.5)))))
    poly = _c(x, ERFC_COEFFICIENTS[-1])
    for c in reversed(ERFC_COEFFICIENTS[1:-1]):
        poly = s.addf(_c(x, c), s.mulf(t, poly))
    h = s.mulf(s.floor(s.mulf(a, _c(x, 64.0))), _c(x, 1.0 / 64.0))
    big = s.exp(s.mulf(s.mulf(h, h), _c(x, -0.5)))
    small = s.addf(s.mulf(s.mulf(s.subf(h, a), s.addf(h, a)), _c(x, 0.5)), s.addf(_c(x, ERFC_COEFFICIENTS[0]), s.mulf(t, poly)))
    return s.mulf(s.mulf(_c(x, 0.5), t), s.exp(small)), big


def _gelu_erf(x: SSAValue) -> SSAValue:
    """x·Φ(x), Φ(x) = erfc(-x/√2)/2: x·Φ(-|x|) directly for x < 0, x·(1 - Φ(-|x|)) otherwise (no 1 + erf to cancel)."""
    f, g = _tail_factors(x)
    negative = s.mulf(s.mulf(x, f), g)
    positive = s.mulf(x, s.subf(_c(x, 1.0), s.mulf(f, g)))
    return s.select(s.cmpf(x, _c(x, 0.0), "olt"), negative, positive)


def _gelu_tanh(x: SSAValue) -> SSAValue:
    """0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), as x·σ(2u) without the cancelling 1 + tanh.

    With e = exp(-2|u|): x/(1 + e) for u ≥ 0, x·e/(1 + e) for u < 0, where x·e is x·exp(16 - 2|u|)·exp(-16):
    e alone is subnormal from u ≈ -44 on, while the result x·e still is a normal number, and IREE flushes
    subnormal intermediates (gelu(-10) came out -0.0 instead of -1.1e-37).
    """
    cube = s.mulf(s.mulf(x, x), x)
    u = s.mulf(_c(x, D.GELU_TANH_C), s.addf(x, s.mulf(_c(x, D.GELU_TANH_K), cube)))
    minus_two_abs = s.mulf(s.absf(u), _c(x, -2.0))
    denominator = s.addf(_c(x, 1.0), s.exp(minus_two_abs))
    positive = s.divf(x, denominator)
    scaled = s.mulf(x, s.exp(s.addf(minus_two_abs, _c(x, GELU_TAIL_SHIFT))))
    negative = s.mulf(s.divf(scaled, denominator), _c(x, pymath.exp(-GELU_TAIL_SHIFT)))
    return s.select(s.cmpf(u, _c(x, 0.0), "olt"), negative, positive)


GELU_TAIL_SHIFT = 16.0
"""The tanh GELU's tail computes x·exp(16 - 2|u|)·exp(-16): the first product stays normal as long as the result can."""


UNARY_BODIES: dict[type[Operation], Callable[[SSAValue], SSAValue]] = {
    ops.NegOp: s.negf,
    ops.ExpOp: s.exp,
    ops.LogOp: s.log,
    ops.SqrtOp: s.sqrt,
    ops.AbsOp: s.absf,
    ops.ReluOp: _relu,
    ops.SigmoidOp: _sigmoid,
    ops.TanhOp: s.tanh,
    ops.ErfOp: s.erf,
}

BINARY_BODIES: dict[type[Operation], Callable[[SSAValue, SSAValue], SSAValue]] = {
    ops.AddOp: s.addf,
    ops.SubOp: s.subf,
    ops.MulOp: s.mulf,
    ops.DivOp: s.divf,
    ops.PowOp: s.powf,
    ops.MaxOp: s.maxf,
    ops.MinOp: s.minf,
}


class LowerElementwise(CortexLowering[Operation]):
    """One elementwise op class → `linalg.generic` with broadcasting maps around `body`."""

    def __init__(self, body: Callable[..., SSAValue]):
        self.body = body

    def lower(self, op: Operation, b: LinalgBuilder) -> list[SSAValue]:
        return [b.elementwise(self.body, *op.operands, shape=shape_of(op.results[0]))]


@lowers(ops.GeluOp)
class LowerGelu(CortexLowering[ops.GeluOp]):
    def lower(self, op: ops.GeluOp, b: LinalgBuilder) -> list[SSAValue]:
        body = _gelu_tanh if op.approximate.data == "tanh" else _gelu_erf
        return [b.elementwise(body, op.x)]


@lowers(ops.ConstantOp)
class LowerConstant(CortexLowering[ops.ConstantOp]):
    def lower(self, op: ops.ConstantOp, b: LinalgBuilder) -> list[SSAValue]:
        return [b.constant_attr(op.value)]


def convert_float(x: SSAValue, element: Attribute) -> tuple[SSAValue, Operation | None]:
    """`x` (a float scalar) as `element`: arith.extf when wider, arith.truncf when narrower (and that op)."""
    assert isinstance(x.type, AnyFloat) and isinstance(element, AnyFloat)
    width, target = x.type.bitwidth, element.bitwidth
    if width == target:
        return x, None
    op = arith.ExtFOp(x, element) if target > width else arith.TruncFOp(x, element)
    return op.result, op


def convert_element(x: SSAValue, element: Attribute) -> SSAValue:
    """`x` (a float, signless integer or i1 scalar) as `element`, by `cortex.cast`'s rules (inside a body)."""
    source = x.type
    if source == element:
        return x
    if isinstance(source, AnyFloat) and isinstance(element, AnyFloat):
        return convert_float(x, element)[0]
    assert isinstance(element, IntegerType | AnyFloat) and isinstance(source, IntegerType | AnyFloat)
    if isinstance(element, IntegerType) and element.width.data == 1:  # != 0 (NaN is true: unordered)
        if isinstance(source, AnyFloat):
            return s.cmpf(x, s.const(0.0, source), "une")
        return arith.CmpiOp(x, s.const(0, source), "ne").result
    if isinstance(source, IntegerType) and source.width.data == 1:  # 0 or 1
        return (arith.UIToFPOp(x, element) if isinstance(element, AnyFloat) else arith.ExtUIOp(x, element)).result
    if isinstance(source, AnyFloat):
        assert isinstance(element, IntegerType)
        return arith.FPToSIOp(x, element).result
    if isinstance(element, AnyFloat):
        return arith.SIToFPOp(x, element).result
    assert isinstance(source, IntegerType) and isinstance(element, IntegerType)
    wider = element.width.data > source.width.data
    return (arith.ExtSIOp(x, element) if wider else arith.TruncIOp(x, element)).result


@lowers(ops.CastOp)
class LowerCast(CortexLowering[ops.CastOp]):
    """An elementwise `linalg.generic` of the arith conversion (`convert_element`; a copy when the types agree)."""

    def lower(self, op: ops.CastOp, b: LinalgBuilder) -> list[SSAValue]:
        out = element_of(op.result)
        return [b.elementwise(lambda v: convert_element(v, out), op.x, element=out)]


@lowers(ops.SelectOp)
class LowerSelect(CortexLowering[ops.SelectOp]):
    """An elementwise `linalg.generic` of `arith.select`, broadcasting all three operands."""

    def lower(self, op: ops.SelectOp, b: LinalgBuilder) -> list[SSAValue]:
        return [b.elementwise(s.select, op.cond, op.x, op.y, element=element_of(op.x))]


FLOAT_PREDICATES = {"eq": "oeq", "gt": "ogt", "lt": "olt", "ge": "oge", "le": "ole"}
INTEGER_PREDICATES = {"eq": "eq", "gt": "sgt", "lt": "slt", "ge": "sge", "le": "sle"}


@lowers(ops.CompareOp)
class LowerCompare(CortexLowering[ops.CompareOp]):
    """An elementwise `linalg.generic` of `arith.cmpf` (ordered predicates) or `arith.cmpi` (signed) to i1."""

    def lower(self, op: ops.CompareOp, b: LinalgBuilder) -> list[SSAValue]:
        predicate = op.predicate.data

        def body(x: SSAValue, y: SSAValue) -> SSAValue:
            if isinstance(x.type, AnyFloat):
                return s.cmpf(x, y, FLOAT_PREDICATES[predicate])
            return arith.CmpiOp(x, y, INTEGER_PREDICATES[predicate]).result

        return [b.elementwise(body, op.lhs, op.rhs, element=IntegerType(1))]


@lowers(ops.NotOp)
class LowerNot(CortexLowering[ops.NotOp]):
    """An elementwise `linalg.generic` of `arith.xori` with true."""

    def lower(self, op: ops.NotOp, b: LinalgBuilder) -> list[SSAValue]:
        return [b.elementwise(lambda x: arith.XOrIOp(x, s.const(1, IntegerType(1))).result, op.x, element=IntegerType(1))]


LOGICAL = {ops.AndOp: arith.AndIOp, ops.OrOp: arith.OrIOp, ops.XorOp: arith.XOrIOp}


@lowers(*LOGICAL)
class LowerLogical(CortexLowering[ops.LogicalOp]):
    """An elementwise `linalg.generic` of `arith.andi` / `arith.ori` / `arith.xori` on i1, broadcasting both."""

    def lower(self, op: ops.LogicalOp, b: LinalgBuilder) -> list[SSAValue]:
        arith_op = LOGICAL[type(op)]
        return [b.elementwise(lambda x, y: arith_op(x, y).result, op.lhs, op.rhs, element=IntegerType(1))]


@lowers(ops.ToScalarOp)
class LowerToScalar(CortexLowering[ops.ToScalarOp]):
    """`tensor.extract` of the one element, then `arith.extf` / `arith.truncf` to the result type."""

    def lower(self, op: ops.ToScalarOp, b: LinalgBuilder) -> list[SSAValue]:
        value = b.add(tensor.ExtractOp(op.x, [], element_of(op.x))).result
        converted, conversion = convert_float(value, op.result.type)
        if conversion is not None:
            b.add(conversion)
        return [converted]


# ---------------------------------------------------------------- contractions


@lowers(ops.MatmulOp)
class LowerMatmul(CortexLowering[ops.MatmulOp]):
    """2-D: `linalg.matmul`. Batched (ONNX broadcasting over the leading dims): one `linalg.generic`."""

    def lower(self, op: ops.MatmulOp, b: LinalgBuilder) -> list[SSAValue]:
        a_shape, b_shape, out = shape_of(op.a), shape_of(op.b), shape_of(op.result)
        if len(a_shape) == len(b_shape) == 2:
            return [b.matmul(op.a, op.b)]
        batch = len(out) - 2
        m, n, k = batch, batch + 1, batch + 2

        def batch_exprs(shape: tuple[int, ...]) -> list[int | AffineConstantExpr]:
            lead = shape[:-2]
            offset = batch - len(lead)
            return [
                AffineConstantExpr(0) if size == 1 and out[offset + i] != 1 else offset + i
                for i, size in enumerate(lead)
            ]

        maps = [
            affine_map(batch + 3, [*batch_exprs(a_shape), m, k]),
            affine_map(batch + 3, [*batch_exprs(b_shape), k, n]),
            affine_map(batch + 3, [*range(batch), m, n]),
        ]
        init = b.full(out, 0.0, element_of(op.a))
        iterators = [PARALLEL] * (batch + 2) + [REDUCTION]
        return [b.generic([op.a, op.b], init, maps, iterators, lambda x, y, acc: s.addf(acc, s.mulf(x, y)))]


@lowers(ops.LinearOp)
class LowerLinear(CortexLowering[ops.LinearOp]):
    """x·Wᵀ + b as `linalg.matmul` into the broadcast bias; a constant W is transposed at compile time."""

    def lower(self, op: ops.LinearOp, b: LinalgBuilder) -> list[SSAValue]:
        element = element_of(op.x)
        n, k = shape_of(op.weight)
        weight = constant_array(op.weight)
        if weight is not None:
            weight_t = b.constant(np.ascontiguousarray(weight.T), element)
        else:
            weight_t = b.transpose(op.weight, [1, 0])
        out = shape_of(op.result)
        rows = pymath.prod(out[:-1])
        x = b.reshape(op.x, (rows, k))
        if op.bias is not None:
            init = b.broadcast(op.bias, (rows, n), [0])
        else:
            init = b.full((rows, n), 0.0, element)
        return [b.reshape(b.matmul(x, weight_t, init), out)]


@lowers(ops.BatchNormOp)
class LowerBatchNorm(CortexLowering[ops.BatchNormOp]):
    """(x − mean)·(1/√(var + ε))·scale + bias, per channel (dim 1)."""

    def lower(self, op: ops.BatchNormOp, b: LinalgBuilder) -> list[SSAValue]:
        eps = op.epsilon.value.data
        inv_std = b.elementwise(lambda v: s.divf(_c(v, 1.0), s.sqrt(s.addf(v, _c(v, eps)))), op.var)
        shape = shape_of(op.x)
        rank = len(shape)
        identity, channel = affine_map(rank, range(rank)), affine_map(rank, [1])

        def body(x, mean, inv, scale, bias, _out):
            return s.addf(s.mulf(s.mulf(s.subf(x, mean), inv), scale), bias)

        init = b.empty(shape, element_of(op.x))
        maps = [identity, channel, channel, channel, channel, identity]
        return [b.generic([op.x, op.mean, inv_std, op.scale, op.bias], init, maps, [PARALLEL] * rank, body)]


@lowers(ops.Conv2dOp)
class LowerConv2d(CortexLowering[ops.Conv2dOp]):
    """Zero-padded copy, then `linalg.conv_2d_nchw_fchw` accumulating into the broadcast bias."""

    def lower(self, op: ops.Conv2dOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], 0.0)
        out = shape_of(op.result)
        if op.group.value.data != 1:
            return [grouped_conv(b, op, x)]
        if op.bias is not None:
            init = b.broadcast(op.bias, out, [0, 2, 3])
        else:
            init = b.full(out, 0.0, element_of(op.x))
        return [b.conv_2d_nchw_fchw(x, op.weight, init, op.strides.get_values(), op.dilations.get_values())]


def grouped_conv(b: LinalgBuilder, op: ops.Conv2dOp, x: SSAValue) -> SSAValue:
    """A grouped convolution as one `linalg.generic` over (n, g, o, oh, ow; c, kh, kw): the padded input
    viewed as N×G×C/G×H×W, the weight as G×O/G×C/G×KH×KW, accumulated into the broadcast bias."""
    g = op.group.value.data
    n, c, h, w = shape_of(x)
    o, cg, kh, kw = shape_of(op.weight)
    _, _, oh, ow = out = shape_of(op.result)
    (sh, sw), (dh, dw) = op.strides.get_values(), op.dilations.get_values()
    element = element_of(op.x)
    xg = b.reshape(x, (n, g, c // g, h, w))
    wg = b.reshape(op.weight, (g, o // g, cg, kh, kw))
    grouped_out = (n, g, o // g, oh, ow)
    if op.bias is not None:
        init = b.broadcast(b.reshape(op.bias, (g, o // g)), grouped_out, [0, 3, 4])
    else:
        init = b.full(grouped_out, 0.0, element)
    d = [AffineDimExpr(i) for i in range(8)]  # n g o oh ow | c kh kw
    maps = [
        AffineMapAttr(AffineMap(8, 0, (d[0], d[1], d[5], d[3] * sh + d[6] * dh, d[4] * sw + d[7] * dw))),
        affine_map(8, [1, 2, 5, 6, 7]),
        affine_map(8, [0, 1, 2, 3, 4]),
    ]
    iterators = [PARALLEL] * 5 + [REDUCTION] * 3
    y = b.generic([xg, wg], init, maps, iterators, lambda v, k, acc: s.addf(acc, s.mulf(v, k)))
    return b.reshape(y, out)


def window_counts(size: int, kernel: int, stride: int, pad_lo: int, out: int, dilation: int = 1) -> np.ndarray:
    """How many cells of each (dilated) window along one axis lie inside the unpadded input."""
    cells = (np.arange(out) * stride - pad_lo)[:, None] + np.arange(kernel)[None, :] * dilation
    return ((cells >= 0) & (cells < size)).sum(axis=1)


@lowers(ops.AvgPoolOp)
class LowerAvgPool(CortexLowering[ops.AvgPoolOp]):
    """Window sums of the zero-padded input ÷ the count of real cells (ONNX count_include_pad=0)."""

    def lower(self, op: ops.AvgPoolOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        kernel, strides = op.kernel_shape.get_values(), op.strides.get_values()
        dilations = op.dilations.get_values()
        _, _, h, w = shape_of(op.x)
        out = shape_of(op.result)
        element = element_of(op.x)
        x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], 0.0)
        sums = b.pooling_nchw("add", x, kernel, b.full(out, 0.0, element), strides, dilations)
        counts = np.outer(
            window_counts(h, kernel[0], strides[0], top, out[2], dilations[0]),
            window_counts(w, kernel[1], strides[1], left, out[3], dilations[1]),
        )
        if np.all(counts == counts.flat[0]):
            count = float(counts.flat[0])
            return [b.elementwise(lambda v: s.divf(v, _c(v, count)), sums)]
        return [b.elementwise(s.divf, sums, b.constant(counts, element))]


@lowers(ops.MaxPoolOp)
class LowerMaxPool(CortexLowering[ops.MaxPoolOp]):
    """−inf-padded copy, then window maxima from −inf."""

    def lower(self, op: ops.MaxPoolOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, 0, top, left], [0, 0, bottom, right], -pymath.inf)
        init = b.full(shape_of(op.result), -pymath.inf, element_of(op.x))
        return [b.pooling_nchw("max", x, op.kernel_shape.get_values(), init, op.strides.get_values(), op.dilations.get_values())]


# ---------------------------------------------------------------- layout and reductions


@lowers(ops.TransposeOp)
class LowerTranspose(CortexLowering[ops.TransposeOp]):
    def lower(self, op: ops.TransposeOp, b: LinalgBuilder) -> list[SSAValue]:
        return [b.transpose(op.x, op.perm.get_values())]


@lowers(ops.ReshapeOp)
class LowerReshape(CortexLowering[ops.ReshapeOp]):
    """`tensor.collapse_shape` / `tensor.expand_shape` (through 1-D when the shapes do not nest)."""

    def lower(self, op: ops.ReshapeOp, b: LinalgBuilder) -> list[SSAValue]:
        return [b.reshape(op.x, shape_of(op.result))]


@lowers(ops.SoftmaxOp)
class LowerSoftmax(CortexLowering[ops.SoftmaxOp]):
    """e = exp(x − max(x)); e / Σe, along `axis`."""

    def lower(self, op: ops.SoftmaxOp, b: LinalgBuilder) -> list[SSAValue]:
        shape = shape_of(op.x)
        rank = len(shape)
        axis = normalise_axis(op.axis.value.data, rank)
        identity = affine_map(rank, range(rank))
        reduced = affine_map(rank, [d for d in range(rank) if d != axis])
        element = element_of(op.x)

        def along_axis(fn, x: SSAValue, r: SSAValue) -> SSAValue:
            init = b.empty(shape, element)
            return b.generic([x, r], init, [identity, reduced, identity], [PARALLEL] * rank, lambda v, t, _o: fn(v, t))

        peak = b.reduce(op.x, [axis], "max")
        e = along_axis(lambda v, t: s.exp(s.subf(v, t)), op.x, peak)
        total = b.reduce(e, [axis], "add")
        return [along_axis(s.divf, e, total)]


class LowerReduce(CortexLowering[ops.ReduceOp]):
    """`linalg.reduce` over `axes` (all when empty); mean divides by the count; keepdims reshapes."""

    def __init__(self, kind: str, mean: bool = False):
        self.kind = kind
        self.mean = mean

    def lower(self, op: ops.ReduceOp, b: LinalgBuilder) -> list[SSAValue]:
        shape = shape_of(op.x)
        axes = sorted({normalise_axis(a, len(shape)) for a in op.axes.get_values()}) or list(range(len(shape)))
        if any(shape[a] == 0 for a in axes):  # an empty set: the identity (ONNX: sum 0, max −inf)
            _, identity = s.REDUCE_COMBINERS[self.kind]
            kept = [d for i, d in enumerate(shape) if i not in axes]
            result = b.full(kept, identity, element_of(op.x))
        else:
            result = b.reduce(op.x, axes, self.kind)
        if self.mean:
            count = float(pymath.prod(shape[a] for a in axes))
            result = b.elementwise(lambda v: s.divf(v, _c(v, count)), result)
        return [b.reshape(result, shape_of(op.result))]


ELEMENTWISE_BODIES: dict[type[Operation], Callable[..., SSAValue]] = {**UNARY_BODIES, **BINARY_BODIES}
for op_class, body in ELEMENTWISE_BODIES.items():
    register_lowering(op_class, LowerElementwise(body))
register_lowering(ops.ReduceSumOp, LowerReduce("add"))
register_lowering(ops.ReduceMeanOp, LowerReduce("add", mean=True))
register_lowering(ops.ReduceMaxOp, LowerReduce("max"))


__all__ = ["LowerElementwise", "LowerReduce"]
