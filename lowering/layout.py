"""Lowering of the NHWC ops: `linalg.conv_2d_nhwc_hwcf`, windowed generics for pooling.

Same scheme as the NCHW lowerings (`lowering/tensor_ops.py`): a constant-padded
copy, then the structured op accumulating into the broadcast bias / the
reduction identity; average pooling divides by the count of real cells.

Grouped convolutions (`group` g > 1) take one of two channels-last forms:

- depthwise (one input channel per group, O = C·m): the `linalg.generic` of
  upstream's `linalg.depthwise_conv_2d_nhwc_hwc` (m = 1) or `_nhwc_hwcm`
  (m > 1, output channel c·m + j): the same indexing maps, iterators and
  multiply-accumulate body, which `mlir-opt --linalg-specialize-generic-ops`
  turns back into the named op (xDSL defines no depthwise op);
- otherwise one `linalg.conv_2d_nhwc_hwcf` per group on the group's channel
  slice, written into the group's columns of the result.

Both keep each group's convolution in a form IREE's convolution code
compiles; a grouped convolution as one generic with a group loop (or as
upstream's `conv_2d_nhwgc_gfhwc`) ran many times slower there (the figures:
benchmarks/README.md, "Grouped and depthwise convolutions channels-last").
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.dialects.linalg.ops import Conv2DNhwc_HwcfOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

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
    """Zero-padded copy, then the convolution (see the module doc) accumulating into the broadcast bias."""

    def lower(self, op: lay.Conv2dNhwcOp, b: LinalgBuilder) -> list[SSAValue]:
        top, left, bottom, right = op.pads.get_values()
        x = b.pad(op.x, [0, top, left, 0], [0, bottom, right, 0], 0.0)
        strides, dilations = op.strides.get_values(), op.dilations.get_values()
        group = op.group.value.data
        if group > 1 and shape_of(op.weight)[2] > 1:
            return [per_group(b, x, op, group, strides, dilations)]
        out = shape_of(op.result)
        init = b.broadcast(op.bias, out, [0, 1, 2]) if op.bias is not None else b.full(out, 0.0, element_of(op.x))
        if group == 1:
            return [conv_hwcf(b, x, op.weight, init, strides, dilations)]
        return [depthwise(b, x, op.weight, init, strides, dilations)]


def conv_hwcf(b: LinalgBuilder, x: SSAValue, weight: SSAValue, init: SSAValue, strides, dilations) -> SSAValue:
    conv = Conv2DNhwc_HwcfOp(
        [x, weight], [init], [init.type], strides=i64_vector(strides), dilations=i64_vector(dilations)
    )
    return b.add(conv).res[0]


def depthwise(b: LinalgBuilder, x: SSAValue, weight: SSAValue, init: SSAValue, strides, dilations) -> SSAValue:
    """`depthwise_conv_2d_nhwc_hwc` (multiplier 1) or `_hwcm` as a generic: weight kH×kW×1×(C·m) is kH×kW×C×m."""
    n, _, _, c = shape_of(x)
    kh, kw, _, o = shape_of(weight)
    _, oh, ow, _ = out = shape_of(init)
    m = o // c
    (sh, sw), (dh, dw) = strides, dilations
    channel_dims = [3] if m == 1 else [3, 4]
    loops = 3 + len(channel_dims) + 2  # n oh ow c [m] | kh kw
    d = [AffineDimExpr(i) for i in range(loops)]
    spatial = (d[0], d[1] * sh + d[-2] * dh, d[2] * sw + d[-1] * dw, d[3])
    maps = [
        AffineMapAttr(AffineMap(loops, 0, spatial)),
        affine_map(loops, [loops - 2, loops - 1, *channel_dims]),
        affine_map(loops, [0, 1, 2, *channel_dims]),
    ]
    filters = b.reshape(weight, (kh, kw, o))  # drops the size-1 axis (a collapse)
    if m > 1:
        filters = b.reshape(filters, (kh, kw, c, m))
    acc = b.reshape(init, (n, oh, ow, c) if m == 1 else (n, oh, ow, c, m))
    iterators = [PARALLEL] * (loops - 2) + [REDUCTION] * 2
    y = b.generic([x, filters], acc, maps, iterators, lambda v, k, total: s.addf(total, s.mulf(v, k)))
    return b.reshape(y, out)


def channels(b: LinalgBuilder, value: SSAValue, start: int, count: int) -> SSAValue:
    """`value`[..., start:start + count] (the last axis)."""
    shape = shape_of(value)
    offsets = [0] * (len(shape) - 1) + [start]
    sizes: Sequence[int] = [*shape[:-1], count]
    return b.add(tensor.ExtractSliceOp.from_static_parameters(value, offsets, sizes)).result


def per_group(b: LinalgBuilder, x: SSAValue, op: lay.Conv2dNhwcOp, group: int, strides, dilations) -> SSAValue:
    """One `conv_2d_nhwc_hwcf` per group (channels i·C/g.. of `x`, weight columns i·O/g..), each accumulating into
    its slice of the bias, inserted into those columns of an empty result (not into the broadcast bias: IREE
    hoists that constant to a global, which a dispatch may not write)."""
    out = shape_of(op.result)
    cg = shape_of(x)[3] // group
    f = out[3] // group
    element = element_of(op.x)
    result = b.empty(out, element)
    for i in range(group):
        sizes = [*out[:3], f]
        if op.bias is not None:
            init = b.broadcast(channels(b, op.bias, i * f, f), sizes, [0, 1, 2])
        else:
            init = b.full(sizes, 0.0, element)
        y = conv_hwcf(b, channels(b, x, i * cg, cg), channels(b, op.weight, i * f, f), init, strides, dilations)
        result = b.add(tensor.InsertSliceOp.from_static_parameters(y, result, [0, 0, 0, i * f], sizes)).result
    return result


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
