"""`cortex-recognize-gelu`: a GELU spelled out in single ops → `cortex.gelu`.

The exact GELU as ONNX exporters write it (PyTorch's `nn.GELU()`),

    x · 0.5 · (1 + erf(x / √2))        (x / √2 also as x · 0.7071067811)

becomes `cortex.gelu` (approximate "none"), with the same freedom in where
the 0.5 goes as below.

Traced PyTorch models write the tanh GELU as

    0.5 · x · (1 + tanh(0.7978845608 · (x + 0.044715 · x · x · x)))

ten elementwise ops and four constants; one `cortex.gelu {approximate =
"tanh"}` computes the same in one pass over the data. The pattern allows
either operand order of every add/mul (the matcher's commutativity), the
cube written ((k·x)·x)·x or k·((x·x)·x), the 0.5 applied to x or to the
whole product, and constants within 1e-6 of the textbook values (a constant
further off is a different function, left alone). Every intermediate must
have no other use, so the whole chain disappears; the constants may be shared.

Written as canonicalisation is: `RecognizeGelu` is an xDSL `RewritePattern`
rooted at `cortex.mul` (the last op of every spelling), applied by xDSL's
walker; it uses the declarative matcher (`cortex.rewriting.pattern.match`)
for the chain, whose commutative operands and alternative spellings would be
a ladder of `isinstance` checks by hand.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.tensor_ops import AddOp, DivOp, ErfOp, GeluOp, MulOp, TanhOp
from cortex.rewriting.pattern import Any, Const, Match, Op, Pattern, erase_dead_producers, match
from cortex.semantics import defaults as D

TOLERANCE = 1e-6


def mul(a: Pattern, b: Pattern) -> Op:
    """An intermediate product (one use: it dies with the chain)."""
    return Op(MulOp, a, b, one_use=True)


def add(a: Pattern, b: Pattern) -> Op:
    return Op(AddOp, a, b, one_use=True)


def const(value: float) -> Const:
    return Const(value, tol=TOLERANCE)


def gelu_tanh_pattern() -> Pattern:
    x = Any().bind("x")
    cube_times_k = mul(mul(mul(const(D.GELU_TANH_K), x), x), x) | mul(const(D.GELU_TANH_K), mul(mul(x, x), x))
    tanh = Op(TanhOp, mul(const(D.GELU_TANH_C), add(x, cube_times_k)), one_use=True)
    one_plus = add(const(1.0), tanh)
    root = (
        Op(MulOp, mul(const(0.5), x), one_plus)  # (0.5·x)·(1 + tanh(...)), PyTorch's order
        | Op(MulOp, x, mul(const(0.5), one_plus))  # x·(0.5·(1 + tanh(...)))
        | Op(MulOp, const(0.5), mul(x, one_plus))  # 0.5·(x·(1 + tanh(...)))
    )
    return root.bind("gelu")


def half_times(x: Pattern, one_plus: Pattern) -> Pattern:
    """0.5 · x · (1 + f), the 0.5 applied to x, to the sum or to the whole product."""
    return (
        Op(MulOp, mul(const(0.5), x), one_plus)  # (0.5·x)·(1 + f), PyTorch's order
        | Op(MulOp, x, mul(const(0.5), one_plus))  # x·(0.5·(1 + f))
        | Op(MulOp, const(0.5), mul(x, one_plus))  # 0.5·(x·(1 + f)): ONNX exports of nn.GELU()
    )


def gelu_erf_pattern() -> Pattern:
    x = Any().bind("x")
    scaled = Op(DivOp, x, const(math.sqrt(2.0)), one_use=True) | mul(x, const(math.sqrt(0.5)))
    one_plus = add(const(1.0), Op(ErfOp, scaled, one_use=True))
    return half_times(x, one_plus).bind("gelu")


GELU_TANH = gelu_tanh_pattern()
GELU_ERF = gelu_erf_pattern()


def replace_with_gelu(m: Match, rewriter: PatternRewriter, approximate: str = "tanh") -> bool:
    """One `cortex.gelu`, if it has the chain's result type (no broadcasting by a constant)."""
    root, x = m.op("gelu"), m["x"]
    if root.results[0].type != x.type:
        return False
    gelu = GeluOp(x, approximate=approximate)
    gelu.location = root.location
    chain = list(root.operands)
    rewriter.replace(root, gelu)
    erase_dead_producers(rewriter, chain)  # the one-use chain; constants other ops share stay
    return True


@dataclass(frozen=True)
class RecognizeGelu(RewritePattern):
    """A chain `pattern` describes, ending in a `cortex.mul` → `cortex.gelu {approximate}`."""

    pattern: Pattern
    approximate: str

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter, /) -> None:
        if (m := match(self.pattern, op.result)) is not None:
            replace_with_gelu(m, rewriter, self.approximate)


RECOGNIZE_GELU: tuple[RewritePattern, ...] = (RecognizeGelu(GELU_TANH, "tanh"), RecognizeGelu(GELU_ERF, "none"))


@dataclass(frozen=True)
class RecognizeGeluPass(ModulePass):
    """Replace GELU chains with `cortex.gelu`: tanh-approximated ones with approximate = "tanh", erf ones exact."""

    name = "cortex-recognize-gelu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # dce off: dead code the pass did not make is dce's business
        PatternRewriteWalker(GreedyRewritePatternApplier(list(RECOGNIZE_GELU), dce_enabled=False)).rewrite_module(op)
