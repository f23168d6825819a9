"""Quantised ops of the cortex dialect: int8 storage, int32 accumulation.

A quantised tensor is a `tensor<...xi8>` whose real value is
`(q − zero_point) · scale`; the scale and zero point travel as properties of
the ops that produce and read it (no new element type), so the lowered IR is
plain `i8`/`i32` linalg that upstream MLIR runs.

- `cortex.quantize` / `cortex.dequantize` cross between f32 and i8 at the
  edges of a quantised region; `cortex.requantize` changes the scale.
- `cortex.qconv2d`, `cortex.qlinear`, `cortex.qmatmul` accumulate
  `Σ (x − x_zp)·(w − w_zp)` (+ an i32 bias of scale `x_scale·w_scale`) in
  int32, then rescale to the output's i8 by the multiplier
  `x_scale·w_scale[c]/out_scale` (`multipliers`, one per output channel with
  per-channel weights). The rescale is an f32 multiply of the i32
  accumulator, rounded half to even.
- `cortex.qrelu` (max with the zero point) and `cortex.qmax_pool` work in
  the scale of their input, exactly.

The reference kernels (`cortex.semantics.quant_kernels`) define each op's
meaning; the lowering and the NumPy backend compute the same integers.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
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
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait, Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, f32_attr, float_tensor, i64_array, i64_attr, shape_of, tensor, tensor_of
from cortex.dialects.traits import Compilable

i8 = IntegerType(8)
from cortex.semantics.defaults import Q_MAX, Q_MIN  # noqa: E402 - the one home of the int8 range

UNARY_FORMAT = "$x attr-dict `:` type($x) `->` type($result)"
OPERANDS_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


class QuantCanonicalization(HasCanonicalizationPatternsTrait):
    """Folding through the kernels (as every cortex op) plus the quantisation rewrites."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from cortex.dialects.canonicalization import patterns_for
        from cortex.dialects.quant_canonicalization import quant_patterns_for

        return patterns_for(op) + quant_patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


QUANT_TRAITS = (Pure(), Compilable(), QuantCanonicalization())


def f32_value(value: float) -> float:
    return float(np.float32(value))


def i8_tensor(value: SSAValue, what: str) -> TensorType:
    t = tensor_of(value, what)
    if t.element_type != i8:
        raise VerifyException(f"{what} must be an i8 tensor, got {t}")
    return t


def i32_tensor(value: SSAValue, what: str) -> TensorType:
    t = tensor_of(value, what)
    if t.element_type != i32:
        raise VerifyException(f"{what} must be an i32 tensor, got {t}")
    return t


def check_scale(value: float, what: str) -> None:
    if not (np.isfinite(value) and value > 0):
        raise VerifyException(f"{what} must be a positive finite number, got {value}")


def check_zero_point(value: int, what: str) -> None:
    if not Q_MIN <= value <= Q_MAX:
        raise VerifyException(f"{what} must lie in [{Q_MIN}, {Q_MAX}] (int8), got {value}")


def scale_prop():
    return prop_def(FloatAttr[Float32Type])


def zero_point_prop():
    return prop_def(IntegerAttr[I64], default_value=i64_attr(0))


