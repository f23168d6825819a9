"""Constant folding of cortex ops through their reference kernels.

An op whose operands are all constants is evaluated at compile time by
`cortex.semantics.kernels.run_kernel`, the one implementation of each op's
meaning, and replaced by a `cortex.constant` (tensor results) or an
`arith.constant` (f32 scalar results). There is deliberately no second copy
of any op's math here: folding is "run the interpreter on constants".

What does not fold:
- ops with side effects (`cortex.update_state`) and ops that cross the frame
  boundary (`cortex.state`, `cortex.weight`: their value is not known at
  compile time even though they have no operands);
- external (OpenCV) ops: the compiled program calls OpenCV at run time, and a
  compile-time result would tie the IR to the compiler machine's OpenCV build;
- results with more than `MAX_FOLDED_ELEMENTS` elements (1 Mi = 4 MiB of f32):
  beyond that a constant costs more to carry in the IR text than to compute;
- results whose type still has a dynamic dimension (run shape inference first).

Ops whose result depends on the shape of their operands alone (SHAPE_ONLY_OPS,
`cortex.center_crop`) fold whenever their operand types are static: a zero
placeholder of the right shape stands in for the operand's value.
"""

from __future__ import annotations

from typing import Any, TypeGuard

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import ConstantLike, is_side_effect_free

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp
from cortex.dialects.tensor_ops import ConstantOp
from cortex.dialects.traits import External, FrameBoundary
from cortex.dialects.vision import CenterCropOp
from cortex.errors import CortexError
from cortex.semantics.kernels import run_kernel
from cortex.semantics.values import element_dtype, numpy_to_dense

MAX_FOLDED_ELEMENTS = 1 << 20
"""Largest result (in elements) that folding turns into a constant."""

SHAPE_ONLY_OPS: tuple[type[Operation], ...] = (CenterCropOp,)
"""Ops whose result is a function of their operands' shapes, not their values."""

Value = np.ndarray | float


# ---------------------------------------------------------------- attributes


def splat_constant(tensor_type: TensorType[Any], value: float) -> ConstantOp:
    """A `cortex.constant` of `tensor_type` whose every element is `value`."""
    return ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor_type, [value]))


# ---------------------------------------------------------------- constants


def constant_value(value: SSAValue) -> Value | None:
    """The compile-time value of `value`: a `cortex.constant` or an f32 `arith.constant`."""
    owner = value.owner
    if isinstance(owner, ConstantOp):
        (array,) = run_kernel(owner, ())  # the constant's kernel decodes its attribute
        return array
    if (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and isinstance(owner.value.type, Float32Type)
    ):
        return owner.value.value.data  # a Python float, as the interpreter passes f32 scalars
    return None


def is_static(t: Attribute) -> TypeGuard[TensorType[Any]]:
    """`t` is a tensor type with every dimension known."""
    return isinstance(t, TensorType) and shapes.num_elements(t.get_shape()) is not None


def placeholder(value: SSAValue) -> np.ndarray | None:
    """Zeros shaped like `value`, for ops that read only their operands' shapes."""
    t = value.type
    if not is_static(t):
        return None
    dtype = element_dtype(t.element_type)
    return None if dtype is None else np.zeros(tuple(t.get_shape()), dtype=dtype)


# ---------------------------------------------------------------- folding


def may_fold(op_class: type[Operation]) -> bool:
    """Whether ops of this class can ever be folded (checked once per class)."""
    return (
        issubclass(op_class, CortexOp)
        and not op_class.has_trait(ConstantLike)
        and not op_class.has_trait(External)
        and not op_class.has_trait(FrameBoundary)
    )


def operand_values(op: Operation) -> list[Value] | None:
    """Compile-time values for every operand of `op`, or None if one is unknown."""
    values: list[Value | None]
    if isinstance(op, SHAPE_ONLY_OPS):
        values = [placeholder(v) for v in op.operands]
    else:
        values = [constant_value(v) for v in op.operands]
    known = [v for v in values if v is not None]
    return known if known and len(known) == len(values) else None


def foldable_result(t: Attribute) -> bool:
    if isinstance(t, Float32Type):
        return True
    if not is_static(t):
        return False
    count = shapes.num_elements(t.get_shape())
    return count is not None and count <= MAX_FOLDED_ELEMENTS


def fold(op: Operation) -> list[Value] | None:
    """The values of `op`'s results computed now, or None when `op` does not fold."""
    if not isinstance(op, CortexOp) or not may_fold(type(op)) or not is_side_effect_free(op):
        return None
    if not op.results or not all(foldable_result(r.type) for r in op.results):
        return None
    values = operand_values(op)
    if values is None:
        return None
    try:
        with np.errstate(all="ignore"):  # inf/nan are values like any other here
            return list(run_kernel(op, values))
    except CortexError:
        return None  # a kernel that rejects these values: left for run time to report, if it ever runs


def materialize(value: Value, result_type: Attribute) -> Operation | None:
    """The constant op that holds `value` as a value of `result_type`."""
    if isinstance(result_type, Float32Type):
        return arith.ConstantOp(FloatAttr(float(np.float32(value)), f32))
    array = np.asarray(value)
    if not isinstance(result_type, TensorType) or tuple(array.shape) != tuple(result_type.get_shape()):
        return None  # a kernel/type disagreement is the verifier's business, not ours
    dense = numpy_to_dense(array, result_type)
    return None if dense is None else ConstantOp(dense)


class FoldConstantOperands(RewritePattern):
    """op(constants...) → constant, for every foldable cortex op (see module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        values = fold(op)
        if values is None or len(values) != len(op.results):
            return
        made = [materialize(v, r.type) for v, r in zip(values, op.results)]
        constants = [c for c in made if c is not None]
        if len(constants) != len(made):
            return
        rewriter.replace(op, constants, [c.results[0] for c in constants])

