"""convert-cortex-to-linalg: every compilable cortex op → linalg/arith/math/tensor.

A partial lowering in the manner of MLIR's Toy chapter 5: the legality
target is "no op with the `Compilable` trait is left"; external ops, state
and weights are legal here and left to convert-cortex-to-extern. One
lowering per op class, registered with `@lowers(OpClass)` in `LOWERINGS`;
one pattern (`LowerByTable`) looks each op's class up, applied by xDSL's
greedy walker.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriteWalker

from cortex.dialects.traits import Compilable
from cortex.ir import describe
from cortex.lowering import layout, quant, tensor_data, tensor_ops, vision, window  # noqa: F401 - their @lowers registrations
from cortex.lowering.base import LOWERINGS, LowerByTable, LoweringError
from cortex.lowering.unsigned import convert_unsigned_signatures


def is_illegal(op: Operation) -> bool:
    """After this pass, a compilable op of the cortex dialect must be gone."""
    return op.name.startswith("cortex.") and op.has_trait(Compilable)


@dataclass(frozen=True)
class ConvertCortexToLinalgPass(ModulePass):
    """Lower every compilable cortex op to upstream linalg/arith/math/tensor on tensors."""

    name = "convert-cortex-to-linalg"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in op.walk():
            if is_illegal(inner) and type(inner) not in LOWERINGS:
                raise LoweringError(f"{self.name}: no lowering for {describe(inner)}")
        PatternRewriteWalker(LowerByTable(self.name)).rewrite_module(op)
        for inner in op.walk():
            if is_illegal(inner):
                raise LoweringError(f"{self.name}: {describe(inner)} was not lowered")
        convert_unsigned_signatures(op)


__all__ = ["LOWERINGS", "ConvertCortexToLinalgPass"]
