"""`cortex-fold-constant-layouts`: layout ops of constants computed at compile time.

A `linalg.broadcast` or `linalg.transpose` of an `arith.constant` (a bias
broadcast into a matmul's accumulator, a transposed weight) is itself a
constant: folded, the NumPy backend builds it once when the module loads
instead of calling `np.broadcast_to` / `.transpose` on every call. Results
larger than `max-elements` stay as they are (a bias broadcast over a large
image is cheaper to broadcast than to store).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.dialects.linalg.ops import BroadcastOp, TransposeOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern

from cortex.dialects.abi import ORIGIN
from cortex.errors import whole_number
from cortex.lowering.builders import dense_attr, element_of, shape_of
from cortex.semantics.values import dense_to_numpy


def folded(op: Operation) -> np.ndarray | None:
    """The value of a broadcast or transpose of a dense constant, else None."""
    if not isinstance(op, (BroadcastOp, TransposeOp)):
        return None
    source = op.operands[0].owner
    if not isinstance(source, arith.ConstantOp) or not isinstance(source.value, DenseIntOrFPElementsAttr):
        return None
    value = dense_to_numpy(source.value)
    if isinstance(op, TransposeOp):
        return np.transpose(value, list(op.permutation.get_values()))
    out_shape = shape_of(op.results[0])
    added = set(op.dimensions.get_values())
    kept = [d for d in range(len(out_shape)) if d not in added]
    expanded = value.reshape([out_shape[d] if d in kept else 1 for d in range(len(out_shape))])
    return np.broadcast_to(expanded, out_shape)


@dataclass
class FoldConstantLayout(RewritePattern):
    max_elements: int = 65536

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not isinstance(op, (BroadcastOp, TransposeOp)) or np.prod(shape_of(op.results[0])) > self.max_elements:
            return
        value = folded(op)
        if value is None:
            return
        constant = arith.ConstantOp(dense_attr(np.ascontiguousarray(value), element_of(op.results[0])))
        if ORIGIN in op.attributes:
            constant.attributes[ORIGIN] = op.attributes[ORIGIN]
        rewriter.replace(op, constant)


@dataclass(frozen=True)
class FoldConstantLayoutsPass(ModulePass):
    """Broadcasts and transposes of dense constants (at most `max_elements` each) as constants."""

    name = "cortex-fold-constant-layouts"
    max_elements: int = 65536

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        whole_number("max_elements", self.max_elements, 0, 2**31 - 1)
        walker = PatternRewriteWalker(GreedyRewritePatternApplier([FoldConstantLayout(self.max_elements)]), apply_recursively=True)
        walker.rewrite_module(op)


__all__ = ["FoldConstantLayout", "FoldConstantLayoutsPass", "folded"]
