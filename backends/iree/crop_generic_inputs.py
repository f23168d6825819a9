"""`cortex-crop-generic-inputs`: a `linalg.generic` input larger than the loops ever read is cut to what they read.

A pooling window in ceil mode (ONNX `ceil_mode=1`, or pads past the last window) is lowered with its
input padded on both sides, so the padded tensor can be longer than `(out - 1) * stride + kernel`: the
last rows are never read. NumPy does not mind; MLIR's verifier (IREE's too) infers each operand's
extent from the loop ranges and rejects the longer one ("inferred input/output operand #1 has shape's
dimension #0 to be 4, but found 3": ONNX's test_averagepool_2d_ceil_last_window_starts_on_pad).

For every generic whose loop ranges are all given by some operand dimension indexed by a plain loop
variable, and whose input maps are sums of loop variables with non-negative coefficients (so the
largest index is read at the largest loop values), each input is cut with a leading
`tensor.extract_slice` to the extent read. The values computed are the same (the cut rows were never
read); the IREE backend runs this before handing a module over.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.tensor import ExtractSliceOp
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


def loop_ranges(op: GenericOp) -> list[int] | None:
    """Each loop's trip count, from operand dims indexed by a plain loop variable; None if any is unknown."""
    ranges: dict[int, int] = {}
    operands = list(zip((*op.inputs, *op.outputs), op.indexing_maps))
    for value, amap in operands[len(op.inputs):] + operands[: len(op.inputs)]:  # outputs first: they set the ranges
        t = value.type
        if not isinstance(t, TensorType):
            continue
        for size, expr in zip(t.get_shape(), amap.data.results):
            if isinstance(expr, AffineDimExpr) and size >= 0:
                ranges.setdefault(expr.position, size)
    count = op.indexing_maps.data[0].data.num_dims if op.indexing_maps.data else 0
    if any(d not in ranges for d in range(count)):
        return None
    return [ranges[d] for d in range(count)]


def read_extent(amap, ranges: list[int]) -> list[int] | None:
    """1 + the largest index each result of `amap` reads, or None unless the map is monotone (non-negative)."""
    if amap.num_symbols:
        return None
    low = list(amap.eval([0] * len(ranges), []))
    high = list(amap.eval([r - 1 for r in ranges], []))
    for d in range(len(ranges)):  # every coefficient non-negative: one step in any dim never lowers an index
        unit = [0] * len(ranges)
        unit[d] = 1
        if any(v < b for v, b in zip(amap.eval(unit, []), low)):
            return None
    return [h + 1 for h in high] if all(v >= 0 for v in low) else None


@dataclass
class CropGenericInputs(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        ranges = loop_ranges(op)
        if ranges is None:
            return
        for index, (value, amap) in enumerate(zip(op.inputs, op.indexing_maps)):
            t = value.type
            if not isinstance(t, TensorType) or not amap.data.results:
                continue
            shape = list(t.get_shape())
            extent = read_extent(amap.data, ranges)
            if extent is None or any(s < 0 for s in shape) or extent == shape or any(e > s for e, s in zip(extent, shape)):
                continue
            crop = ExtractSliceOp.from_static_parameters(value, [0] * len(shape), extent)
            if isinstance(origin := op.attributes.get(ORIGIN), StringAttr):
                crop.attributes[ORIGIN] = origin
            rewriter.insert(crop)
            op.operands[index] = crop.result
            rewriter.has_done_action = True


@dataclass(frozen=True)
class CropGenericInputsPass(ModulePass):
    """Generic inputs longer than their loops read, cut to the extent read (MLIR's verifier requires it)."""

    name = "cortex-crop-generic-inputs"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([CropGenericInputs()]), apply_recursively=False).rewrite_module(op)


__all__ = ["CropGenericInputs", "CropGenericInputsPass", "loop_ranges", "read_extent"]
