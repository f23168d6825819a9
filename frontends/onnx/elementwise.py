"""Elementwise operators, Identity and Constant."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import NodeContext
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts
from cortex.frontends.onnx_checks import tensor_array

UNARY = {
    "Relu": ops.ReluOp,
    "Neg": ops.NegOp,
    "Exp": ops.ExpOp,
    "Log": ops.LogOp,
    "Sqrt": ops.SqrtOp,
    "Abs": ops.AbsOp,
    "Sigmoid": ops.SigmoidOp,
    "Tanh": ops.TanhOp,
}
BINARY = {"Add": ops.AddOp, "Sub": ops.SubOp, "Mul": ops.MulOp, "Div": ops.DivOp, "Pow": ops.PowOp}


def unary(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    return [im.build(ctx, UNARY[ctx.node.op_type], im.value(inputs[0], ctx, "input"))]


def binary(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    # opset < 7: `broadcast` = 1 is NumPy's trailing broadcast, but not along an explicit axis
    if ctx.get("broadcast", 0) and ctx.get("axis") is not None:
        raise ctx.error("legacy broadcasting along an axis is not supported", "axis")
    lhs, rhs = im.value(inputs[0], ctx, "input A"), im.value(inputs[1], ctx, "input B")
    return [im.build(ctx, BINARY[ctx.node.op_type], lhs, rhs)]


for _name, _op in UNARY.items():
    converts(_name, maps_to=f"`{_op.name}`")(unary)
for _name, _binary in BINARY.items():
    converts(_name, maps_to=f"`{_binary.name}`", limits="NumPy broadcasting; opset < 7's broadcast along an `axis` is refused")(binary)


@converts("Gelu", since=20, maps_to="`cortex.gelu`")
def gelu(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    approximate = ctx.require("approximate", ops.GELU_APPROXIMATIONS, "none", 'must be "none" or "tanh"')
    return [im.build(ctx, ops.GeluOp, im.value(inputs[0], ctx, "input"), approximate)]


@converts("Identity", maps_to="nothing (the input)", limits="a known input (a shape) stays known")
def identity(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue | None]:
    if inputs[0] in im.known and inputs[0] not in im.values:
        im.known[ctx.node.output[0]] = im.known[inputs[0]]  # an Identity of a known value is known too
        return [None]
    return [im.value(inputs[0], ctx, "input")]


@converts("Constant", maps_to="`cortex.constant` where used as data",
          limits="value, value_float(s), value_int(s); sparse and string constants are refused")
def constant(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue | None]:
    if "value" in ctx.attrs:
        array = tensor_array(ctx.get("value"), f"onnx {ctx.label} (Constant), attribute 'value'")
    elif "value_float" in ctx.attrs:
        array = np.array(ctx.get("value_float"), np.float32)
    elif "value_floats" in ctx.attrs:
        array = np.array(ctx.get("value_floats"), np.float32)
    elif "value_int" in ctx.attrs:
        array = np.array(ctx.get("value_int"), np.int64)
    elif "value_ints" in ctx.attrs:
        array = np.array(ctx.get("value_ints"), np.int64)
    else:
        name = next(iter(ctx.attrs), None)
        raise ctx.error("this kind of constant is not supported", name)
    im.known[ctx.node.output[0]] = array
    return [None]  # materialised as a cortex.constant where it is used as data
