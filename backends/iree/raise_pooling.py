"""`cortex-raise-pooling`: a windowed max/sum generic becomes `linalg.pooling_nhwc_max` / `pooling_nhwc_sum`.

Cortex lowers NHWC pooling (`lowering/layout.py`, `pooling_nhwc`) to a
`linalg.generic` over (n, oh, ow, c, kh, kw) reading the padded input at
(n, oh·sh + kh·dh, ow·sw + kw·dw, c) with a `tensor.empty` window operand
that only carries the window's shape: the form the NumPy emitter turns
into strided slices. It is exactly upstream linalg's named NHWC pooling,
but IREE (3.13) recognises the named op only: the generic goes down its
generic tiling path (one output pixel, 8 channels per step), and the large
CNN's three 2×2 max pools ran about four times slower than as
`linalg.pooling_nhwc_max` (`iree-benchmark-module --print_device_statistics`
on the handed-over module; benchmarks/README.md, "Figures behind the compiler's choices").
So the IREE backend runs this pass before handing a module over
(`backends/iree/compiler.legalized`); the NumPy backend keeps the generic.

The pattern (checked, not assumed): two inputs and one output of rank 4;
four parallel loops then two reductions; the window operand is a fresh
2-D `tensor.empty` whose values the body never reads; the body is one
`arith.maximumf` (→ max) or `arith.addf` (→ sum) of the input element and
the accumulator, without fast-math flags, on floats; and the indexing maps
are, as affine functions, the named op's maps for the strides and
dilations read off the input map. Anything else — an NCHW pool, an integer
or fast-math body, a window operand with values — is left alone. Same
values element for element (IREE vs NumPy backend: tests/test_iree_backend.py).

xDSL 0.74 defines only the NCHW max pooling op, so the two NHWC ops are
defined here (IRDL, on xDSL's `PoolingOperation`), with upstream's names,
maps and bodies; they are printed for IREE and never run by the NumPy backend.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.dialects.linalg.abstract_ops import PoolingOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import BlockArgument, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.irdl import irdl_op_definition
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.lowering.builders import i64_vector


class _PoolingNhwc(PoolingOperation):
    """(n, oh, ow, c, kh, kw): input (n, oh·sh + kh·dh, ow·sw + kw·dw, c), window (kh, kw), output (n, oh, ow, c)."""

    COMBINER: ClassVar[type[arith.FloatingPointLikeBinaryOperation]]

    @classmethod
    def get_hidden_region(cls, inputs: Sequence[SSAValue], outputs: Sequence[SSAValue]) -> Region:
        arg_types = cls.body_arg_types((*inputs, *outputs))

        @Builder.implicit_region(arg_types)
        def hidden_region(args: tuple[BlockArgument, ...]) -> None:
            YieldOp(cls.COMBINER(args[2], args[0]))  # upstream: O = combine(O, I)

        return hidden_region

    def get_default_indexing_maps(self) -> Sequence[AffineMap]:
        return nhwc_pooling_maps(self.strides.get_values(), self.dilations.get_values())


@irdl_op_definition
class PoolingNhwcMaxOp(_PoolingNhwc):
    """Upstream `linalg.pooling_nhwc_max` (float inputs: `arith.maximumf`)."""

    name = "linalg.pooling_nhwc_max"
    COMBINER: ClassVar[type[arith.FloatingPointLikeBinaryOperation]] = arith.MaximumfOp


@irdl_op_definition
class PoolingNhwcSumOp(_PoolingNhwc):
    """Upstream `linalg.pooling_nhwc_sum` (float inputs: `arith.addf`)."""

    name = "linalg.pooling_nhwc_sum"
    COMBINER: ClassVar[type[arith.FloatingPointLikeBinaryOperation]] = arith.AddfOp


NAMED = {arith.MaximumfOp: PoolingNhwcMaxOp, arith.AddfOp: PoolingNhwcSumOp}


def nhwc_pooling_maps(strides: Sequence[int], dilations: Sequence[int]) -> tuple[AffineMap, AffineMap, AffineMap]:
    n, oh, ow, c, kh, kw = (AffineDimExpr(i) for i in range(6))
    (sh, sw), (dh, dw) = strides, dilations
    return (
        AffineMap(6, 0, (n, oh * sh + kh * dh, ow * sw + kw * dw, c)),
        AffineMap(6, 0, (kh, kw)),
        AffineMap(6, 0, (n, oh, ow, c)),
    )


def coefficients(amap: AffineMap) -> tuple[tuple[int, ...], ...]:
    """An affine map as numbers: its value at 0 and at each unit vector (equal numbers, equal functions)."""
    points = [[0] * amap.num_dims] + [[int(i == d) for i in range(amap.num_dims)] for d in range(amap.num_dims)]
    return tuple(amap.eval(p, []) for p in points)


def pooling_of(op: GenericOp) -> tuple[type[_PoolingNhwc], list[int], list[int]] | None:
    """(named op class, strides, dilations) when `op` is an NHWC float max/sum pooling, else None."""
    if len(op.inputs) != 2 or len(op.outputs) != 1 or len(op.res) != 1:
        return None
    x, window = op.inputs
    x_type, window_type, out_type = x.type, window.type, op.outputs[0].type
    if not all(isinstance(t, TensorType) for t in (x_type, window_type, out_type)):
        return None
    assert isinstance(x_type, TensorType) and isinstance(window_type, TensorType) and isinstance(out_type, TensorType)
    if x_type.get_num_dims() != 4 or out_type.get_num_dims() != 4 or window_type.get_num_dims() != 2:
        return None
    if not isinstance(x_type.get_element_type(), AnyFloat) or not isinstance(window.owner, tensor.EmptyOp):
        return None
    kinds = [t.data for t in op.iterator_types.data]
    if kinds != [IteratorType.PARALLEL] * 4 + [IteratorType.REDUCTION] * 2:
        return None
    block = op.body.block
    ops = list(block.ops)
    if len(block.args) != 3 or len(ops) != 2 or block.args[1].uses:
        return None
    combine, yield_ = ops
    named = NAMED.get(type(combine))  # type: ignore[arg-type]
    if named is None or not isinstance(yield_, YieldOp) or list(yield_.operands) != [combine.results[0]]:
        return None
    assert isinstance(combine, arith.FloatingPointLikeBinaryOperation)
    if set(combine.operands) != {block.args[0], block.args[2]} or combine.lhs is combine.rhs:
        return None
    if combine.fastmath is not None and combine.fastmath.data:
        return None
    maps = [m.data for m in op.indexing_maps.data]
    if len(maps) != 3:
        return None
    input_map = coefficients(maps[0])
    # rows: value at 0, then at d0..d5; input result 1 = oh·sh + kh·dh, result 2 = ow·sw + kw·dw
    strides = [input_map[2][1], input_map[3][2]]
    dilations = [input_map[5][1], input_map[6][2]]
    if min(*strides, *dilations) < 1:
        return None
    if [coefficients(m) for m in maps] != [coefficients(m) for m in nhwc_pooling_maps(strides, dilations)]:
        return None
    return named, strides, dilations


@dataclass
class RaiseNhwcPooling(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        found = pooling_of(op)
        if found is None:
            return
        named, strides, dilations = found
        pool = named(list(op.inputs), list(op.outputs), [r.type for r in op.res], attributes=dict(op.attributes),
                     strides=i64_vector(strides), dilations=i64_vector(dilations))
        rewriter.replace(op, pool)


@dataclass(frozen=True)
class RaisePoolingPass(ModulePass):
    """Every NHWC float max/sum pooling generic as upstream's named `linalg.pooling_nhwc_max` / `_sum`."""

    name = "cortex-raise-pooling"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([RaiseNhwcPooling()]), apply_recursively=False).rewrite_module(op)


__all__ = ["PoolingNhwcMaxOp", "PoolingNhwcSumOp", "RaisePoolingPass", "nhwc_pooling_maps", "pooling_of"]
