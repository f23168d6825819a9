"""Tensor ops that move data without arithmetic: concatenation, constant padding, strided slices.

They carry ONNX's Concat, Pad (constant mode) and Slice (positive steps) and
the operators built from them (Split, Gather of constant indices,
ConvTranspose's zero insertion). Each op's typing rule is one call into
`cortex.dialects.shapes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, DenseArrayBase, Float32Type, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, f32_attr, float_tensor, i64_array, i64_attr, shape_of, tensor
from cortex.dialects.tensor_elementwise import OPERANDS_FORMAT, TENSOR_TRAITS, UNARY_FORMAT, ints, same_element


@irdl_op_definition
class ConcatOp(CortexOp):
    """The operands joined along `axis` (ONNX Concat): equal shapes but along `axis`."""

    name = "cortex.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = OPERANDS_FORMAT

    def __init__(self, inputs: Sequence[SSAValue], axis: int):
        super().__init__(operands=[list(inputs)], properties={"axis": i64_attr(axis)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = same_element(self, *self.inputs)
        in_shapes = [shape_of(v, f"operand #{i}") for i, v in enumerate(self.inputs)]
        return [tensor(shapes.concat(in_shapes, self.axis.value.data), element)]


@irdl_op_definition
class PadOp(CortexOp):
    """`x` inside a tensor of `value`: `pads` = (before each axis..., after each axis...), all ≥ 0
    (ONNX Pad, mode "constant")."""

    name = "cortex.pad"
    x = operand_def(TensorType)
    pads = prop_def(DenseArrayBase[I64])
    value = prop_def(FloatAttr[Float32Type], default_value=f32_attr(0.0))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, pads: Sequence[int], value: float = 0.0):
        properties: dict[str, Attribute] = {"pads": i64_array(pads)}
        if value != 0.0:
            properties["value"] = f32_attr(value)
        super().__init__(operands=[x], properties=properties)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "x")
        return [tensor(shapes.pad(t.get_shape(), ints(self.pads)), t.element_type)]


@irdl_op_definition
class SliceOp(CortexOp):
    """A strided box of `x`: along each axis, `sizes` elements from `starts`, `steps` apart (all ≥ 0, steps ≥ 1;
    a `?` size keeps a `?` dimension whole). ONNX Slice with positive steps, its bounds resolved."""

    name = "cortex.slice"
    x = operand_def(TensorType)
    starts = prop_def(DenseArrayBase[I64])
    sizes = prop_def(DenseArrayBase[I64])
    steps = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, starts: Sequence[int], sizes: Sequence[int], steps: Sequence[int]):
        properties = {"starts": i64_array(starts), "sizes": i64_array(sizes), "steps": i64_array(steps)}
        super().__init__(operands=[x], properties=properties)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "x")
        return [tensor(shapes.slice_(t.get_shape(), ints(self.starts), ints(self.sizes), ints(self.steps)), t.element_type)]


__all__ = ["ConcatOp", "PadOp", "SliceOp"]