def f32_array(values: Sequence[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f32, [f32_value(v) for v in values])


# ---------------------------------------------------------------- edges of a region


class ScaledOp(CortexOp):
    """An op with one (scale, zero_point) pair describing its i8 side."""

    scale = scale_prop()
    zero_point = zero_point_prop()
    irdl_options = (ParsePropInAttrDict(),)

    @property
    def params(self) -> tuple[float, int]:
        return self.scale.value.data, self.zero_point.value.data

    def check_params(self) -> None:
        check_scale(self.scale.value.data, "scale")
        check_zero_point(self.zero_point.value.data, "zero_point")


@irdl_op_definition
class QuantizeOp(ScaledOp):
    """f32 → i8: clamp(round_half_even(x / scale) + zero_point, −128, 127)."""

    name = "cortex.quantize"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, scale: float, zero_point: int = 0):
        super().__init__(
            operands=[x],
            result_types=[tensor(shape_of(x, "x"), i8)],
            properties={"scale": f32_attr(scale), "zero_point": i64_attr(zero_point)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        self.check_params()
        return [tensor(float_tensor(self.x, "x").get_shape(), i8)]


@irdl_op_definition
class DequantizeOp(ScaledOp):
    """i8 → f32: (q − zero_point) · scale."""

    name = "cortex.dequantize"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, scale: float, zero_point: int = 0):
        super().__init__(
            operands=[x],
            result_types=[tensor(shape_of(x, "x"), f32)],
            properties={"scale": f32_attr(scale), "zero_point": i64_attr(zero_point)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        self.check_params()
        return [tensor(i8_tensor(self.x, "x").get_shape(), f32)]


@irdl_op_definition
class RequantizeOp(ScaledOp):
    """i8 → i8 in a new scale: clamp(round_half_even((q − in_zp) · in_scale/scale) + zero_point)."""

    name = "cortex.requantize"
    x = operand_def(TensorType)
    in_scale = scale_prop()
    in_zero_point = zero_point_prop()
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, in_scale: float, in_zero_point: int, scale: float, zero_point: int):
        super().__init__(
            operands=[x],
            result_types=[x.type],
            properties={
                "in_scale": f32_attr(in_scale),
                "in_zero_point": i64_attr(in_zero_point),
                "scale": f32_attr(scale),
                "zero_point": i64_attr(zero_point),
            },
        )

    @property
    def in_params(self) -> tuple[float, int]:
        return self.in_scale.value.data, self.in_zero_point.value.data

    def multiplier(self) -> np.float32:
        return np.float32(self.in_scale.value.data / self.scale.value.data)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        self.check_params()
        check_scale(self.in_scale.value.data, "in_scale")
        check_zero_point(self.in_zero_point.value.data, "in_zero_point")
        return [i8_tensor(self.x, "x")]


# ---------------------------------------------------------------- int8 compute, int32 accumulation


class QuantComputeOp(CortexOp):
    """x (i8) × weight (i8) → i32 accumulator (+ i32 bias) → i8 result at (out_scale, out_zero_point)."""

    x_scale = scale_prop()
    x_zero_point = zero_point_prop()
    w_scales = prop_def(DenseArrayBase[Float32Type])
    w_zero_point = zero_point_prop()
    out_scale = scale_prop()
    out_zero_point = zero_point_prop()
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = OPERANDS_FORMAT

    def channels(self) -> int:
        """How many output channels a per-channel `w_scales` has."""
        raise NotImplementedError

    def multipliers(self) -> np.ndarray:
        """The f32 rescale factor of each output channel (one entry if per tensor)."""
        scales = np.asarray(self.w_scales.get_values(), np.float64)
        return (self.x_scale.value.data * scales / self.out_scale.value.data).astype(np.float32)

    def check_quant_params(self) -> None:
        check_scale(self.x_scale.value.data, "x_scale")
        check_scale(self.out_scale.value.data, "out_scale")
        check_zero_point(self.x_zero_point.value.data, "x_zero_point")
        check_zero_point(self.w_zero_point.value.data, "w_zero_point")
        check_zero_point(self.out_zero_point.value.data, "out_zero_point")
        scales = self.w_scales.get_values()
        for s in scales:
            check_scale(s, "every w_scales entry")
        if len(scales) not in (1, self.channels()):
            raise VerifyException(
                f"w_scales must hold 1 (per tensor) or {self.channels()} (per channel) scales, got {len(scales)}"
            )

    def quant_properties(self, x_q: tuple[float, int], w_scales: Sequence[float], w_zero_point: int, out_q: tuple[float, int]) -> dict:
        return {
            "x_scale": f32_attr(x_q[0]),
            "x_zero_point": i64_attr(x_q[1]),
            "w_scales": f32_array(w_scales),
            "w_zero_point": i64_attr(w_zero_point),
            "out_scale": f32_attr(out_q[0]),
            "out_zero_point": i64_attr(out_q[1]),
        }


@irdl_op_definition
class QConv2dOp(QuantComputeOp):
    """Quantised `cortex.conv2d` (NCHW × OIHW, i8; optional i32 bias); per-channel scales are per O."""

    name = "cortex.qconv2d"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    strides = prop_def(DenseArrayBase[I64], default_value=i64_array([1, 1]))
    pads = prop_def(DenseArrayBase[I64], default_value=i64_array([0, 0, 0, 0]))
    dilations = prop_def(DenseArrayBase[I64], default_value=i64_array([1, 1]))

    def __init__(
        self,
        x: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None,
        *,
        x_q: tuple[float, int],
        w_scales: Sequence[float],
        out_q: tuple[float, int],
        w_zero_point: int = 0,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        dilations: Sequence[int] = (1, 1),
    ):
        shape = shapes.conv2d(shape_of(x, "x"), shape_of(weight, "weight"), shape_of(bias, "bias") if bias else None, strides, pads, dilations)
        props = self.quant_properties(x_q, w_scales, w_zero_point, out_q)
        props |= {"strides": i64_array(strides), "pads": i64_array(pads), "dilations": i64_array(dilations)}
        super().__init__(operands=[x, weight, bias], result_types=[tensor(shape, i8)], properties=props)

    def channels(self) -> int:
        return shape_of(self.weight, "weight")[0]

    def infer_result_types(self) -> Sequence[Attribute | None]:
        i8_tensor(self.x, "x")
        i8_tensor(self.weight, "weight")
        bias = shape_of(i32_tensor(self.bias, "bias"), "bias") if self.bias else None
        self.check_quant_params()
        shape = shapes.conv2d(
            shape_of(self.x, "x"),
            shape_of(self.weight, "weight"),
            bias,
            tuple(self.strides.get_values()),
            tuple(self.pads.get_values()),
            tuple(self.dilations.get_values()),
        )
        return [tensor(shape, i8)]


@irdl_op_definition
class QLinearOp(QuantComputeOp):
    """Quantised `cortex.linear`: x (i8, ...×K) · Wᵀ (i8, N×K) + bias (i32, N); per-channel scales are per N."""

    name = "cortex.qlinear"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = opt_operand_def(TensorType)

    def __init__(
        self,
        x: SSAValue,
        weight: SSAValue,
        bias: SSAValue | None,
        *,
        x_q: tuple[float, int],
        w_scales: Sequence[float],
        out_q: tuple[float, int],
        w_zero_point: int = 0,
    ):
        shape = shapes.linear(shape_of(x, "x"), shape_of(weight, "weight"), shape_of(bias, "bias") if bias else None)
        props = self.quant_properties(x_q, w_scales, w_zero_point, out_q)
        super().__init__(operands=[x, weight, bias], result_types=[tensor(shape, i8)], properties=props)

    def channels(self) -> int:
        return shape_of(self.weight, "weight")[0]

    def infer_result_types(self) -> Sequence[Attribute | None]:
        i8_tensor(self.x, "x")
        i8_tensor(self.weight, "weight")
        bias = shape_of(i32_tensor(self.bias, "bias"), "bias") if self.bias else None
        self.check_quant_params()
        return [tensor(shapes.linear(shape_of(self.x, "x"), shape_of(self.weight, "weight"), bias), i8)]


@irdl_op_definition
class QMatmulOp(QuantComputeOp):
    """Quantised 2-D `cortex.matmul`: a (i8, M×K) · b (i8, K×N); per-channel scales are per column N."""

    name = "cortex.qmatmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        *,
        x_q: tuple[float, int],
        w_scales: Sequence[float],
        out_q: tuple[float, int],
        w_zero_point: int = 0,
    ):
        shape = shapes.matmul(shape_of(a, "a"), shape_of(b, "b"))
        props = self.quant_properties(x_q, w_scales, w_zero_point, out_q)
        super().__init__(operands=[a, b], result_types=[tensor(shape, i8)], properties=props)

    def channels(self) -> int:
        return shape_of(self.b, "b")[-1]

    def infer_result_types(self) -> Sequence[Attribute | None]:
        a, b = shape_of(i8_tensor(self.a, "a"), "a"), shape_of(i8_tensor(self.b, "b"), "b")
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"cortex.qmatmul takes 2-D operands, got {shapes.fmt(a)} and {shapes.fmt(b)}")
        self.check_quant_params()
        return [tensor(shapes.matmul(a, b), i8)]


