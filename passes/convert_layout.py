"""`cortex-convert-layout{layout=nhwc}`: channels-last conv/pool/batch_norm chains.

Run the image ops in NHWC and transpose only at the graph's boundaries.
Three rewrites, to a fixpoint:

1. conv2d (grouped and depthwise ones too) / max_pool / avg_pool / batch_norm
   on a 4-D NCHW input becomes to_nchw(op_nhwc(to_nhwc(x))); a constant conv
   weight is transposed to HWIO now, at compile time (else a transpose is
   inserted);
2. an elementwise op of a transposed value runs before the transpose
   instead: u(T(x)) → T(u(x)); b(T(x), c) → T(b(x, c')) when c is a
   constant (transposed now, broadcasting kept), a scalar, or T'(d) with
   the same permutation;
3. a reduction of a transposed value reduces first: r(T(x), axes) →
   r(x, perm[axes]), then the transpose the kept axes still need (none when
   they keep their order, as a global mean over H and W of a channels-last
   map does), on the smaller tensor;
4. transpose pairs cancel (canonicalisation's transpose-of-transpose and
   identity-transpose patterns, also applied by `canonicalize`).

What is left are transposes where the chain meets an NCHW user (a
reshape, a function result) or an NCHW input. The pass reports the
transposes before and after on stderr.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, PatternRewriteWalker, RewritePattern
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects import layout as lay
from cortex.dialects import tensor_ops as ops
from cortex.dialects.base import shape_of, tensor, tensor_of
from cortex.dialects.canonicalization import IdentityTranspose, TransposeOfTranspose
from cortex.dialects.folding import constant_value
from cortex.errors import CortexError
from cortex.semantics.values import dense_of

LAYOUTS = ("nhwc",)


def transposed(rewriter: PatternRewriter, value: SSAValue, perm) -> SSAValue:
    """`value` permuted by `perm`: a new constant when it is one, else a `cortex.transpose`."""
    array = constant_value(value)
    if isinstance(array, np.ndarray):
        data = np.ascontiguousarray(np.transpose(array, perm))
        op: Operation = ops.ConstantOp(dense_of(data, tensor(data.shape, tensor_of(value, "operand").element_type)))
    else:
        op = ops.TransposeOp(value, perm)
    rewriter.insert(op)
    return op.results[0]


def is_4d(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and value.type.get_num_dims() == 4


NHWC_FORM: dict[type[Operation], type[IRDLOperation]] = {
    ops.Conv2dOp: lay.Conv2dNhwcOp,
    ops.MaxPoolOp: lay.MaxPoolNhwcOp,
    ops.AvgPoolOp: lay.AvgPoolNhwcOp,
    ops.BatchNormOp: lay.BatchNormNhwcOp,
}
"""Each NCHW image op and the channels-last op that replaces it."""


def lost_properties(op: IRDLOperation, nhwc: type[IRDLOperation]) -> list[str]:
    """Properties of `op` with a value other than their default that the NHWC op has no place for.

    The NHWC pooling ops have no `dilations`: converting a dilated pool would
    silently drop it (wrong averages; a max pool whose result type no longer
    verifies). Such an op is left alone.
    """
    kept = set(nhwc.get_irdl_definition().properties)
    declared = type(op).get_irdl_definition().properties
    lost = []
    for name, value in op.properties.items():
        default = declared[name].default_value if name in declared else None
        if name not in kept and value != default:
            lost.append(name)
    return lost


class ToNhwc(RewritePattern):
    """The NCHW image ops → their NHWC forms between two transposes."""

    def __init__(self, converted: list[str]):
        self.converted = converted

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (ops.Conv2dOp, ops.MaxPoolOp, ops.AvgPoolOp, ops.BatchNormOp)) or not is_4d(op.x):
            return
        if lost_properties(op, NHWC_FORM[type(op)]):
            return  # the NHWC form cannot say it (pooling dilations): the op stays as it is, NCHW
        x = transposed(rewriter, op.x, lay.TO_NHWC)
        if isinstance(op, ops.Conv2dOp):
            weight = transposed(rewriter, op.weight, lay.OIHW_TO_HWIO)
            new: Operation = lay.Conv2dNhwcOp(
                x, weight, op.bias, op.strides.get_values(), op.pads.get_values(), op.dilations.get_values(),
                op.group.value.data,
            )
        elif isinstance(op, ops.BatchNormOp):
            new = lay.BatchNormNhwcOp(x, op.scale, op.bias, op.mean, op.var, op.epsilon.value.data)
        else:
            cls = lay.MaxPoolNhwcOp if isinstance(op, ops.MaxPoolOp) else lay.AvgPoolNhwcOp
            new = cls(x, op.kernel_shape.get_values(), op.strides.get_values(), op.pads.get_values())
        new.attributes.update(op.attributes)
        rewriter.insert(new)
        back = ops.TransposeOp(new.results[0], lay.TO_NCHW)
        hint = op.results[0].name_hint
        rewriter.replace(op, back)
        if hint:
            new.results[0].name_hint = f"{hint}_nhwc"
            back.result.name_hint = hint
        self.converted.append(op.name.removeprefix("cortex."))


def inverse(perm) -> tuple[int, ...]:
    return tuple(int(i) for i in np.argsort(perm))


def clone_with(op: Operation, operands: list[SSAValue], result_type) -> Operation:
    return type(op).create(
        operands=operands, result_types=[result_type], properties=dict(op.properties), attributes=dict(op.attributes)
    )


class ElementwiseBeforeTranspose(RewritePattern):
    """u(T(x)) → T(u(x)); b(T(x), c) → T(b(x, T⁻¹(c))) (see the module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if type(op) not in ops.ELEMENTWISE_OPS:
            return
        perm = None
        for v in op.operands:
            if isinstance(v.owner, ops.TransposeOp):
                perm = tuple(v.owner.perm.get_values())
                break
        if perm is None:
            return
        rank = len(perm)
        undo = inverse(perm)
        operands: list[SSAValue] = []
        for v in op.operands:
            owner = v.owner
            if isinstance(owner, ops.TransposeOp) and tuple(owner.perm.get_values()) == perm:
                operands.append(owner.x)
                continue
            shape = shape_of(v, "operand")
            if len(shape) == 0:
                operands.append(v)
                continue
            array = constant_value(v)
            if not isinstance(array, np.ndarray) or len(shape) > rank:
                return
            full = np.reshape(array, (1,) * (rank - len(shape)) + tuple(shape))
            data = np.ascontiguousarray(np.transpose(full, undo))
            const = ops.ConstantOp(dense_of(data, tensor(data.shape, tensor_of(v, "operand").element_type)))
            rewriter.insert(const)
            operands.append(const.result)
        result_type = tensor_of(op.results[0], "result")
        inner_shape = tuple(result_type.get_shape()[p] for p in undo)
        inner = clone_with(op, operands, tensor(inner_shape, result_type.element_type))
        rewriter.insert(inner)
        hint = op.results[0].name_hint
        back = ops.TransposeOp(inner.results[0], perm)
        rewriter.replace(op, back)
        if hint:
            inner.results[0].name_hint = f"{hint}_nhwc"
            back.result.name_hint = hint


class ReductionBeforeTranspose(RewritePattern):
    """r(T(x), axes) → [T'](r(x, perm[axes])) (see the module doc)."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ops.ReduceOp) or not isinstance(op.x.owner, ops.TransposeOp):
            return
        perm = tuple(op.x.owner.perm.get_values())
        rank = len(perm)
        axes = sorted({a % rank for a in op.axes.get_values()}) or list(range(rank))
        keep = bool(op.keepdims.value.data)
        inner = type(op)(op.x.owner.x, sorted(perm[a] for a in axes), keep)
        inner.attributes.update(op.attributes)
        rewriter.insert(inner)
        kept = perm if keep else tuple(perm[i] for i in range(rank) if i not in axes)
        order = inverse(inverse(kept))  # the kept axes' ranks: where each sits in the reduced value
        hint = op.results[0].name_hint
        if order == tuple(range(len(order))):
            rewriter.replace(op, [], [inner.results[0]])
        else:
            rewriter.replace(op, ops.TransposeOp(inner.results[0], order))
        if hint:
            inner.results[0].name_hint = hint if order == tuple(range(len(order))) else f"{hint}_nhwc"


def count_transposes(module: Operation) -> int:
    return sum(1 for op in module.walk() if isinstance(op, ops.TransposeOp))


@dataclass
class LayoutReport:
    converted: list[str]
    before: int
    after: int

    def __str__(self) -> str:
        kinds = ", ".join(f"{self.converted.count(k)} {k}" for k in dict.fromkeys(self.converted)) or "nothing"
        return f"[convert-layout] to NHWC: {kinds}; transposes {self.before} -> {self.after}"


def convert_layout(module: ModuleOp, layout: str = "nhwc") -> LayoutReport:
    """Rewrite `module` in place to run its image ops channels-last; returns what changed."""
    if layout not in LAYOUTS:
        raise CortexError(f"unknown layout '{layout}' (known: {', '.join(LAYOUTS)})")
    before = count_transposes(module)
    converted: list[str] = []
    patterns = [
        ToNhwc(converted), ElementwiseBeforeTranspose(), ReductionBeforeTranspose(), TransposeOfTranspose(),
        IdentityTranspose(),
    ]
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(module)
    for region in module.regions:
        region_dce(region)
    return LayoutReport(converted, before, count_transposes(module))


@dataclass(frozen=True)
class ConvertLayoutPass(ModulePass):
    """Channels-last conv/pool/batch_norm (+ elementwise) chains with transposes only at their edges."""

    name = "cortex-convert-layout"
    layout: str = "nhwc"
    report: bool = True  # what moved, on stderr (off when a compile runs it as its backend's legalisation)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        report = convert_layout(op, self.layout)
        if self.report:
            print(report, file=sys.stderr)


__all__ = ["ConvertLayoutPass", "LayoutReport", "convert_layout"]
