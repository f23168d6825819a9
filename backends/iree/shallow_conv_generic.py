"""`cortex-shallow-conv-generic`: a convolution over few input channels as the equivalent `linalg.generic`.

Where the IREE backend compiles convolutions as im2col + matmul
(`cortex.backends.iree.compiler.cpu_tuning_flags`), IREE's im2col pass
rewrites every named convolution, and a convolution over few input
channels makes a poor matmul: its reduction (3·3·C) is shorter than the
matmul's tiles. Measured (one thread, AVX2): below 8 input channels IREE's
direct code ran the convolution 2 to 5 times faster than im2col; from 8
input channels up im2col was as fast or faster (the figures: benchmarks/README.md, "Figures behind the compiler's choices"). IREE's
im2col pass takes named convolutions only, so such a convolution is
handed over as the `linalg.generic` it is (the named op's own indexing
maps, iterators and multiply-accumulate body), which IREE compiles with its
direct convolution code.

Same values up to the order IREE's vectorised code sums in (a few ulps;
`tests/test_iree_flags.py` checks it against ONNX Runtime).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, AnyFloat, ModuleOp, TensorType
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import Conv2DNhwc_HwcfOp, GenericOp, YieldOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

SHALLOW_CHANNELS = 8
"""Convolutions over fewer input channels than this stay direct (see the module)."""

CONV_ITERATORS = [IteratorType.PARALLEL] * 4 + [IteratorType.REDUCTION] * 3  # n, oh, ow, f, kh, kw, c


def is_shallow(op: Conv2DNhwc_HwcfOp, below: int) -> bool:
    """A float NHWC convolution over fewer than `below` input channels, with static shapes."""
    x_type, w_type = op.inputs[0].type, op.inputs[1].type
    if not isinstance(x_type, TensorType) or not isinstance(w_type, TensorType) or len(op.outputs) != 1:
        return False
    if not isinstance(x_type.get_element_type(), AnyFloat) or x_type.get_element_type() != w_type.get_element_type():
        return False
    channels = x_type.get_shape()[-1]
    return 0 < channels < below


@dataclass
class ShallowConvAsGeneric(RewritePattern):
    below: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: Conv2DNhwc_HwcfOp, rewriter: PatternRewriter) -> None:
        if not is_shallow(op, self.below):
            return
        x_type = op.inputs[0].type
        assert isinstance(x_type, TensorType)
        element = x_type.get_element_type()
        block = Block(arg_types=[element, element, element])
        x, w, acc = block.args
        product = arith.MulfOp(x, w)
        total = arith.AddfOp(acc, product.result)
        block.add_ops([product, total, YieldOp(total.result)])
        generic = GenericOp(
            inputs=list(op.inputs),
            outputs=list(op.outputs),
            body=Region(block),
            indexing_maps=[AffineMapAttr(m) for m in op.get_default_indexing_maps()],
            iterator_types=[IteratorTypeAttr(t) for t in CONV_ITERATORS],
            result_types=[r.type for r in op.res],
        )
        for name, value in op.attributes.items():
            if name not in ("strides", "dilations", "indexing_maps"):
                generic.attributes[name] = value
        rewriter.replace(op, generic)


@dataclass(frozen=True)
class ShallowConvGenericPass(ModulePass):
    """Every float NHWC convolution over fewer than `below` input channels as its `linalg.generic`."""

    name = "cortex-shallow-conv-generic"

    below: int = SHALLOW_CHANNELS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([ShallowConvAsGeneric(self.below)]), apply_recursively=False
        ).rewrite_module(op)


__all__ = ["SHALLOW_CHANNELS", "ShallowConvGenericPass", "is_shallow"]
