"""`cortex-fuse-batch-norm`: fold inference batch norm into the linear/conv before it.

Batch norm at inference is a per-channel affine map y·s + t with
s = scale / √(var + ε) and t = bias − mean·s. When it reads the result of a
`cortex.linear` or `cortex.conv2d` whose weight, bias and the batch norm's
parameters are all `cortex.constant`s, the map folds into that op:

    W' = W · s   (along the output-channel axis: W's axis 0, N×K or O×I×kh×kw)
    b' = (b − mean) · s + bias      (b = 0 when the op has no bias)

The new constants are computed with NumPy at compile time (in float64, stored
as float32), so one op replaces two at run time. The producer must have no
other use: otherwise it would stay alive for that use and the pass would add
work instead of removing it. `cortex.linear` folds only for rank-2 results,
where batch norm's channel axis 1 is the linear's output-feature axis.

Written as canonicalisation is: `FoldBatchNorm` is an xDSL `RewritePattern`
rooted at `cortex.batch_norm`, applied by xDSL's walker; it uses the
declarative matcher (`cortex.rewriting.pattern.match`) to recognise the
producer tree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeGuard

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.base import tensor
from cortex.dialects.tensor_ops import BatchNormOp, ConstantOp, Conv2dOp, LinearOp
from cortex.rewriting.pattern import Any, Const, Match, Op, Optional, Pattern, erase_dead_producers, match
from cortex.semantics.values import dense_of


def batch_norm_of(producer: type[LinearOp] | type[Conv2dOp]) -> Pattern:
    """batch_norm(producer(x, W, b?), scale, bias, mean, var), every parameter constant."""
    inner = Op(producer, Any().bind("x"), Const().bind("weight"), Optional(Const().bind("bias")), one_use=True)
    params = (Const().bind(name) for name in ("bn_scale", "bn_bias", "bn_mean", "bn_var"))
    return Op(BatchNormOp, inner.bind("producer"), *params).bind("bn")


LINEAR_BN = batch_norm_of(LinearOp)
CONV_BN = batch_norm_of(Conv2dOp)


def is_f32_tensor(t: Attribute) -> TypeGuard[TensorType[Float32Type]]:
    return isinstance(t, TensorType) and isinstance(t.element_type, Float32Type)


def fold_into_producer(m: Match, rewriter: PatternRewriter) -> bool:
    """Replace the batch norm by the producer with the folded weight and bias; False (nothing changed) when
    the types or the parameters' shapes do not allow it."""
    bn, producer = m.op("bn"), m.op("producer")
    assert isinstance(bn, BatchNormOp)
    result_type = bn.result.type
    weight = np.asarray(m.constant("weight"), dtype=np.float64)
    if not (is_f32_tensor(result_type) and is_f32_tensor(m["weight"].type)) or weight.ndim < 2:
        return False
    if isinstance(producer, LinearOp) and len(result_type.get_shape()) != 2:
        return False  # batch norm's channel axis 1 is not the linear's feature axis
    channels = weight.shape[0]
    try:
        scale, bn_bias, mean, var = (
            np.broadcast_to(np.asarray(m.constant(n), dtype=np.float64), (channels,))
            for n in ("bn_scale", "bn_bias", "bn_mean", "bn_var")
        )
        bias = np.broadcast_to(np.asarray(m.constant("bias"), np.float64), (channels,)) if "bias" in m else 0.0
    except ValueError:
        return False  # parameters that do not describe `channels` channels
    factor = scale / np.sqrt(var + bn.epsilon.value.data)
    new_weight = weight * factor.reshape((channels,) + (1,) * (weight.ndim - 1))
    new_bias = (bias - mean) * factor + bn_bias

    weight_type = m["weight"].type
    assert is_f32_tensor(weight_type)  # checked above
    weight_op = ConstantOp(dense_of(new_weight.astype(np.float32), weight_type))
    bias_op = ConstantOp(dense_of(new_bias.astype(np.float32), tensor((channels,))))
    assert isinstance(producer, LinearOp | Conv2dOp), "the pattern matched one of these"
    fused = type(producer).build(
        operands=[m["x"], weight_op.result, bias_op.result],
        result_types=[result_type],
        properties=dict(producer.properties),
        attributes=dict(producer.attributes),
    )
    weight_op.result.name_hint, bias_op.result.name_hint = "fused_weight", "fused_bias"
    for new in (weight_op, bias_op, fused):
        new.location = bn.location
    old_operands = list(bn.operands)
    rewriter.replace(bn, [weight_op, bias_op, fused])
    erase_dead_producers(rewriter, old_operands)  # the producer, and the old constants nothing else reads
    return True


@dataclass(frozen=True)
class FoldBatchNorm(RewritePattern):
    """batch_norm(producer(x, W, b?)) → producer(x, W', b'), for the producer tree `pattern` describes."""

    pattern: Pattern

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BatchNormOp, rewriter: PatternRewriter, /) -> None:
        if (m := match(self.pattern, op.result)) is not None:
            fold_into_producer(m, rewriter)


FUSE_BATCH_NORM: tuple[RewritePattern, ...] = (FoldBatchNorm(LINEAR_BN), FoldBatchNorm(CONV_BN))


@dataclass(frozen=True)
class FuseBatchNormPass(ModulePass):
    """Fold batch_norm into a preceding constant-weight linear or conv2d."""

    name = "cortex-fuse-batch-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # dce off: dead code the pass did not make is dce's business
        PatternRewriteWalker(GreedyRewritePatternApplier(list(FUSE_BATCH_NORM), dce_enabled=False)).rewrite_module(op)
