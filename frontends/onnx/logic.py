"""Comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual) and logical operators (Not, And, Or, Xor):
their results and the logical operators' inputs are bool (i1) tensors, which Where, Cast and these read."""

from __future__ import annotations

from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import NodeContext
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts

COMPARISONS = {"Equal": "eq", "Greater": "gt", "Less": "lt", "GreaterOrEqual": "ge", "LessOrEqual": "le"}
LOGICAL = {"And": ops.AndOp, "Or": ops.OrOp, "Xor": ops.XorOp}


def operands(im: Importer, ctx: NodeContext, inputs: list[str]) -> tuple[SSAValue, SSAValue]:
    # opset < 7: `broadcast` = 1 is NumPy's trailing broadcast, but not along an explicit axis
    if ctx.get("broadcast", 0) and ctx.get("axis") is not None:
        raise ctx.error("legacy broadcasting along an axis is not supported", "axis")
    return im.typed_value(inputs[0], ctx, "input A"), im.typed_value(inputs[1], ctx, "input B")


def compare(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    lhs, rhs = operands(im, ctx, inputs)
    return [im.build(ctx, ops.CompareOp, lhs, rhs, COMPARISONS[ctx.node.op_type])]


def logical(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    lhs, rhs = operands(im, ctx, inputs)
    return [im.build(ctx, LOGICAL[ctx.node.op_type], lhs, rhs)]


for _name, _predicate in COMPARISONS.items():
    converts(_name, since=12 if _name.endswith("OrEqual") else 1, maps_to=f"`cortex.compare` ({_predicate})",
             typed_inputs=(0, 1),
             limits="float16/32/64, signed integers (and bool for Equal), one type for both; NumPy broadcasting; "
             "opset < 7's broadcast along an `axis` is refused")(compare)
for _name, _op in LOGICAL.items():
    converts(_name, maps_to=f"`{_op.name}`", typed_inputs=(0, 1),
             limits="bool inputs; NumPy broadcasting; opset < 7's broadcast along an `axis` is refused")(logical)


@converts("Not", maps_to="`cortex.not`", typed_inputs=(0,), limits="a bool input")
def not_(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    return [im.build(ctx, ops.NotOp, im.typed_value(inputs[0], ctx, "input"))]


__all__ = ["compare", "logical", "not_"]
