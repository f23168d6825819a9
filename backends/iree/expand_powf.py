"""`cortex-expand-powf`: every `math.powf` as exp/log with C99 pow's (NumPy's, ONNX's) special cases spelt out.

`math.powf` means C's `pow`, and the NumPy backend computes it with
`np.power`. IREE expands it to exp(y·log x) in the operand type, which is NaN
for every negative base (`(-3)^3`), for `x^0` with x ∈ {0, ±inf, NaN} and for
`1^NaN`, and gives +inf for `(-0)^-1`; in float32 it also loses ~|y·log x|
ULPs (1e10 came out 12 ULPs off). The IREE backend runs this pass before
handing a module over, so IREE only sees exp and log:

    |x|^y      = exp(y·log|x|), computed in f64 (f32 operands are widened,
                 the result rounded back: one rounding, as np.power)
    sign       = copysign(|x|^y, x) when y is an odd integer (so (-0)^-1 = -inf)
    NaN        when x is finite and negative and y is not an integer
    1          when y = ±0, x = 1 (y NaN included), or |x| = 1 and y = ±inf

exp/log of log(0) = -inf and log(inf) = inf give the zero and infinite
bases their C99 values without a case of their own.
"""

from __future__ import annotations

import math as pymath
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import AnyFloat, ModuleOp, f64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.abi import ORIGIN
from cortex.lowering.builders import constant_op


class _Emitter:
    """Inserts ops before the matched `math.powf`, each carrying its origin."""

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter = rewriter
        self.origin = op.attributes.get(ORIGIN)

    def __call__(self, op: Operation) -> SSAValue:
        if self.origin is not None:
            op.attributes[ORIGIN] = self.origin
        self.rewriter.insert(op)
        return op.results[0]

    def const(self, value: float) -> SSAValue:
        return self(constant_op(value, f64))

    def cmp(self, a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
        return self(arith.CmpfOp(a, b, predicate))


@dataclass
class ExpandPowF(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: math.PowFOp, rewriter: PatternRewriter) -> None:
        element = op.result.type
        if not isinstance(element, AnyFloat) or element.bitwidth > 64:
            return  # vectors and wider floats: not produced by the lowering, left to the compiler
        e = _Emitter(rewriter, op)
        x, y = op.lhs, op.rhs
        if element != f64:
            x, y = e(arith.ExtFOp(x, f64)), e(arith.ExtFOp(y, f64))
        ax = e(math.AbsFOp(x))
        magnitude = e(math.ExpOp(e(arith.MulfOp(y, e(math.LogOp(ax))))))
        floor_y = e(math.FloorOp(y))
        integral = e.cmp(floor_y, y, "oeq")  # ±inf count as (even) integers, NaN as none
        halves = e(math.FloorOp(e(arith.MulfOp(y, e.const(0.5)))))
        remainder = e(arith.SubfOp(y, e(arith.MulfOp(halves, e.const(2.0)))))
        odd = e(arith.AndIOp(integral, e.cmp(remainder, e.const(1.0), "oeq")))
        signed = e(arith.SelectOp(odd, e(math.CopySignOp(magnitude, x)), magnitude))
        negative_finite = e(arith.AndIOp(e.cmp(x, e.const(0.0), "olt"), e.cmp(x, e.const(-pymath.inf), "ogt")))
        invalid = e(arith.AndIOp(negative_finite, e.cmp(floor_y, y, "une")))
        result = e(arith.SelectOp(invalid, e.const(pymath.nan), signed))
        unit_base_infinite_exponent = e(arith.AndIOp(e.cmp(ax, e.const(1.0), "oeq"),
                                                     e.cmp(e(math.AbsFOp(y)), e.const(pymath.inf), "oeq")))
        one = e(arith.OrIOp(e(arith.OrIOp(e.cmp(y, e.const(0.0), "oeq"), e.cmp(x, e.const(1.0), "oeq"))),
                            unit_base_infinite_exponent))
        result = e(arith.SelectOp(one, e.const(1.0), result))
        if element != f64:
            result = e(arith.TruncFOp(result, element))
        rewriter.replace(op, [], [result])


@dataclass(frozen=True)
class ExpandPowFPass(ModulePass):
    """Every `math.powf` as exp/log plus C99 pow's special cases (the IREE backend's hand-over)."""

    name = "cortex-expand-powf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([ExpandPowF()]), apply_recursively=False).rewrite_module(op)


__all__ = ["ExpandPowF", "ExpandPowFPass"]