# ---------------------------------------------------------------- ops that keep their input's scale


@irdl_op_definition
class QReluOp(CortexOp):
    """relu in the input's scale: max(q, zero_point)."""

    name = "cortex.qrelu"
    x = operand_def(TensorType)
    zero_point = zero_point_prop()
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, zero_point: int = 0):
        super().__init__(operands=[x], result_types=[x.type], properties={"zero_point": i64_attr(zero_point)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        check_zero_point(self.zero_point.value.data, "zero_point")
        return [i8_tensor(self.x, "x")]


@irdl_op_definition
class QMaxPoolOp(CortexOp):
    """max_pool on i8 (padding −128 never wins): exact in any scale, since quantisation is monotone."""

    name = "cortex.qmax_pool"
    x = operand_def(TensorType)
    kernel_shape = prop_def(DenseArrayBase[I64])
    strides = prop_def(DenseArrayBase[I64], default_value=i64_array([1, 1]))
    pads = prop_def(DenseArrayBase[I64], default_value=i64_array([0, 0, 0, 0]))
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue, kernel_shape: Sequence[int], strides: Sequence[int] = (1, 1), pads: Sequence[int] = (0, 0, 0, 0)):
        shape = shapes.pool2d(shape_of(x, "x"), kernel_shape, strides, pads)
        super().__init__(
            operands=[x],
            result_types=[tensor(shape, i8)],
            properties={"kernel_shape": i64_array(kernel_shape), "strides": i64_array(strides), "pads": i64_array(pads)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        t = i8_tensor(self.x, "x")
        shape = shapes.pool2d(
            t.get_shape(), tuple(self.kernel_shape.get_values()), tuple(self.strides.get_values()), tuple(self.pads.get_values())
        )
        return [tensor(shape, i8)]


@irdl_op_definition
class QAddOp(CortexOp):
    """add of two i8 tensors in their own scales, to an i8 result (NumPy broadcasting):
    clamp(round_half_even((a − a_zp)·a_scale/out_scale + (b − b_zp)·b_scale/out_scale) + out_zp)."""

    name = "cortex.qadd"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_scale = scale_prop()
    lhs_zero_point = zero_point_prop()
    rhs_scale = scale_prop()
    rhs_zero_point = zero_point_prop()
    out_scale = scale_prop()
    out_zero_point = zero_point_prop()
    result = result_def(TensorType)
    traits = traits_def(*QUANT_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, lhs_q: tuple[float, int], rhs_q: tuple[float, int], out_q: tuple[float, int]):
        shape = shapes.broadcast(shape_of(lhs, "lhs"), shape_of(rhs, "rhs"))
        props = {
            "lhs_scale": f32_attr(lhs_q[0]),
            "lhs_zero_point": i64_attr(lhs_q[1]),
            "rhs_scale": f32_attr(rhs_q[0]),
            "rhs_zero_point": i64_attr(rhs_q[1]),
            "out_scale": f32_attr(out_q[0]),
            "out_zero_point": i64_attr(out_q[1]),
        }
        super().__init__(operands=[lhs, rhs], result_types=[tensor(shape, i8)], properties=props)

    def multipliers(self) -> tuple[np.float32, np.float32]:
        out = self.out_scale.value.data
        return np.float32(self.lhs_scale.value.data / out), np.float32(self.rhs_scale.value.data / out)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        a, b = i8_tensor(self.lhs, "lhs"), i8_tensor(self.rhs, "rhs")
        for name in ("lhs_scale", "rhs_scale", "out_scale"):
            check_scale(getattr(self, name).value.data, name)
        for name in ("lhs_zero_point", "rhs_zero_point", "out_zero_point"):
            check_zero_point(getattr(self, name).value.data, name)
        return [tensor(shapes.broadcast(a.get_shape(), b.get_shape()), i8)]


QUANT_OPS: list[type[IRDLOperation]] = [QuantizeOp, DequantizeOp, RequantizeOp, QConv2dOp, QLinearOp, QMatmulOp, QReluOp, QMaxPoolOp, QAddOp]

__all__ = [op.__name__ for op in QUANT_OPS] + ["QUANT_OPS", "Q_MAX", "Q_MIN", "QuantComputeOp", "i8"]
