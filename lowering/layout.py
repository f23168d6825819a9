"""Lowering of the NHWC ops: `linalg.conv_2d_nhwc_hwcf`, windowed generics for pooling.

Same scheme as the NCHW lowerings (`lowering/tensor_ops.py`): a constant-padded
copy, then the structured op accumulating into the broadcast bias / the
reduction identity; average pooling divides by the count of real cells.
"""

from __future__ import annotations

import math as pymath

import numpy as np
from xdsl.dialects.linalg.ops import Conv2DNhwc_HwcfOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from cortex.dialects import layout as lay
from cortex.lowering import builders as s
from cortex.lowering.base import CortexLowering, lowers
from cortex.lowering.builders import (
    PARALLEL,
    REDUCE_COMBINERS,
    REDUCTION,
    LinalgBuilder,
    affine_map,
    element_of,
    i64_vector,
    shape_of,
)
from cortex.lowering.tensor_ops import window_counts


@lowers(lay.Conv2dNhwcOp)
class LowerConv2dNhwc(CortexLowering[lay.Conv2dNhwcOp]):
    """Zero-padded copy, then `linalg.conv_2d_nhwc_hwcf` accumulating into the broadcast bias."""

    def lower(self, op: lay.Conv2dNhwcOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, top, left, 0], [0, bottom, right, 0], 0.0)
        out = shape_of(op.result)
        init = b.broadcast(op.bias, out, [0, 1, 2]) if op.bias is not None else b.full(out, 0.0, element_of(op.x))
        conv = Conv2DNhwc_HwcfOp(
            [x, op.weight], [init], [init.type],
            strides=i64_vector(op.strides.get_values()), dilations=i64_vector(op.dilations.get_values()),
        )
        return [b.add(conv).res[0]]


def pooling_nhwc(b: LinalgBuilder, kind: str, x: SSAValue, kernel, init: SSAValue, strides) -> SSAValue:
    combine, _ = REDUCE_COMBINERS[kind]
    window = b.empty(kernel, element_of(x))
    n, oh, ow, c, kh, kw = (AffineDimExpr(i) for i in range(6))
    sh, sw = strides
    maps = [affine_map(6, [n, oh * sh + kh, ow * sw + kw, c]), affine_map(6, [kh, kw]), affine_map(6, [n, oh, ow, c])]
    return b.generic([x, window], init, maps, [PARALLEL] * 4 + [REDUCTION] * 2, lambda v, _w, acc: combine(v, acc))


@lowers(lay.MaxPoolNhwcOp)
class LowerMaxPoolNhwc(CortexLowering[lay.MaxPoolNhwcOp]):
    def lower(self, op: lay.MaxPoolNhwcOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, top, left, 0], [0, bottom, right, 0], -pymath.inf)
        init = b.full(shape_of(op.result), -pymath.inf, element_of(op.x))
        return [pooling_nhwc(b, "max", x, op.kernel_shape.get_values(), init, op.strides.get_values())]


@lowers(lay.AvgPoolNhwcOp)
class LowerAvgPoolNhwc(CortexLowering[lay.AvgPoolNhwcOp]):
    def lower(self, op: lay.AvgPoolNhwcOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        kernel, strides = op.kernel_shape.get_values(), op.strides.get_values()
        _, h, w, _ = shape_of(op.x)
        out = shape_of(op.result)
        element = element_of(op.x)
        x = b.pad(op.x, [0, top, left, 0], [0, bottom, right, 0], 0.0)
        sums = pooling_nhwc(b, "add", x, kernel, b.full(out, 0.0, element), strides)
        counts = np.outer(
            window_counts(h, kernel[0], strides[0], top, out[1]), window_counts(w, kernel[1], strides[1], left, out[2])
        )
        if np.all(counts == counts.flat[0]):
            count = float(counts.flat[0])
            return [b.elementwise(lambda v: s.divf(v, s.const(count, v.type)), sums)]
        return [b.elementwise(s.divf, sums, b.constant(counts[:, :, None], element))]


@lowers(lay.BatchNormNhwcOp)
class LowerBatchNormNhwc(CortexLowering[lay.BatchNormNhwcOp]):
    """(x − mean)·(1/√(var + ε))·scale + bias along the last axis."""

    def lower(self, op: lay.BatchNormNhwcOp, b: LinalgBuilder) -> list[SSAValue]:
        eps = op.epsilon.value.data
        inv_std = b.elementwise(lambda v: s.divf(s.const(1.0, v.type), s.sqrt(s.addf(v, s.const(eps, v.type)))), op.var)
        shape = shape_of(op.x)
        rank = len(shape)
        identity, channel = affine_map(rank, range(rank)), affine_map(rank, [rank - 1])

        def body(x, mean, inv, scale, bias, _out):
            return s.addf(s.mulf(s.mulf(s.subf(x, mean), inv), scale), bias)

        init = b.empty(shape, element_of(op.x))
        maps = [identity, channel, channel, channel, channel, identity]
        return [b.generic([op.x, op.mean, inv_std, op.scale, op.bias], init, maps, [PARALLEL] * rank, body)]

__all__ = ["LowerAvgPoolNhwc", "LowerBatchNormNhwc", "LowerConv2dNhwc", "LowerMaxPoolNhwc"]
