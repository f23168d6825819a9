"""Activations and other elementwise operators written with the cortex elementwise ops.

Clip is max then min with its bounds (ReLU6 is Clip(0, 6)), HardSigmoid is
that clip of αx + β, HardSwish x times HardSigmoid(x; 1/6, 1/2), LeakyRelu and
PRelu relu(x) + α·min(x, 0) (exact: one of the two terms is 0). Dropout in
inference and Cast to float32 of a float32 tensor are the input itself.
"""

from __future__ import annotations

import numpy as np
import onnx
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.dialects.base import tensor_of
from cortex.frontends.onnx.context import ELEMENTS, NodeContext, shape, unidirectional
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts


def scalar(im: Importer, value: float) -> SSAValue:
    return im.constant(np.float32(value))


def clipped(im: Importer, ctx: NodeContext, x: SSAValue, lo: SSAValue | None, hi: SSAValue | None) -> SSAValue:
    if lo is not None:
        x = im.build(ctx, ops.MaxOp, x, lo)
    if hi is not None:
        x = im.build(ctx, ops.MinOp, x, hi)
    return x


@converts("Clip", maps_to="`cortex.max`, `cortex.min`",
          limits="min/max as attributes (opset < 11) or inputs (a scalar each, known or computed)")
def clip(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    if im.opset < 11:
        lo_attr, hi_attr = ctx.get("min"), ctx.get("max")
        lo = None if lo_attr is None else scalar(im, lo_attr)
        hi = None if hi_attr is None else scalar(im, hi_attr)
    else:
        lo, hi = im.optional(inputs, 1, ctx, "input min"), im.optional(inputs, 2, ctx, "input max")
        for bound, what in ((lo, "min"), (hi, "max")):
            if bound is not None and shape(bound) not in ((), (1,)):
                raise ctx.error(f"input {what} must be a scalar, got shape {list(shape(bound))}")
    return [clipped(im, ctx, x, lo, hi)]


def hard_sigmoid_of(im: Importer, ctx: NodeContext, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    y = im.build(ctx, ops.AddOp, im.build(ctx, ops.MulOp, x, scalar(im, alpha)), scalar(im, beta))
    return clipped(im, ctx, y, scalar(im, 0.0), scalar(im, 1.0))


@converts("HardSigmoid", maps_to="`cortex.mul`, `cortex.add`, `cortex.max`, `cortex.min`")
def hard_sigmoid(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    alpha, beta = float(ctx.get("alpha", 0.2)), float(ctx.get("beta", 0.5))
    return [hard_sigmoid_of(im, ctx, im.value(inputs[0], ctx, "input"), alpha, beta)]


@converts("HardSwish", since=14, maps_to="HardSigmoid's ops and `cortex.mul`")
def hard_swish(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    return [im.build(ctx, ops.MulOp, x, hard_sigmoid_of(im, ctx, x, 1.0 / 6.0, 0.5))]


def leaky(im: Importer, ctx: NodeContext, x: SSAValue, slope: SSAValue) -> SSAValue:
    negative = im.build(ctx, ops.MulOp, slope, im.build(ctx, ops.MinOp, x, scalar(im, 0.0)))
    return im.build(ctx, ops.AddOp, im.build(ctx, ops.ReluOp, x), negative)


@converts("LeakyRelu", maps_to="`cortex.relu`, `cortex.min`, `cortex.mul`, `cortex.add`")
def leaky_relu(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    return [leaky(im, ctx, im.value(inputs[0], ctx, "input"), scalar(im, float(ctx.get("alpha", 0.01))))]


@converts("PRelu", maps_to="`cortex.relu`, `cortex.min`, `cortex.mul`, `cortex.add`",
          limits="the slope broadcasts unidirectionally to the input")
def prelu(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x, slope = im.value(inputs[0], ctx, "input X"), im.value(inputs[1], ctx, "input slope")
    if not unidirectional(shape(slope), shape(x)):
        raise ctx.error(f"slope of shape {list(shape(slope))} does not broadcast to the input's {list(shape(x))}")
    return [leaky(im, ctx, x, slope)]


@converts("Erf", maps_to="`cortex.erf`")
def erf(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    return [im.build(ctx, ops.ErfOp, im.value(inputs[0], ctx, "input"))]


def extremum(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    op = ops.MaxOp if ctx.node.op_type == "Max" else ops.MinOp
    values = [im.value(name, ctx, f"input #{i}") for i, name in enumerate(inputs) if name]
    y = values[0]
    for v in values[1:]:
        y = im.build(ctx, op, y, v)
    return [y]


converts("Max", maps_to="`cortex.max`", limits="any number of inputs, NumPy broadcasting")(extremum)
converts("Min", maps_to="`cortex.min`", limits="any number of inputs, NumPy broadcasting")(extremum)


@converts("Dropout", maps_to="nothing (the input: inference)", known_inputs=(1, 2),
          limits="training_mode a known false; the mask output is refused")
def dropout(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    ctx.get("seed")
    ctx.get("ratio")  # opset < 12: an attribute; inference ignores it
    if "is_test" in ctx.attrs:
        ctx.require("is_test", (1,), 1, "only inference (is_test = 1) is supported")
    if len(inputs) > 2 and inputs[2]:
        if inputs[2] not in im.known or bool(np.asarray(im.known[inputs[2]]).reshape(-1)[0]):
            raise ctx.error("training mode is not supported (input training_mode must be a known false)")
    if len([o for o in ctx.node.output if o]) > 1:
        raise ctx.error("the mask output is not supported (it is a boolean tensor; cortex tensors are float32)")
    return [im.value(inputs[0], ctx, "input data")]


@converts("Cast", maps_to="`cortex.cast` (nothing when the type is kept)", typed_inputs=(0,),
          limits="float16, float32, float64, bool and signed integers, at run time or known (folded); "
          "unsigned, 8-bit and 4-bit floats, bfloat16 and strings are refused")
def cast(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    to = ctx.get("to")
    if to not in ELEMENTS:
        name = onnx.TensorProto.DataType.Name(to).lower() if to in onnx.TensorProto.DataType.values() else to
        raise ctx.error(f"a cast to {name}: cortex tensors hold float16/32/64, bool and signed integers", "to")
    ctx.get("saturate")  # 8-bit floats only
    ctx.get("round_mode")
    x = im.typed_value(inputs[0], ctx, "input")
    element = ELEMENTS[to]
    if tensor_of(x, "input").element_type == element:
        return [x]
    return [im.build(ctx, ops.CastOp, x, element)]


__all__ = ["clip", "hard_sigmoid", "hard_swish", "leaky_relu", "prelu"]
