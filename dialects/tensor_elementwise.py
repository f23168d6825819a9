"""Elementwise tensor ops (ONNX semantics: NumPy broadcasting) and constants.

The base classes every tensor op family shares live here too: the traits of a
compilable tensor op, the two assembly formats, and the element-type rule of
ops with several operands. `cortex.dialects.tensor_ops` lists every tensor op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Commutative, ConstantLike, Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, float_tensor, shape_of, tensor, tensor_of
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.traits import Compilable
from cortex.semantics import defaults as D

TENSOR_TRAITS = (Pure(), Compilable(), CortexCanonicalization())
UNARY_FORMAT = "$x attr-dict `:` type($x) `->` type($result)"
OPERANDS_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


def same_element(op: CortexOp, *values: SSAValue) -> Attribute:
    """All operands share one float element type; returns it."""
    elements = {float_tensor(v, f"operand #{i}").element_type for i, v in enumerate(values)}
    if len(elements) != 1:
        raise VerifyException(f"operands must share one element type, got {', '.join(map(str, elements))}")
    return elements.pop()


def ints(attr: DenseArrayBase[Any]) -> tuple[int, ...]:
    """The integers of an i64 array property."""
    return tuple(int(v) for v in attr.get_values())


@irdl_op_definition
class ConstantOp(CortexOp):
    """A dense tensor constant (`value`); rank 0 for a scalar that broadcasts."""

    name = "cortex.constant"
    value = prop_def(DenseIntOrFPElementsAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), ConstantLike(), Compilable())

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(result_types=[value.type], properties={"value": value})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        return [self.value.type]

    @classmethod
    def parse(cls, parser: Parser) -> ConstantOp:
        start = parser.pos
        value = parser.parse_attribute()
        if not isinstance(value, DenseIntOrFPElementsAttr):
            parser.raise_error(f"cortex.constant expects a dense<...> tensor attribute, got {value}", start, parser.pos)
        attrs = parser.parse_optional_attr_dict()
        op = cls(value)
        op.attributes |= attrs
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.value)
        printer.print_op_attributes(self.attributes)


class UnaryOp(CortexOp):
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue):
        super().__init__(operands=[x])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        return [float_tensor(self.x, "the operand")]


class BinaryOp(CortexOp):
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        element = same_element(self, self.lhs, self.rhs)
        return [tensor(shapes.broadcast(shape_of(self.lhs, "lhs"), shape_of(self.rhs, "rhs")), element)]


@irdl_op_definition
class AddOp(BinaryOp):
    """Elementwise lhs + rhs with NumPy (ONNX) broadcasting."""

    name = "cortex.add"
    traits = traits_def(*TENSOR_TRAITS, Commutative())


@irdl_op_definition
class SubOp(BinaryOp):
    """Elementwise lhs − rhs with NumPy (ONNX) broadcasting."""

    name = "cortex.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """Elementwise lhs · rhs with NumPy (ONNX) broadcasting."""

    name = "cortex.mul"
    traits = traits_def(*TENSOR_TRAITS, Commutative())


@irdl_op_definition
class DivOp(BinaryOp):
    """Elementwise lhs / rhs with NumPy (ONNX) broadcasting (IEEE: x/0 is ±inf or nan)."""

    name = "cortex.div"


@irdl_op_definition
class PowOp(BinaryOp):
    """Elementwise lhs ** rhs with NumPy (ONNX) broadcasting."""

    name = "cortex.pow"


@irdl_op_definition
class NegOp(UnaryOp):
    """Elementwise −x."""

    name = "cortex.neg"


@irdl_op_definition
class ExpOp(UnaryOp):
    """Elementwise eˣ."""

    name = "cortex.exp"


@irdl_op_definition
class LogOp(UnaryOp):
    """Elementwise natural logarithm (log 0 = −inf, log of a negative = nan)."""

    name = "cortex.log"


@irdl_op_definition
class SqrtOp(UnaryOp):
    """Elementwise square root (nan below 0)."""

    name = "cortex.sqrt"


@irdl_op_definition
class AbsOp(UnaryOp):
    """Elementwise |x|."""

    name = "cortex.abs"


@irdl_op_definition
class ReluOp(UnaryOp):
    """Elementwise max(x, 0)."""

    name = "cortex.relu"


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """Elementwise 1 / (1 + e⁻ˣ)."""

    name = "cortex.sigmoid"


@irdl_op_definition
class TanhOp(UnaryOp):
    """Elementwise hyperbolic tangent."""

    name = "cortex.tanh"


GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(UnaryOp):
    """GELU, exact (erf) or with the tanh approximation."""

    name = "cortex.gelu"
    approximate = prop_def(StringAttr, default_value=StringAttr(D.GELU_APPROXIMATE))
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, x: SSAValue, approximate: str = D.GELU_APPROXIMATE):
        CortexOp.__init__(self, operands=[x], properties={"approximate": StringAttr(approximate)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        if self.approximate.data not in GELU_APPROXIMATIONS:
            raise VerifyException(f"approximate must be \"none\" or \"tanh\", got \"{self.approximate.data}\"")
        return super().infer_result_types()


@irdl_op_definition
class MaxOp(BinaryOp):
    """Elementwise max(lhs, rhs) with NumPy (ONNX) broadcasting; nan if either is nan (ONNX Max)."""

    name = "cortex.max"
    traits = traits_def(*TENSOR_TRAITS, Commutative())


@irdl_op_definition
class MinOp(BinaryOp):
    """Elementwise min(lhs, rhs) with NumPy (ONNX) broadcasting; nan if either is nan (ONNX Min)."""

    name = "cortex.min"
    traits = traits_def(*TENSOR_TRAITS, Commutative())


@irdl_op_definition
class ErfOp(UnaryOp):
    """Elementwise error function erf(x) = 2/√π ∫₀ˣ e^(−t²) dt (ONNX Erf)."""

    name = "cortex.erf"


def numeric_tensor(value: SSAValue, what: str) -> TensorType:
    """A tensor of floats, signless integers or i1 (booleans): the element types `cast` and `select` move."""
    t = tensor_of(value, what)
    element = t.element_type
    if isinstance(element, AnyFloat) or (isinstance(element, IntegerType) and element.signedness.data == Signedness.SIGNLESS):
        return t
    raise VerifyException(f"{what} must have a float, signless integer or i1 element type, got {t}")


@irdl_op_definition
class SelectOp(CortexOp):
    """Elementwise `cond ? x : y` with NumPy (ONNX) broadcasting of all three (ONNX Where).

    `cond` is an i1 (boolean) tensor; `x` and `y` share one element type (float or signless
    integer), the result's."""

    name = "cortex.select"
    cond = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = OPERANDS_FORMAT

    def __init__(self, cond: SSAValue, x: SSAValue, y: SSAValue):
        super().__init__(operands=[cond, x, y])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        c = tensor_of(self.cond, "cond")
        if not (isinstance(c.element_type, IntegerType) and c.element_type.width.data == 1):
            raise VerifyException(f"cond must be an i1 (boolean) tensor, got {c}")
        x, y = numeric_tensor(self.x, "x"), numeric_tensor(self.y, "y")
        if x.element_type != y.element_type:
            raise VerifyException(f"x and y must share one element type, got {x.element_type} and {y.element_type}")
        shape = shapes.broadcast(shapes.broadcast(c.get_shape(), x.get_shape()), y.get_shape())
        return [tensor(shape, x.element_type)]


