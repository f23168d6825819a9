"""Canonical forms of quantisation: conversions between f32 and i8 that cancel or fold.

- quantize(dequantize(q)) with the same (scale, zero_point) is q itself
  (exact: dequantised values lie on the quantisation grid);
- with other parameters it is one `cortex.requantize` (no f32 round trip);
- a requantize to its own parameters is the identity;
- requantize(requantize(q)) is one requantize (one rounding instead of two).

`cortex.dialects.canonicalization.patterns_for` reads `QUANT_CANONICAL`, so
xDSL's `canonicalize` runs these through the ops' `CortexCanonicalization`.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from cortex.dialects.quant import DequantizeOp, QuantizeOp, RequantizeOp


class QuantizeOfDequantize(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: QuantizeOp, rewriter: PatternRewriter, /) -> None:
        source = op.x.owner
        if not isinstance(source, DequantizeOp):
            return
        if source.params == op.params:
            rewriter.replace(op, [], [source.x])
            return
        rewriter.replace(op, RequantizeOp(source.x, *source.params, *op.params))


class RequantizeToSame(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RequantizeOp, rewriter: PatternRewriter, /) -> None:
        if op.in_params == op.params:
            rewriter.replace(op, [], [op.x])


class RequantizeOfRequantize(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RequantizeOp, rewriter: PatternRewriter, /) -> None:
        source = op.x.owner
        if isinstance(source, RequantizeOp):
            rewriter.replace(op, RequantizeOp(source.x, *source.in_params, *op.params))


QUANT_CANONICAL: dict[type[Operation], tuple[RewritePattern, ...]] = {
    QuantizeOp: (QuantizeOfDequantize(),),
    RequantizeOp: (RequantizeToSame(), RequantizeOfRequantize()),
}


__all__ = ["QUANT_CANONICAL"]
