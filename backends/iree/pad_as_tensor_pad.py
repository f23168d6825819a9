"""`cortex-pad-as-tensor-pad`: a constant pad written as fill + insert_slice becomes one `tensor.pad`.

`convert-cortex-to-linalg` pads (a convolution's or a pooling window's
border) the way NumPy likes it: `linalg.fill` of a fresh tensor with the
padding value, then `tensor.insert_slice` of the data into it
(`LinalgBuilder.pad`). IREE's CPU code generation cannot tile that pair
when it feeds an NCHW convolution: configuring the dispatch fails with
"slice along dimension 3 runs out-of-bounds: 16 >= 8" (iree-base-compiler
3.13, the 1×3×16×16 small CNN). `tensor.pad` is the form IREE's own
importers produce and fuses into the consumer's dispatch, so the IREE
backend runs this pass before handing a module over (`cortex.backends.iree`).

The pattern: `tensor.insert_slice %x into %fill[offsets] [sizes] [1, ...]`
with static offsets, unit strides, `sizes` = the whole of `%x` and `%fill` =
`linalg.fill ins(%c) outs(tensor.empty())` becomes `tensor.pad %x low[offsets]
high[dest - offsets - sizes] { tensor.yield %c }`. Same values, element for
element (`tests/test_iree_backend.py` checks it on the NumPy backend, which
emits `tensor.pad` as `np.pad`, and on IREE). Anything else — a dynamic
offset, a strided insert, a destination that is not a fresh fill (the window
ops' shifts) — is left alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, ModuleOp, TensorType
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.abi import ORIGIN


def constant_pad(op: tensor.InsertSliceOp) -> tuple[list[int], list[int]] | None:
    """(low, high) when `op` inserts the whole of its source into a fresh fill at static offsets, unit strides."""
    fill = op.dest.owner
    if not isinstance(fill, FillOp) or len(fill.outputs) != 1 or not isinstance(fill.outputs[0].owner, tensor.EmptyOp):
        return None
    if op.offsets or op.sizes or op.strides:  # dynamic operands
        return None
    source, dest = op.source.type, op.result.type
    if not isinstance(source, TensorType) or not isinstance(dest, TensorType):
        return None
    offsets = list(op.static_offsets.get_values())
    sizes = list(op.static_sizes.get_values())
    strides = list(op.static_strides.get_values())
    src_shape, dst_shape = list(source.get_shape()), list(dest.get_shape())
    if len(src_shape) != len(dst_shape) or any(s != 1 for s in strides) or sizes != src_shape:
        return None
    if any(d == DYNAMIC_INDEX for d in (*offsets, *src_shape, *dst_shape)):
        return None
    high = [d - o - s for d, o, s in zip(dst_shape, offsets, src_shape)]
    if any(v < 0 for v in (*offsets, *high)):
        return None
    return offsets, high


@dataclass
class FillInsertAsPad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.InsertSliceOp, rewriter: PatternRewriter) -> None:
        pad = constant_pad(op)
        if pad is None:
            return
        low, high = pad
        fill = op.dest.owner
        assert isinstance(fill, FillOp)
        body = Block(arg_types=[IndexType()] * len(low))
        body.add_op(tensor.YieldOp(fill.inputs[0]))
        attributes = {ORIGIN: op.attributes[ORIGIN]} if ORIGIN in op.attributes else None
        padded = tensor.PadOp(op.source, [], [], Region(body), low, high, op.result.type, attributes=attributes)
        rewriter.replace(op, padded)
        if not fill.results[0].uses:
            empty = fill.outputs[0].owner
            rewriter.erase(fill)
            if isinstance(empty, tensor.EmptyOp) and not empty.results[0].uses:
                rewriter.erase(empty)


@dataclass(frozen=True)
class PadAsTensorPadPass(ModulePass):
    """Every constant pad written as linalg.fill + tensor.insert_slice, as one tensor.pad."""

    name = "cortex-pad-as-tensor-pad"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([FillInsertAsPad()]), apply_recursively=False).rewrite_module(op)


__all__ = ["FillInsertAsPad", "PadAsTensorPadPass", "constant_pad"]
