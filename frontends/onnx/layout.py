"""Layout operators (Transpose, Reshape, Flatten), Softmax and the reductions."""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from cortex.dialects import shapes
from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import DYNAMIC, NodeContext, product, shape
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts


@converts("Transpose", maps_to="`cortex.transpose`")
def transpose(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    perm = ctx.ints("perm", list(reversed(range(len(shape(x))))))
    return [im.build(ctx, ops.TransposeOp, x, perm)]


def resolve_reshape(ctx: NodeContext, source: Sequence[int], target: Sequence[int], allowzero: int) -> list[int]:
    """ONNX Reshape's shape rules: 0 copies the input dimension (unless allowzero), −1 is inferred."""
    out = [int(d) for d in target]
    if not allowzero:
        for i, d in enumerate(out):
            if d == 0:
                if i >= len(source):
                    raise ctx.error(f"shape {list(target)}: 0 at position {i} has no input dimension to copy")
                out[i] = source[i]
    if out.count(-1) > 1 or any(d < -1 and d != DYNAMIC for d in out):
        raise ctx.error(f"shape {list(target)}: at most one −1, and no other negative size")
    if DYNAMIC in source:  # a `?` (batch) dimension, carried by a 0 (the −1 is then the rest) or not
        carried = sum(1 for i, d in enumerate(target) if d == 0 and not allowzero and source[i] == DYNAMIC)
        if -1 in out and carried == source.count(DYNAMIC):
            total, known = math.prod(d for d in source if d != DYNAMIC), math.prod(d for d in out if d not in (-1, DYNAMIC))
            if known == 0 or total % known:
                raise ctx.error(f"shape {list(target)} cannot hold the elements of {shapes.fmt(source)}")
            out[out.index(-1)] = total // known
        return [DYNAMIC if d == -1 else d for d in out]
    total = math.prod(source)
    if -1 in out:
        known = math.prod(d for d in out if d != -1)
        if known == 0 or total % known:
            raise ctx.error(f"shape {list(target)} cannot hold the {total} elements of {list(source)}")
        out[out.index(-1)] = total // known
    if math.prod(out) != total:
        raise ctx.error(f"shape {list(target)} cannot hold the {total} elements of {list(source)}")
    return out


@converts("Reshape", maps_to="`cortex.reshape`", known_inputs=(1,), limits="the shape a constant; 0 (unless allowzero) and −1")
def reshape(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    if len(inputs) > 1:
        target = [int(d) for d in im.static(inputs[1], ctx, "input shape").reshape(-1)]
    else:  # opset < 5
        stated = ctx.ints("shape")
        if stated is None:
            raise ctx.error("Reshape needs a shape")
        target = stated
    allowzero = ctx.require("allowzero", (0, 1), 0, "must be 0 or 1")
    return [im.reshape(ctx, x, resolve_reshape(ctx, shape(x), target, allowzero))]


@converts("Flatten", maps_to="`cortex.reshape`")
def flatten(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    s = shape(x)
    axis = ctx.get("axis", 1)
    if not -len(s) <= axis <= len(s):
        raise ctx.error(f"out of range for rank {len(s)}", "axis")
    if axis < 0:
        axis += len(s)
    return [im.reshape(ctx, x, (product(s[:axis]), product(s[axis:])))]


@converts("Softmax", maps_to="`cortex.softmax` (stable: exp(x − max))", limits="opset < 13: over the input flattened at `axis`")
def softmax(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Opset ≥ 13: along `axis` (default −1). Before: over the input flattened to 2-D at `axis` (default 1)."""
    x = im.value(inputs[0], ctx, "input")
    s = shape(x)
    axis = ctx.get("axis", -1 if im.opset >= 13 else 1)
    if not -len(s) <= axis < max(len(s), 1):
        raise ctx.error(f"out of range for rank {len(s)}", "axis")
    axis %= max(len(s), 1)
    if im.opset >= 13 or axis == len(s) - 1:
        return [im.build(ctx, ops.SoftmaxOp, x, axis)]
    flat = im.reshape(ctx, x, (math.prod(s[:axis]), math.prod(s[axis:])))
    return [im.reshape(ctx, im.build(ctx, ops.SoftmaxOp, flat, 1), s)]


REDUCE = {"ReduceSum": (ops.ReduceSumOp, 13), "ReduceMean": (ops.ReduceMeanOp, 18), "ReduceMax": (ops.ReduceMaxOp, 18)}


def reduce(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Axes from the attribute (older opsets) or a constant second input; empty axes reduce
    everything unless noop_with_empty_axes = 1, which makes the node an identity."""
    op, axes_as_input_since = REDUCE[ctx.node.op_type]
    x = im.value(inputs[0], ctx, "input data")
    if im.opset >= axes_as_input_since and "axes" in ctx.attrs:
        raise ctx.error(f"is an input since opset {axes_as_input_since} (this model's opset is {im.opset})", "axes")
    if len(inputs) > 1 and inputs[1]:
        axes = [int(a) for a in im.static(inputs[1], ctx, "input axes").reshape(-1)]
    else:
        axes = ctx.ints("axes", [])
    keepdims = ctx.require("keepdims", (0, 1), 1, "must be 0 or 1")
    noop = ctx.require("noop_with_empty_axes", (0, 1), 0, "must be 0 or 1")
    if not axes and noop:
        return [x]
    return [im.build(ctx, op, x, axes, bool(keepdims))]


for _name, (_op, _since) in REDUCE.items():
    converts(_name, maps_to=f"`{_op.name}`", known_inputs=(1,), limits="axes a constant (attribute or input), keepdims, noop_with_empty_axes")(reduce)
