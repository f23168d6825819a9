"""Channels-last (NHWC) variants of the layout-sensitive tensor ops.

`cortex-convert-layout{layout=nhwc}` rewrites conv2d, pooling and
batch_norm to these, so that a chain of them (and the elementwise ops
between them) runs channels-last with transposes only at its edges. Each
op means exactly its NCHW original on transposed data:

    conv2d_nhwc(x, w_hwio, b)    = to_nhwc(conv2d(to_nchw(x), to_oihw(w_hwio), b))
    max_pool_nhwc / avg_pool_nhwc / batch_norm_nhwc likewise (channel axis last)

with to_nhwc = perm (0, 2, 3, 1), to_nchw = perm (0, 3, 1, 2) and the
weight in HWIO (kh, kw, in, out: upstream linalg's `conv_2d_nhwc_hwcf`
filter) = OIHW transposed by perm (2, 3, 1, 0). Properties are the NCHW
op's (strides, pads as top/left/bottom/right, dilations, kernel_shape, and a
conv's `group`: with g groups the weight is kH × kW × C/g × O, the filters of
group i, columns i·O/g to (i+1)·O/g, seeing channels i·C/g to (i+1)·C/g).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, DenseArrayBase, Float32Type, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, f32_attr, float_tensor, i64_array, i64_attr, shape_of, tensor, tensor_of
from cortex.dialects.tensor_ops import OPERANDS_FORMAT, TENSOR_TRAITS, UNARY_FORMAT, ints, same_element
from cortex.semantics import defaults as D
from cortex.semantics.defaults import HWIO_TO_OIHW, TO_NCHW, TO_NHWC

OIHW_TO_HWIO = (2, 3, 1, 0)


def permute(shape: Sequence[int], perm: Sequence[int]) -> tuple[int, ...]:
    return tuple(shape[p] for p in perm)


def nhwc_input(value: SSAValue, what: str) -> tuple[int, ...]:
    shape = shape_of(float_tensor(value, what), what)
    if len(shape) != 4:
        raise VerifyException(f"{what} must be a 4-D NHWC tensor, got {shapes.fmt(shape)}")
    return shape


@irdl_op_definition
class Conv2dNhwcOp(CortexOp):
    """`cortex.conv2d` on an NHWC input with an HWIO weight (see the module doc)."""

    name = "cortex.conv2d_nhwc"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    strides = prop_def(DenseArrayBase[I64], default_value=i64_array(D.STRIDES))
    pads = prop_def(DenseArrayBase[I64], default_value=i64_array(D.PADS))
    dilations = prop_def(DenseArrayBase[I64], default_value=i64_array(D.DILATIONS))
    group = prop_def(IntegerAttr[I64], default_value=i64_attr(D.CONV_GROUP))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = OPERANDS_FORMAT

    def __init__(
        self, x: SSAValue, weight: SSAValue, bias: SSAValue | None, strides, pads, dilations, group: int = D.CONV_GROUP
    ):
        bias_shape = shape_of(bias, "bias") if bias else None
        shape = self.shape(shape_of(x, "x"), shape_of(weight, "weight"), bias_shape, strides, pads, dilations, group)
        properties: dict[str, Attribute] = {
            "strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)
        }
        if group != D.CONV_GROUP:
            properties["group"] = i64_attr(group)
        super().__init__(
            operands=[x, weight, bias], result_types=[tensor(shape, tensor_of(x, "x").element_type)], properties=properties
        )

    @staticmethod
    def shape(x, w, bias, strides, pads, dilations, group: int = D.CONV_GROUP) -> tuple[int, ...]:
        if len(x) != 4 or len(w) != 4:
            raise shapes.ShapeError(f"conv2d_nhwc expects a 4-D input (NHWC) and a 4-D weight (HWIO), got {shapes.fmt(x)} and {shapes.fmt(w)}")
        nchw = shapes.conv2d(permute(x, TO_NCHW), permute(w, HWIO_TO_OIHW), bias, strides, pads, dilations, group)
        return permute(nchw, TO_NHWC)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        operands = [self.x, self.weight] + ([self.bias] if self.bias else [])
        element = same_element(self, *operands)
        bias = shape_of(self.bias, "bias") if self.bias else None
        shape = self.shape(
            shape_of(self.x, "x"), shape_of(self.weight, "weight"), bias,
            ints(self.strides), ints(self.pads), ints(self.dilations), self.group.value.data,
        )
        return [tensor(shape, element)]


class PoolNhwcOp(CortexOp):
    x = operand_def(TensorType)
    kernel_shape = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64], default_value=i64_array(D.STRIDES))
    pads = prop_def(DenseArrayBase[I64], default_value=i64_array(D.PADS))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, kernel_shape, strides, pads):
        shape = permute(shapes.pool2d(permute(shape_of(x, "x"), TO_NCHW), kernel_shape, strides, pads), TO_NHWC)
        super().__init__(
            operands=[x],
            result_types=[tensor(shape, tensor_of(x, "x").element_type)],
            properties={"kernel_shape": i64_array(kernel_shape), "strides": i64_array(strides), "pads": i64_array(pads)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        x = nhwc_input(self.x, "x")
        nchw = shapes.pool2d(permute(x, TO_NCHW), ints(self.kernel_shape), ints(self.strides), ints(self.pads))
        return [tensor(permute(nchw, TO_NHWC), tensor_of(self.x, "x").element_type)]


@irdl_op_definition
class MaxPoolNhwcOp(PoolNhwcOp):
    """`cortex.max_pool` on an NHWC input (see the module doc)."""

    name = "cortex.max_pool_nhwc"


@irdl_op_definition
class AvgPoolNhwcOp(PoolNhwcOp):
    """`cortex.avg_pool` on an NHWC input (see the module doc)."""

    name = "cortex.avg_pool_nhwc"


@irdl_op_definition
class BatchNormNhwcOp(CortexOp):
    """Inference batch norm over the last (channel) axis of an NHWC tensor."""

    name = "cortex.batch_norm_nhwc"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    epsilon = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.BATCH_NORM_EPSILON))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = OPERANDS_FORMAT

    def __init__(self, x: SSAValue, scale: SSAValue, bias: SSAValue, mean: SSAValue, var: SSAValue, epsilon: float):
        super().__init__(operands=[x, scale, bias, mean, var], result_types=[x.type], properties={"epsilon": f32_attr(epsilon)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = same_element(self, self.x, self.scale, self.bias, self.mean, self.var)
        x = nhwc_input(self.x, "x")
        params = [shape_of(v, n) for v, n in ((self.scale, "scale"), (self.bias, "bias"), (self.mean, "mean"), (self.var, "var"))]
        shapes.per_channel(permute(x, TO_NCHW), params, "batch_norm_nhwc")
        return [tensor(x, element)]


LAYOUT_OPS: list[type[IRDLOperation]] = [Conv2dNhwcOp, MaxPoolNhwcOp, AvgPoolNhwcOp, BatchNormNhwcOp]

__all__ = [op.__name__ for op in LAYOUT_OPS] + ["HWIO_TO_OIHW", "LAYOUT_OPS", "OIHW_TO_HWIO", "TO_NCHW", "TO_NHWC"]
