"""`cortex-conv-im2col`: `linalg.conv_2d_nchw_fchw` as one matrix product (im2col).

    cols[c, kh, kw, n, oh, ow] = x[n, c, oh·sh + kh·dh, ow·sw + kw·dw]     (a copying linalg.generic)
    y[f, (n, oh, ow)]          = W[f, (c, kh, kw)] · cols[(c, kh, kw), (n, oh, ow)] + init

The filter stays on the left, so the product comes out F × (N·OH·OW): for
N = 1 that already is NCHW (one `tensor.expand_shape`); otherwise a
`linalg.transpose` moves N first. A constant filter is reshaped to F × (C·KH·KW) at compile time; the
columns are gathered with unit-stride inner rows (ow). The NumPy backend
turns the generic into a strided view, its collapse into one copy and the
matmul into one BLAS call; mlir-opt accepts every op. An init that is the
broadcast of a per-channel bias (what `convert-cortex-to-linalg` builds) is
re-broadcast to F × (N·OH·OW) instead of being transposed.
"""

from __future__ import annotations

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.linalg.ops import BroadcastOp, Conv2DNchwFchwOp, FillOp
from xdsl.dialects.tensor import EmptyOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.abi import ORIGIN
from cortex.dialects.folding import constant_array
from cortex.lowering.builders import PARALLEL, LinalgBuilder, affine_map, element_of, shape_of


def ints(attr) -> list[int]:
    return [int(v) for v in attr.get_values()] if hasattr(attr, "get_values") else [int(v) for v in attr.get_int_values()]


class Im2colConv(RewritePattern):
    """One `linalg.conv_2d_nchw_fchw` → gather (generic) + collapse + `linalg.matmul` + expand + transpose."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DNchwFchwOp, rewriter: PatternRewriter) -> None:
        x, weight = op.inputs
        (init,) = op.outputs
        n_, c_, _, _ = shape_of(x)
        f_, _, kh_, kw_ = shape_of(weight)
        _, _, oh_, ow_ = shape_of(init)
        sh, sw = ints(op.strides)
        dh, dw = ints(op.dilations)
        b = LinalgBuilder(rewriter, op)
        if isinstance(origin := op.attributes.get(ORIGIN), StringAttr):
            b.origin = origin
        element = element_of(x)
        k, m = c_ * kh_ * kw_, n_ * oh_ * ow_

        c, kh, kw, n, oh, ow = (AffineDimExpr(i) for i in range(6))
        gather = affine_map(6, [n, c, oh * sh + kh * dh, ow * sw + kw * dw])
        cols = b.generic(
            [x], b.empty((c_, kh_, kw_, n_, oh_, ow_), element), [gather, affine_map(6, range(6))], [PARALLEL] * 6, lambda v, _o: v
        )
        cols = b.collapse(cols, [[0, 1, 2], [3, 4, 5]], (k, m))

        filter_value = constant_array(weight)
        if filter_value is not None:
            lhs = b.constant(np.ascontiguousarray(filter_value.reshape(f_, k)), element)
        else:
            lhs = b.collapse(weight, [[0], [1, 2, 3]], (f_, k))

        acc = self.accumulator(b, init, f_, m)
        product = b.matmul(lhs, cols, acc)
        if n_ == 1:  # F × OH·OW already is the row-major NCHW result
            y = b.expand(product, [[0, 1], [2, 3]], (1, f_, oh_, ow_))
        else:
            y = b.transpose(b.expand(product, [[0], [1, 2, 3]], (f_, n_, oh_, ow_)), [1, 0, 2, 3])
        rewriter.replace(op, [], [y])
        erase_if_dead(rewriter, init.owner)


    @staticmethod
    def accumulator(b: LinalgBuilder, init: SSAValue, f_: int, m: int) -> SSAValue:
        """The conv's init (N×F×OH×OW) as F × (N·OH·OW)."""
        owner = init.owner
        if isinstance(owner, BroadcastOp) and list(owner.dimensions.get_values()) == [0, 2, 3]:
            return b.broadcast(owner.input, (f_, m), [1])
        if isinstance(owner, FillOp):
            return b.full((f_, m), owner.inputs[0], element_of(init))
        n_, _, oh_, ow_ = shape_of(init)
        moved = b.transpose(init, [1, 0, 2, 3])
        return b.collapse(moved, [[0], [1, 2, 3]], (f_, n_ * oh_ * ow_))


def erase_if_dead(rewriter: PatternRewriter, op) -> None:
    """The conv's old accumulator (a fill or broadcast, and its tensor.empty) once nothing reads it.

    xDSL's linalg ops declare no memory effects, so the applier's DCE keeps them.
    """
    while isinstance(op, (BroadcastOp, FillOp, EmptyOp)) and all(not r.uses for r in op.results):
        inits = [op.init] if isinstance(op, BroadcastOp) else list(op.outputs) if isinstance(op, FillOp) else []
        rewriter.erase(op)
        op = inits[0].owner if inits else None


class ConvIm2colPass(ModulePass):
    """Every `linalg.conv_2d_nchw_fchw` as an im2col gather and one `linalg.matmul`."""

    name = "cortex-conv-im2col"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([Im2colConv()]), apply_recursively=False).rewrite_module(op)


__all__ = ["ConvIm2colPass", "Im2colConv"]
