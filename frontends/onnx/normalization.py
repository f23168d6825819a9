"""LayerNormalization and the global poolings, written with the cortex reductions.

LayerNormalization is two-pass (numerically stable): the mean, then the mean of the squared
deviations, never E[x²] − E[x]²; GlobalAveragePool and GlobalMaxPool are a mean or a max over
the spatial axes, kept as size-1 dimensions.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import NodeContext, normalise_axis, shape
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts


@converts("LayerNormalization", since=17,
          maps_to="`cortex.reduce_mean`, `cortex.sub`, `cortex.mul`, `cortex.add`, `cortex.sqrt`, `cortex.div`",
          limits="two-pass (x − mean first); the Mean and InvStdDev outputs too; stash_type 1")
def layer_norm(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input X")
    rank = len(shape(x))
    axis = normalise_axis(ctx, int(ctx.get("axis", -1)), rank)
    epsilon = float(ctx.get("epsilon", 1e-5))
    ctx.require("stash_type", (1,), 1, "only float32 statistics (stash_type 1) are supported")
    axes = list(range(axis, rank))
    mean = im.build(ctx, ops.ReduceMeanOp, x, axes, True)
    centred = im.build(ctx, ops.SubOp, x, mean)
    variance = im.build(ctx, ops.ReduceMeanOp, im.build(ctx, ops.MulOp, centred, centred), axes, True)
    std = im.build(ctx, ops.SqrtOp, im.build(ctx, ops.AddOp, variance, im.constant(np.float32(epsilon))))
    y = im.build(ctx, ops.MulOp, im.build(ctx, ops.DivOp, centred, std), im.value(inputs[1], ctx, "input Scale"))
    bias = im.optional(inputs, 2, ctx, "input B")
    if bias is not None:
        y = im.build(ctx, ops.AddOp, y, bias)
    outputs = [y]
    if len(ctx.node.output) > 1:
        outputs.append(mean)
    if len(ctx.node.output) > 2:
        outputs.append(im.build(ctx, ops.DivOp, im.constant(np.float32(1.0)), std))
    return outputs


def global_pool(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input X")
    rank = len(shape(x))
    if rank < 3:
        raise ctx.error(f"the input must be N×C×spatial..., got shape {list(shape(x))}")
    op = ops.ReduceMeanOp if ctx.node.op_type == "GlobalAveragePool" else ops.ReduceMaxOp
    return [im.build(ctx, op, x, list(range(2, rank)), True)]


converts("GlobalAveragePool", maps_to="`cortex.reduce_mean` over the spatial axes")(global_pool)
converts("GlobalMaxPool", maps_to="`cortex.reduce_max` over the spatial axes")(global_pool)


__all__ = ["global_pool", "layer_norm"]
