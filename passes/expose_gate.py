"""Expose the blur gate: the entry also returns the gate's sharpness, condition and threshold.

`cortex-run`'s per-frame log and JSON want each frame's sharpness and
whether scoring was skipped; both are SSA values of the pipeline.
Returning them as extra results (after the original ones, before any
state the lowering appends) gets the exact values of this very run from
either backend, with no hook in the backends and no recomputation. The
gate is the top-level `scf.if` whose condition compares a
`cortex.blur_detector` result; a pipeline without one is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cortex.dialects import BlurDetectorOp
from cortex.errors import CortexError
from cortex.ir import function_named
from cortex.semantics.modes import DEFAULT_ENTRY

EXPOSED = ("sharpness", "blurred", "threshold")
"""What the extra results are, in order: the blur detector's f32, the gate's i1 condition, the f32 it is compared with."""


def expose_blur_gate(module: ModuleOp, entry: str) -> bool:
    """Make @entry also return its blur gate's sharpness, condition and threshold; False if it has no gate."""
    fn = function_named(module, entry)
    if fn is None:
        raise CortexError(f"no function '@{entry}' to expose the blur gate of")
    for op in fn.body.block.ops:
        if not (isinstance(op, scf.IfOp) and isinstance(op.cond.owner, arith.CmpfOp)):
            continue
        compare = op.cond.owner
        sharpness = [v for v in compare.operands if isinstance(v.owner, BlurDetectorOp)]
        if not sharpness:
            continue
        threshold = compare.rhs if compare.lhs is sharpness[0] else compare.lhs
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        extra = [sharpness[0], op.cond, threshold]
        Rewriter.replace_op(ret, func.ReturnOp(*ret.arguments, *extra))
        outputs = [*fn.function_type.outputs.data, *(v.type for v in extra)]
        fn.function_type = func.FunctionType.from_lists(fn.function_type.inputs.data, outputs)
        if fn.res_attrs is not None:
            fn.res_attrs = ArrayAttr([*fn.res_attrs.data, *(DictionaryAttr({}) for _ in extra)])
        return True
    return False


@dataclass(frozen=True)
class ExposeBlurGatePass(ModulePass):
    """cortex-expose-blur-gate{entry=l2_frame}: @entry also returns (sharpness, blurred, threshold) of its blur gate."""

    name = "cortex-expose-blur-gate"
    entry: str = DEFAULT_ENTRY

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        expose_blur_gate(op, self.entry)


__all__ = ["EXPOSED", "ExposeBlurGatePass", "expose_blur_gate"]
