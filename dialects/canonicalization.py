"""Canonicalisation patterns of the cortex dialect, as a table op → patterns.

Each rewrite is one small `RewritePattern` rooted at one op class (as in
xDSL's `transforms/canonicalization_patterns/arith.py`); `patterns_for` is
what the `CortexCanonicalization` trait every cortex op carries answers
(it imports this module when `canonicalize` first asks), so xDSL's
`canonicalize` runs them, together with the quantisation rewrites of
`cortex.dialects.quant_canonicalization`.

Three groups:
- `CANONICAL`: always-exact identities (x·1, x+0, x−0, x/1, x**2 → x·x,
  relu∘relu, transpose∘transpose, identity transpose, reshape∘reshape,
  same-shape reshape, fusion terms whose weight is exactly ±0.0);
- constant folding (`FoldConstantOperands`, `cortex.dialects.folding`),
  tried first on every op class that may fold;
- `FAST_MATH`: identities exact only for finite (or positive) inputs —
  x·0 → 0 (wrong for inf/nan), x/x → 1 (wrong for 0, inf, nan),
  exp(log(x)) → x (wrong for x ≤ 0). They are not in the trait's table:
  only `cortex-canonicalize{fast-math=true}` adds them.

"1" / "0" / "2" means a `cortex.constant` whose every element is exactly
that value, splat or not, on either side of an op with xDSL's `Commutative`
trait (add, mul). The units and zeros are one table, `ALGEBRA`, read by two
patterns (`RightUnit`, `Absorb`). A rewrite that
would replace an op by one of its operands does so only if the operand has
the op's result type exactly: broadcasting (x + zeros(4x4) with x: 4x1)
changes the shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, FloatAttr
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import Commutative

from cortex.dialects.base import i64_array
from cortex.dialects.folding import FoldConstantOperands, constant_value, is_static, may_fold, splat_constant
from cortex.dialects.quant_canonicalization import QUANT_CANONICAL
from cortex.dialects.tensor_ops import (
    AddOp,
    ConstantOp,
    DivOp,
    ExpOp,
    LogOp,
    MulOp,
    PowOp,
    ReluOp,
    ReshapeOp,
    SubOp,
    TransposeOp,
)
from cortex.dialects.vision import ScoreFusionOp

# ---------------------------------------------------------------- matching helpers


def is_splat_of(value: SSAValue, number: float) -> bool:
    """`value` is a `cortex.constant` whose every element equals `number` exactly."""
    if not isinstance(value.owner, ConstantOp):
        return False
    array = constant_value(value)
    return isinstance(array, np.ndarray) and array.size > 0 and bool(np.all(array == number))


def is_zero_weight(value: SSAValue) -> bool:
    """`value` is an f32 `arith.constant` equal to 0.0 (or -0.0)."""
    owner = value.owner
    return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr) and owner.value.value.data == 0.0


def forward(rewriter: PatternRewriter, op: Operation, value: SSAValue) -> bool:
    """Replace `op` by its operand `value` when the types agree exactly."""
    if value.type != op.results[0].type:
        return False
    rewriter.replace(op, [], [value])
    return True


@dataclass(frozen=True)
class Algebra:
    """What a binary op's constants do: `x ∘ right_unit = x`, `x ∘ zero = zero` (fast-math).

    With xDSL's `Commutative` trait on the op, the constant may stand on either side.
    """

    right_unit: float | None = None
    zero: float | None = None


ALGEBRA: dict[type[Operation], Algebra] = {
    AddOp: Algebra(right_unit=0.0),
    SubOp: Algebra(right_unit=0.0),
    MulOp: Algebra(right_unit=1.0, zero=0.0),
    DivOp: Algebra(right_unit=1.0),
}


def other_operand(op: Operation, constant: float) -> SSAValue | None:
    """The operand x of `x ∘ constant` (or `constant ∘ x` when `op` is Commutative), if any."""
    lhs, rhs = op.operands
    if is_splat_of(rhs, constant):
        return lhs
    if op.has_trait(Commutative) and is_splat_of(lhs, constant):
        return rhs
    return None


# ---------------------------------------------------------------- always exact


class RightUnit(RewritePattern):
    """x ∘ e → x for the op's unit e (x + 0, 0 + x, x − 0, x · 1, 1 · x, x / 1).

    x + (+0) turns x = −0 into +0: equal values.
    """

    def __init__(self, unit: float):
        self.unit = unit

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if (x := other_operand(op, self.unit)) is not None:
            forward(rewriter, op, x)


class PowTwo(RewritePattern):
    """x ** 2 → x · x (strength reduction; IEEE x·x is what pow(x, 2) rounds to)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter, /) -> None:
        if is_splat_of(op.rhs, 2.0) and op.lhs.type == op.result.type:
            square = MulOp.build(operands=[op.lhs, op.lhs], result_types=[op.result.type])
            rewriter.replace(op, square)


class ReluOfRelu(RewritePattern):
    """relu(relu(x)) → relu(x): relu is idempotent."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(inner := op.x.owner, ReluOp):
            forward(rewriter, op, inner.result)


def compose_perms(inner: Sequence[int], outer: Sequence[int]) -> tuple[int, ...]:
    """The perm of transpose(transpose(x, inner), outer): dim i reads x's dim inner[outer[i]]."""
    return tuple(inner[p] for p in outer)


