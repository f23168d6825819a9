"""`cortex-canonicalize`: xDSL's canonicalize, plus fast-math rewrites on request.

Without options it is exactly `canonicalize` (the cortex patterns come from
the `CortexCanonicalization` trait through `cortex.dialects.canonicalization`,
arith folds through its own folders). `cortex-canonicalize{fast-math=true}`
also applies the rewrites that are exact only for finite/positive inputs
(x·0 → 0, x/x → 1, exp(log(x)) → x); they are opt-in, never implied.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriterListener,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.canonicalize import CanonicalizationRewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects.canonicalization import fast_math_patterns_for


class FastMathRewritePattern(RewritePattern):
    """Dispatches to the fast-math patterns `FAST_MATH` lists for the op's class."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        for pattern in fast_math_patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


def canonicalize(
    module: ModuleOp,
    ctx: Context | None = None,
    fast_math: bool = False,
    listener: PatternRewriterListener | None = None,
) -> None:
    """Canonicalize `module` in place, as `CanonicalizePass` does (folding and region DCE).

    `listener` sees every rewrite (the DCE report uses it to tell folded ops
    from dead ones).
    """
    from cortex.ir import make_context

    patterns: list[RewritePattern] = [CanonicalizationRewritePattern()]
    if fast_math:
        patterns.append(FastMathRewritePattern())
    applier = GreedyRewritePatternApplier(patterns, ctx=ctx or make_context(), folding_enabled=True)
    walker = PatternRewriteWalker(applier, post_walk_func=region_dce, listener=listener or PatternRewriterListener())
    walker.rewrite_module(module)


@dataclass(frozen=True)
class CortexCanonicalizePass(ModulePass):
    """canonicalize with cortex's folds and patterns; `fast-math=true` adds x·0 → 0, x/x → 1, exp(log(x)) → x."""

    name = "cortex-canonicalize"

    fast_math: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        canonicalize(op, ctx, fast_math=self.fast_math)
