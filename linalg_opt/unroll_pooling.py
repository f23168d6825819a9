"""`cortex-unroll-pooling`: a small pooling window as an elementwise max (or sum) of shifted strided reads.

`convert-cortex-to-linalg` writes max and sum pooling as one `linalg.generic`
with two reduction loops over the window (upstream's pooling_nchw_max/sum).
Reductions over 2×2 or 3×3 axes are what NumPy does worst (`np.max` over
the window axes of a small pool). With the window
unrolled into the operands — one strided `tensor.extract_slice` of x per
window cell, x[:, :, i::sh, j::sw] — the generic is elementwise and its body
a chain of `maximumf`/`addf`: the NumPy backend emits kh·kw slices and
kh·kw − 1 ufunc calls, about five times faster on a 2×2 pool (benchmarks/README.md, "Figures behind the compiler's choices"),
and mlir-opt reads it as any elementwise generic. Windows larger than `max-window`
cells are left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import FillOp, GenericOp, YieldOp
from xdsl.dialects.tensor import ExtractSliceOp
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
from cortex.errors import whole_number
from cortex.lowering.builders import PARALLEL, REDUCE_COMBINERS, LinalgBuilder, addf, affine_map, maxf, shape_of

COMBINERS: dict[type[Operation], tuple[str, Callable[[SSAValue, SSAValue], SSAValue]]] = {arith.MaximumfOp: ("max", maxf), arith.AddfOp: ("add", addf)}


def coefficients(amap, num_dims: int) -> tuple[list[int], list[list[int]]]:
    """An affine map without symbols as (constant term, coefficient of each dim) per result."""
    base = list(amap.eval([0] * num_dims, []))
    columns = []
    for d in range(num_dims):
        unit = [0] * num_dims
        unit[d] = 1
        columns.append([v - b for v, b in zip(amap.eval(unit, []), base)])
    return base, [[columns[d][r] for d in range(num_dims)] for r in range(len(base))]


def pooling_window(op: GenericOp) -> tuple[int, int, int, int, int, int] | None:
    """(sh, sw, kh, kw, dh, dw) when `op` is a 2-D NCHW pooling generic as convert-cortex-to-linalg writes it."""
    iterators = [it.data for it in op.iterator_types]
    if iterators != [IteratorType.PARALLEL] * 4 + [IteratorType.REDUCTION] * 2 or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    maps = [m.data for m in op.indexing_maps]
    if any(m.num_symbols for m in maps) or len(maps[0].results) != 4:
        return None
    if maps[1] != affine_map(6, [4, 5]).data or maps[2] != affine_map(6, [0, 1, 2, 3]).data:
        return None
    base, rows = coefficients(maps[0], 6)
    if any(base) or rows[0] != [1, 0, 0, 0, 0, 0] or rows[1] != [0, 1, 0, 0, 0, 0]:
        return None
    (_, _, sh, _, dh, zero_h), (_, _, zero_w, sw, zero_h2, dw) = rows[2], rows[3]
    if (zero_h, zero_w, zero_h2) != (0, 0, 0) or rows[2][3] or rows[3][2] or min(sh, sw, dh, dw) <= 0:
        return None
    kh, kw = shape_of(op.inputs[1])
    return sh, sw, kh, kw, dh, dw


def combiner(op: GenericOp) -> tuple[str, object] | None:
    """The body must be `yield combine(in, acc)`."""
    block = op.body.block
    body_ops = list(block.ops)
    if len(body_ops) != 2 or not isinstance(body_ops[1], YieldOp):
        return None
    combine = body_ops[0]
    kind = COMBINERS.get(type(combine))
    if kind is None or set(combine.operands) != {block.args[0], block.args[2]} or body_ops[1].operands[0] is not combine.results[0]:
        return None
    return kind


def fills_with(value, identity: float) -> bool:
    owner = value.owner
    if not isinstance(owner, FillOp):
        return False
    scalar = owner.inputs[0].owner
    return isinstance(scalar, arith.ConstantOp) and isinstance(scalar.value, FloatAttr) and scalar.value.value.data == identity


@dataclass
class UnrollPooling(RewritePattern):
    max_window: int = 16

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        window = pooling_window(op)
        kind = combiner(op) if window is not None else None
        if window is None or kind is None:
            return
        sh, sw, kh, kw, dh, dw = window
        if kh * kw > self.max_window:
            return
        name, combine = kind
        x, init = op.inputs[0], op.outputs[0]
        b = LinalgBuilder(rewriter, op)
        if isinstance(origin := op.attributes.get(ORIGIN), StringAttr):
            b.origin = origin
        out_shape = shape_of(init)
        cells = [(i, j) for i in range(kh) for j in range(kw)]
        # One strided slice per window cell, so every map of the generic is the identity (a map
        # `oh + j` with unit stride would be a plain dim, from which the verifier infers the loop range).
        reads = [
            b.add(ExtractSliceOp.from_static_parameters(x, [0, 0, i * dh, j * dw], list(out_shape), [1, 1, sh, sw])).result
            for i, j in cells
        ]
        identity = affine_map(4, range(4))
        from_identity = fills_with(init, REDUCE_COMBINERS[name][1])

        def body(*args):
            *reads, out = args
            acc = reads[0]
            for value in reads[1:]:
                acc = combine(acc, value)
            return acc if from_identity else combine(acc, out)

        result = b.generic(reads, init, [identity] * (len(reads) + 1), [PARALLEL] * 4, body)
        rewriter.replace(op, [], [result])


@dataclass(frozen=True)
class UnrollPoolingPass(ModulePass):
    """Max and sum pooling generics with at most `max_window` cells, unrolled into all-parallel generics."""

    name = "cortex-unroll-pooling"
    max_window: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        whole_number("max_window", self.max_window, 0, 4096)  # each cell becomes an op: thousands is already absurd
        PatternRewriteWalker(GreedyRewritePatternApplier([UnrollPooling(self.max_window)]), apply_recursively=False).rewrite_module(op)


__all__ = ["UnrollPooling", "UnrollPoolingPass", "pooling_window"]