class IdentityTranspose(RewritePattern):
    """transpose(x, [0, 1, ...]) → x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        if op.perm.get_values() == tuple(range(len(op.perm))):
            forward(rewriter, op, op.x)


class TransposeOfTranspose(RewritePattern):
    """transpose(transpose(x, p), q) → transpose(x, p∘q), or x when that is the identity."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.x.owner
        if not isinstance(inner, TransposeOp):
            return
        perm = compose_perms(inner.perm.get_values(), op.perm.get_values())
        if perm == tuple(range(len(perm))):
            forward(rewriter, op, inner.x)
            return
        composed = TransposeOp.build(
            operands=[inner.x], result_types=[op.result.type], properties={"perm": i64_array(perm)}
        )
        rewriter.replace(op, composed)


class ReshapeOfReshape(RewritePattern):
    """reshape(reshape(x)) → reshape(x): only the last shape matters (row-major order)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        inner = op.x.owner
        if not isinstance(inner, ReshapeOp):
            return
        if forward(rewriter, op, inner.x):
            return
        rewriter.replace(op, ReshapeOp.build(operands=[inner.x], result_types=[op.result.type]))


class ReshapeToSameType(RewritePattern):
    """reshape(x) → x when the shape does not change."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /) -> None:
        forward(rewriter, op, op.x)


class DropZeroWeightTerms(RewritePattern):
    """score_fusion: a term with weight 0.0 contributes exactly 0 (every map is finite).

    Only an exact zero (0.0 or -0.0) drops a term: a negative, tiny or
    subnormal weight (a user mode table may hold any) keeps its term, and so
    DCE keeps the stage that feeds it (tests/test_signed_weights.py). The
    remaining terms keep their order; with no term left the result is a
    zero map.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScoreFusionOp, rewriter: PatternRewriter, /) -> None:
        if len(op.maps) != len(op.weights) or len(op.terms.data) != len(op.maps):
            return  # malformed: leave it for the verifier to report
        keep = [i for i, w in enumerate(op.weights) if not is_zero_weight(w)]
        if len(keep) == len(op.weights):
            return
        if not keep:
            if is_static(op.result.type):
                rewriter.replace(op, splat_constant(op.result.type, 0.0))
            return
        fused = ScoreFusionOp.build(
            operands=[[op.maps[i] for i in keep], [op.weights[i] for i in keep]],
            result_types=[op.result.type],
            properties={"terms": ArrayAttr([op.terms.data[i] for i in keep])},
            attributes=dict(op.attributes),
        )
        rewriter.replace(op, fused)


# ---------------------------------------------------------------- fast-math only


class Absorb(RewritePattern):
    """x ∘ z → z for the op's zero z: x · 0 → 0 (fast-math: inf·0 and nan·0 are nan)."""

    def __init__(self, zero: float):
        self.zero = zero

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if other_operand(op, self.zero) is not None and is_static(op.results[0].type):
            rewriter.replace(op, splat_constant(op.results[0].type, self.zero))


class DivSelf(RewritePattern):
    """x / x → 1 (fast-math: 0/0, inf/inf and nan/nan are nan)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DivOp, rewriter: PatternRewriter, /) -> None:
        if op.lhs == op.rhs and is_static(op.result.type):
            rewriter.replace(op, splat_constant(op.result.type, 1.0))


class ExpOfLog(RewritePattern):
    """exp(log(x)) → x (fast-math: only for x > 0)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExpOp, rewriter: PatternRewriter, /) -> None:
        if isinstance(inner := op.x.owner, LogOp):
            forward(rewriter, op, inner.x)


# ---------------------------------------------------------------- the tables

def _units() -> dict[type[Operation], tuple[RewritePattern, ...]]:
    return {op: (RightUnit(a.right_unit),) for op, a in ALGEBRA.items() if a.right_unit is not None}


CANONICAL: dict[type[Operation], tuple[RewritePattern, ...]] = {
    **_units(),
    PowOp: (PowTwo(),),
    ReluOp: (ReluOfRelu(),),
    TransposeOp: (IdentityTranspose(), TransposeOfTranspose()),
    ReshapeOp: (ReshapeToSameType(), ReshapeOfReshape()),
    ScoreFusionOp: (DropZeroWeightTerms(),),
}

FAST_MATH: dict[type[Operation], tuple[RewritePattern, ...]] = {
    **{op: (Absorb(a.zero),) for op, a in ALGEBRA.items() if a.zero is not None},
    DivOp: (DivSelf(),),
    ExpOp: (ExpOfLog(),),
}

_FOLD = FoldConstantOperands()


def patterns_for(op: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalisation patterns rooted at ops of class `op`: folding first, then the exact
    identities, then the quantisation rewrites."""
    fold = (_FOLD,) if may_fold(op) else ()
    return fold + CANONICAL.get(op, ()) + QUANT_CANONICAL.get(op, ())


def fast_math_patterns_for(op: type[Operation]) -> tuple[RewritePattern, ...]:
    """The extra patterns `cortex-canonicalize{fast-math=true}` adds for class `op`."""
    return FAST_MATH.get(op, ())


__all__ = ["ALGEBRA", "CANONICAL", "FAST_MATH", "fast_math_patterns_for", "patterns_for"]