def boolean_tensor(value: SSAValue, what: str) -> TensorType:
    """A tensor of i1 (booleans)."""
    t = tensor_of(value, what)
    if not (isinstance(t.element_type, IntegerType) and t.element_type.width.data == 1):
        raise VerifyException(f"{what} must be an i1 (boolean) tensor, got {t}")
    return t


COMPARISONS = ("eq", "gt", "lt", "ge", "le")
"""`cortex.compare`'s predicates: ==, >, <, >=, <= (ordered on floats: false when either side is nan)."""


@irdl_op_definition
class CompareOp(CortexOp):
    """Elementwise `lhs <predicate> rhs` as an i1 tensor, with NumPy (ONNX) broadcasting (ONNX Equal,
    Greater, Less, GreaterOrEqual, LessOrEqual).

    `predicate` is one of `COMPARISONS`; `lhs` and `rhs` share one float, signless integer or i1 element
    type (integers compare signed). A comparison with nan is false."""

    name = "cortex.compare"
    predicate = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    )

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str):
        super().__init__(operands=[lhs, rhs], properties={"predicate": StringAttr(predicate)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        if self.predicate.data not in COMPARISONS:
            raise VerifyException(f"predicate must be one of {', '.join(COMPARISONS)}, got \"{self.predicate.data}\"")
        lhs, rhs = numeric_tensor(self.lhs, "lhs"), numeric_tensor(self.rhs, "rhs")
        if lhs.element_type != rhs.element_type:
            raise VerifyException(f"lhs and rhs must share one element type, got {lhs.element_type} and {rhs.element_type}")
        return [tensor(shapes.broadcast(lhs.get_shape(), rhs.get_shape()), IntegerType(1))]


@irdl_op_definition
class NotOp(CortexOp):
    """Elementwise logical negation of an i1 (boolean) tensor (ONNX Not)."""

    name = "cortex.not"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS)
    assembly_format = UNARY_FORMAT

    def __init__(self, x: SSAValue):
        super().__init__(operands=[x])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        return [boolean_tensor(self.x, "the operand")]


class LogicalOp(CortexOp):
    """A logical operator on two i1 (boolean) tensors, with NumPy (ONNX) broadcasting."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(*TENSOR_TRAITS, Commutative())
    assembly_format = BinaryOp.assembly_format

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        lhs, rhs = boolean_tensor(self.lhs, "lhs"), boolean_tensor(self.rhs, "rhs")
        return [tensor(shapes.broadcast(lhs.get_shape(), rhs.get_shape()), IntegerType(1))]


@irdl_op_definition
class AndOp(LogicalOp):
    """Elementwise lhs ∧ rhs of i1 tensors (ONNX And)."""

    name = "cortex.and"


@irdl_op_definition
class OrOp(LogicalOp):
    """Elementwise lhs ∨ rhs of i1 tensors (ONNX Or)."""

    name = "cortex.or"


@irdl_op_definition
class XorOp(LogicalOp):
    """Elementwise lhs ⊕ rhs of i1 tensors (ONNX Xor)."""

    name = "cortex.xor"
