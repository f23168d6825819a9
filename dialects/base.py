"""What every cortex op shares: typed accessors, and a verifier built on shape rules.

An op states its typing rule once, in `infer_result_types`, from its operand
types and properties. `verify_` checks the declared result types against it,
and the shape-inference pass uses the same method to make dynamic results
static.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    NoneType,
    Signedness,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.ir import Attribute, OpResult, SSAValue
from xdsl.ir.core import SSAValues
from xdsl.irdl import IRDLOperation, OpDef, VerificationContext
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.shapes import ShapeError

ui8 = IntegerType(8, Signedness.UNSIGNED)


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def f32_attr(value: float) -> FloatAttr:
    return FloatAttr(value, f32)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


def tensor_of(value: SSAValue | Attribute, what: str) -> TensorType:
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType):
        raise VerifyException(f"{what} must be a ranked tensor, got {t}")
    return t


def shape_of(value: SSAValue | Attribute, what: str) -> tuple[int, ...]:
    return tuple(tensor_of(value, what).get_shape())


def float_tensor(value: SSAValue, what: str) -> TensorType:
    t = tensor_of(value, what)
    if not isinstance(t.element_type, AnyFloat):
        raise VerifyException(f"{what} must have a float element type, got {t}")
    return t


def gray_image(value: SSAValue, what: str = "the gray image") -> tuple[int, int]:
    """An H×W f32 image: returns (H, W)."""
    t = tensor_of(value, what)
    if t.get_num_dims() != 2 or not isinstance(t.element_type, Float32Type):
        raise VerifyException(f"{what} must be a 2-D f32 tensor (H x W), got {t}")
    h, w = t.get_shape()
    shapes.check_image_side("H", h)
    shapes.check_image_side("W", w)
    return h, w


def frame_image(value: SSAValue, what: str = "the frame") -> tuple[int, int]:
    """An H×W×3 ui8 BGR frame: returns (H, W)."""
    t = tensor_of(value, what)
    shape = t.get_shape()
    if len(shape) != 3 or shape[2] not in (3, shapes.DYNAMIC) or t.element_type != ui8:
        raise VerifyException(f"{what} must be a tensor<HxWx3xui8> (BGR), got {t}")
    shapes.check_image_side("H", shape[0])
    shapes.check_image_side("W", shape[1])
    return shape[0], shape[1]


def f32_scalar(value: SSAValue, what: str) -> None:
    if not isinstance(value.type, Float32Type):
        raise VerifyException(f"{what} must be an f32 scalar, got {value.type}")


def _property_kinds() -> list[tuple[Attribute, str, str]]:
    """Sample values, what they are, and how to write one: to say what a property expects."""
    return [
        (i64_attr(16), "an i64 integer", "`16 : i64`"),
        (f32_attr(0.5), "an f32 float", "`0.5 : f32`"),
        (i64_array([1, 2]), "an i64 array", "`array<i64: 1, 2>`"),
        (DenseArrayBase.from_list(f32, [0.5]), "an f32 array", "`array<f32: 0.5>`"),
        (StringAttr("x"), "a string", '`"name"`'),
        (ArrayAttr([StringAttr("x")]), "an array of strings", '`["a", "b"]`'),
        (DenseIntOrFPElementsAttr.from_list(TensorType(f32, [1]), [0.5]), "a dense literal", "`dense<...> : tensor<...>`"),
    ]


def _expected_kind(definition) -> tuple[str, str] | None:
    for sample, what, example in _property_kinds():
        try:
            definition.constr.verify(sample, VerificationContext())
        except VerifyException:
            continue
        return what, example
    return None


def attribute_problem(op_def: OpDef, entries: Mapping[str, Attribute]) -> str | None:
    """Why an op's attribute and property entries do not fit its definition (None if they do).

    One check for every cortex op, run before xDSL's own (whose messages name no
    property): an unprefixed name the op does not define is a misspelling, not
    extra information -- a default would silently stand in for it -- so it is
    refused with the nearest defined name; a name with a dialect prefix
    (`foo.bar`) is a discardable attribute and stays allowed. A value of the
    wrong kind (`threshold = 1` for an f32) is named with how to write it.
    """
    known = {**op_def.properties, **op_def.attributes}
    for name in entries:
        if name in known or "." in name:
            continue
        close = difflib.get_close_matches(name, sorted(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        defined = ", ".join(f"'{k}'" for k in sorted(known)) or "none"
        return f"unknown property '{name}' (defined: {defined}){hint}"
    for name, value in entries.items():
        definition = known.get(name)
        if definition is None:
            continue
        try:
            definition.constr.verify(value, VerificationContext())
        except VerifyException:
            kind = _expected_kind(definition)
            if kind is None:
                return f"property '{name}' does not accept `{value}`"
            what, example = kind
            return f"property '{name}' must be {what}, e.g. {example}; got `{value}`"
    return None


class CortexOp(IRDLOperation):
    """Base of all cortex ops: one typing rule, `infer_result_types`, for builders and the verifier.

    A builder that passes no `result_types` gets the types the rule derives
    from its operands and properties (MLIR's `inferReturnTypes`); the verifier
    checks parsed or rewritten ops against the same rule.
    """

    def __init__(self, *, operands=None, result_types=None, properties=None, attributes=None, regions=None):
        infer = result_types is None
        if infer:
            result_types = [NoneType()] * len(type(self).get_irdl_definition().results)
        super().__init__(
            operands=operands, result_types=result_types, properties=properties, attributes=attributes, regions=regions
        )
        if infer:
            inferred = list(self.infer_result_types())
            if any(t is None for t in inferred):
                raise ValueError(f"'{self.name}' cannot infer its result types: pass result_types")
            # the results are fresh (no uses yet): give them the inferred types
            self.results = SSAValues(OpResult(t, self, i) for i, t in enumerate(inferred))

    def verify(self, verify_nested_ops: bool = True) -> None:
        # Before xDSL's per-op checks (the generated `verify_` runs them first): a misspelt
        # or mistyped property is reported by name, for every cortex op alike.
        problem = attribute_problem(type(self).get_irdl_definition(), {**self.properties, **self.attributes})
        if problem is not None:
            raise VerifyException(problem)
        for kind, values in (("operand", self.operands), ("result", self.results)):
            for index, value in enumerate(values):
                if isinstance(value.type, TensorType):
                    shapes.check_element_count(value.type.get_shape(), what=f"{kind} #{index}")
        super().verify(verify_nested_ops)

    def infer_result_types(self) -> Sequence[Attribute | None]:
        """The result types the operands and properties imply.

        A tensor type here may still hold dynamic dimensions; `None` means the
        op does not constrain that result beyond its IRDL definition.
        Raises VerifyException (ShapeError) when the operands cannot agree.
        """
        return [None] * len(self.results)

    def verify_(self) -> None:
        for prop, value in self.properties.items():
            if isinstance(value, FloatAttr) and not math.isfinite(value.value.data):
                raise VerifyException(f"property '{prop}' must be a finite number, got {value.value.data}")
        for index, (res, expected) in enumerate(zip(self.results, self.infer_result_types())):
            if expected is None:
                continue
            if not compatible(res.type, expected):
                raise VerifyException(
                    f"result #{index} has type {res.type}, but the operands imply {expected}"
                )


def compatible(actual: Attribute, expected: Attribute) -> bool:
    """Equal types, where a dynamic dimension on either side matches anything."""
    if isinstance(actual, TensorType) and isinstance(expected, TensorType):
        return actual.element_type == expected.element_type and shapes.shapes_agree(
            actual.get_shape(), expected.get_shape()
        )
    return actual == expected


def tensor(shape: Sequence[int], element: Attribute = f32) -> TensorType:
    return TensorType(element, list(shape))


__all__ = [
    "CortexOp",
    "ShapeError",
    "attribute_problem",
    "compatible",
    "f32_attr",
    "f32_scalar",
    "float_tensor",
    "frame_image",
    "gray_image",
    "i64_array",
    "i64_attr",
    "shape_of",
    "tensor",
    "tensor_of",
    "ui8",
]
