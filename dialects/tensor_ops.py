"""Generic tensor ops with ONNX semantics (NumPy broadcasting, NCHW, OIHW).

They let the example graphs (UnoptimizedModel, Linear→BatchNorm,
Conv→BatchNorm, GELU written out: `examples/tensor_graphs.py`) be written in the cortex dialect. Each
op's typing rule is one call into `cortex.dialects.shapes`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
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
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, f32_attr, float_tensor, i64_array, i64_attr, shape_of, tensor, tensor_of
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.tensor_data import ConcatOp, PadOp, SliceOp
from cortex.dialects.tensor_elementwise import (
    COMPARISONS,
    GELU_APPROXIMATIONS,
    OPERANDS_FORMAT,
    TENSOR_TRAITS,
    UNARY_FORMAT,
    AbsOp,
    AddOp,
    AndOp,
    BinaryOp,
    CompareOp,
    ConstantOp,
    DivOp,
    ErfOp,
    ExpOp,
    GeluOp,
    LogicalOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    NotOp,
    OrOp,
    PowOp,
    ReluOp,
    SelectOp,
    SigmoidOp,
    SqrtOp,
    SubOp,
    TanhOp,
    UnaryOp,
    XorOp,
    ints,
    numeric_tensor,
    same_element,
)
from cortex.dialects.traits import Compilable
from cortex.semantics import defaults as D


@irdl_op_definition
class MatmulOp(CortexOp):
    """ONNX MatMul (rank >= 2, batch dimensions broadcast)."""

    name = "cortex.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = OPERANDS_FORMAT

    def __init__(self, a: SSAValue, b: SSAValue):
        super().__init__(operands=[a, b])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = same_element(self, self.a, self.b)
        return [tensor(shapes.matmul(shape_of(self.a, "a"), shape_of(self.b, "b")), element)]


@irdl_op_definition
class LinearOp(CortexOp):
    """x·Wᵀ + b, W of shape N×K; the bias is optional."""

    name = "cortex.linear"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = OPERANDS_FORMAT

    def __init__(self, x: SSAValue, weight: SSAValue, bias: SSAValue | None = None):
        super().__init__(operands=[x, weight, bias])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        operands = [self.x, self.weight] + ([self.bias] if self.bias else [])
        element = same_element(self, *operands)
        bias = shape_of(self.bias, "bias") if self.bias else None
        return [tensor(shapes.linear(shape_of(self.x, "x"), shape_of(self.weight, "weight"), bias), element)]


@irdl_op_definition
class BatchNormOp(CortexOp):
    """Inference batch norm, ONNX operand order (x, scale, bias, mean, var)."""

    name = "cortex.batch_norm"
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

    def __init__(self, x: SSAValue, scale: SSAValue, bias: SSAValue, mean: SSAValue, var: SSAValue, epsilon: float = D.BATCH_NORM_EPSILON):
        super().__init__(
            operands=[x, scale, bias, mean, var],
            properties={"epsilon": f32_attr(epsilon)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = same_element(self, self.x, self.scale, self.bias, self.mean, self.var)
        if self.epsilon.value.data < 0:
            raise VerifyException(f"epsilon must not be negative, got {self.epsilon.value.data}")
        params = [shape_of(v, n) for v, n in ((self.scale, "scale"), (self.bias, "bias"), (self.mean, "mean"), (self.var, "var"))]
        return [tensor(shapes.per_channel(shape_of(self.x, "x"), params, "batch_norm"), element)]


@irdl_op_definition
class Conv2dOp(CortexOp):
    """2-D convolution, NCHW × OIHW, ONNX pads (top, left, bottom, right).

    With `group` = g > 1 (ONNX Conv's group) the C input channels and the O filters are split into g
    groups in order, the filters of group i seeing only its C/g channels (weight O × C/g × kH × kW);
    g = C = O is a depthwise convolution."""

    name = "cortex.conv2d"
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
        self,
        x: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None = None,
        strides: Sequence[int] = D.STRIDES,
        pads: Sequence[int] = D.PADS,
        dilations: Sequence[int] = D.DILATIONS,
        group: int = D.CONV_GROUP,
    ):
        properties: dict[str, Attribute] = {
            "strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)
        }
        if group != D.CONV_GROUP:
            properties["group"] = i64_attr(group)
        super().__init__(operands=[x, weight, bias], properties=properties)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        operands = [self.x, self.weight] + ([self.bias] if self.bias else [])
        element = same_element(self, *operands)
        bias = shape_of(self.bias, "bias") if self.bias else None
        shape = shapes.conv2d(
            shape_of(self.x, "x"),
            shape_of(self.weight, "weight"),
            bias,
            ints(self.strides),
            ints(self.pads),
            ints(self.dilations),
            self.group.value.data,
        )
        return [tensor(shape, element)]


class PoolOp(CortexOp):
    x = operand_def(TensorType)
    kernel_shape = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64], default_value=i64_array(D.STRIDES))
    pads = prop_def(DenseArrayBase[I64], default_value=i64_array(D.PADS))
    dilations = prop_def(DenseArrayBase[I64], default_value=i64_array(D.DILATIONS))  # ONNX pooling's (opset 10+)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(
        self,
        x: SSAValue,
        kernel_shape: Sequence[int],
        strides: Sequence[int] = D.STRIDES,
        pads: Sequence[int] = D.PADS,
        dilations: Sequence[int] = D.DILATIONS,
    ):
        properties = {"kernel_shape": i64_array(kernel_shape), "strides": i64_array(strides), "pads": i64_array(pads)}
        if tuple(dilations) != tuple(D.DILATIONS):
            properties["dilations"] = i64_array(dilations)
        super().__init__(operands=[x], properties=properties)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = float_tensor(self.x, "x").element_type
        shape = shapes.pool2d(
            shape_of(self.x, "x"), ints(self.kernel_shape), ints(self.strides), ints(self.pads), ints(self.dilations)
        )
        return [tensor(shape, element)]


@irdl_op_definition
class AvgPoolOp(PoolOp):
    """Average pooling; padded cells are not counted (ONNX count_include_pad=0)."""

    name = "cortex.avg_pool"


@irdl_op_definition
class MaxPoolOp(PoolOp):
    """Max pooling, NCHW; padded cells never win (ONNX MaxPool, padding −inf)."""

    name = "cortex.max_pool"


@irdl_op_definition
class TransposeOp(CortexOp):
    """Permutes the dimensions: result dimension i is input dimension perm[i] (ONNX Transpose)."""

    name = "cortex.transpose"
    x = operand_def(TensorType)
    perm = prop_def(DenseArrayBase[I64])
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, perm: Sequence[int]):
        super().__init__(
            operands=[x], properties={"perm": i64_array(perm)}
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "x")
        return [tensor(shapes.transpose(t.get_shape(), ints(self.perm)), t.element_type)]


@irdl_op_definition
class ReshapeOp(CortexOp):
    """Same elements, row-major order, the shape of the result type."""

    name = "cortex.reshape"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[x], result_types=[tensor(shape, tensor_of(x, "x").element_type)])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = tensor_of(self.x, "x")  # any element type: quantised (i8) tensors reshape too
        out = tensor_type = self.result.type
        if not isinstance(tensor_type, TensorType) or tensor_type.element_type != t.element_type:
            raise VerifyException(f"reshape must keep the element type {t.element_type}, got {out}")
        n_in, n_out = shapes.num_elements(t.get_shape()), shapes.num_elements(out.get_shape())
        if n_in is not None and n_out is not None and n_in != n_out:
            raise VerifyException(
                f"reshape from {shapes.fmt(t.get_shape())} ({n_in} elements) "
                f"to {shapes.fmt(out.get_shape())} ({n_out} elements) changes the element count"
            )
        dims = out.get_shape()
        if n_in is not None and dims.count(shapes.DYNAMIC) == 1:  # one `?`: what the element count leaves
            known = shapes.num_elements([d for d in dims if d != shapes.DYNAMIC]) or 0
            if known == 0 or n_in % known:
                raise VerifyException(
                    f"reshape from {shapes.fmt(t.get_shape())} ({n_in} elements) to {shapes.fmt(dims)}: "
                    f"no size of the '?' dimension holds them"
                )
            return [tensor([n_in // known if d == shapes.DYNAMIC else d for d in dims], t.element_type)]
        return [None]


@irdl_op_definition
class SoftmaxOp(CortexOp):
    """exp(x − max) / Σ exp(x − max) along `axis` (ONNX Softmax, opset 13)."""

    name = "cortex.softmax"
    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64], default_value=i64_attr(D.SOFTMAX_AXIS))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, axis: int = D.SOFTMAX_AXIS):
        super().__init__(operands=[x], properties={"axis": i64_attr(axis)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "x")
        shapes.normalise_axis(self.axis.value.data, t.get_num_dims())
        return [t]


@irdl_op_definition
class CastOp(CortexOp):
    """Each element converted to the result's element type (ONNX Cast): floats round to nearest even
    when narrowing; a float becomes an integer truncated toward zero (out of range: undefined, as in
    ONNX), an integer a float rounded to nearest; integers wrap when narrowing and extend their sign
    when widening; to i1 (boolean) is `!= 0` (NaN is true), from i1 is 0 or 1.

    What lets a stage computed in float64 (scene change's SSIM moments) be written with
    the generic ops, whose kernels keep their operands' float type: cast the f32 image
    up, compute, cast back. Shape is kept; only the element type changes.
    """

    name = "cortex.cast"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, element: Attribute):
        super().__init__(operands=[x], result_types=[tensor(shape_of(x, "the operand"), element)])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = numeric_tensor(self.x, "the operand")
        out = numeric_tensor(self.result, "the result")
        return [tensor(t.get_shape(), out.element_type)]


@irdl_op_definition
class ToScalarOp(CortexOp):
    """The one element of a rank-0 float tensor as a float scalar of the result type
    (rounded to nearest even when narrowing): how a full reduction feeds a scalar operand
    (scene change's mean SSIM → its f32 score)."""

    name = "cortex.to_scalar"
    x = operand_def(TensorType)
    result = result_def(AnyFloat)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, element: Attribute):
        super().__init__(operands=[x], result_types=[element])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "the operand")
        if t.get_num_dims() != 0:
            raise VerifyException(f"the operand must be a rank-0 tensor, got {t}")
        return [None]


class ReduceOp(CortexOp):
    """ONNX reduce over `axes` (empty: all axes), keeping them if keepdims = 1."""

    x = operand_def(TensorType)
    axes = prop_def(DenseArrayBase[I64], default_value=i64_array([]))
    keepdims = prop_def(IntegerAttr[I64], default_value=i64_attr(D.KEEPDIMS))
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, axes: Sequence[int] = (), keepdims: bool = True):
        super().__init__(
            operands=[x],
            properties={"axes": i64_array(axes), "keepdims": i64_attr(int(keepdims))},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = float_tensor(self.x, "x")
        keep = self.keepdims.value.data
        if keep not in (0, 1):
            raise VerifyException(f"keepdims must be 0 or 1, got {keep}")
        return [tensor(shapes.reduce(t.get_shape(), ints(self.axes), bool(keep)), t.element_type)]


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    name = "cortex.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    name = "cortex.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    name = "cortex.reduce_max"


TENSOR_OPS: list[type[IRDLOperation]] = [
    ConstantOp,
    AddOp,
    SubOp,
    MulOp,
    DivOp,
    PowOp,
    NegOp,
    ExpOp,
    LogOp,
    SqrtOp,
    AbsOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
    GeluOp,
    MaxOp,
    MinOp,
    ErfOp,
    SelectOp,
    CompareOp,
    NotOp,
    AndOp,
    OrOp,
    XorOp,
    MatmulOp,
    LinearOp,
    BatchNormOp,
    Conv2dOp,
    AvgPoolOp,
    MaxPoolOp,
    TransposeOp,
    ReshapeOp,
    SoftmaxOp,
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    CastOp,
    ToScalarOp,
    ConcatOp,
    PadOp,
    SliceOp,
]

UNARY_OPS = [op for op in TENSOR_OPS if issubclass(op, UnaryOp)]
BINARY_OPS = [op for op in TENSOR_OPS if issubclass(op, BinaryOp)]
ELEMENTWISE_OPS = UNARY_OPS + BINARY_OPS
__all__ = [op.__name__ for op in TENSOR_OPS] + [
    "TENSOR_OPS", "UNARY_OPS", "BINARY_OPS", "ELEMENTWISE_OPS", "AnyFloat", "COMPARISONS", "GELU_APPROXIMATIONS", "BinaryOp", "LogicalOp", "UnaryOp",
    "OPERANDS_FORMAT", "TENSOR_TRAITS", "UNARY_FORMAT", "ints", "same_element",
]
