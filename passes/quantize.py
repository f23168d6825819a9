"""`cortex-quantize{precision=int8 schema=symmetric granularity=tensor}`: int8 compute from calibrated ranges.

Glow's profile-guided quantisation, step two (run `cortex-calibrate` first):

1. Each conv2d / linear (constant weights) and 2-D matmul whose input and
   output ranges were calibrated becomes its `cortex.q*` op between a
   `cortex.quantize` of its input and a `cortex.dequantize` of its result.
   Weights are quantised now, at compile time (symmetric, per tensor or per
   output channel), and a bias becomes i32 at the scale x_scale·w_scale.
   The int32 accumulator must hold Σ x·w plus the bias without wrapping: the
   products' bound K·|x|max·127 is checked (else a CortexError names the op),
   and the weight scale is raised, where needed, until the bias fits the rest
   (`bias_floor`). A raised scale only costs weight bits the bias outweighs
   (the error it adds is below K·255·|b|/2³¹), so the numbers stay right,
   whereas keeping the bias in float would change the op, and refusing would
   give no numbers at all. It also gives zero weights (a zero-range tensor) a
   scale fine enough for the bias, which the default 1.0 rounded away.
   An op whose only user is a relu takes the relu's range for its output
   (the relu is folded into the range: no code is spent on negatives).
2. relu, max_pool and reshape of a dequantised value run on the i8 value
   instead (same scale), so the region grows through them; an add of two
   dequantised values becomes `cortex.qadd` (where it pays: both sides are
   already i8, e.g. a residual connection).
3. An input that is already a dequantised i8 value is used as it is;
   canonicalisation then cancels quantize(dequantize(q)) pairs or turns them
   into one `cortex.requantize`: conversions stay at the edges of regions.

Activation parameters: `symmetric` — zero point 0, scale max|x|/127;
`asymmetric` — the range [min(lo,0), max(hi,0)] over 256 levels, with a zero
point. Weights are always symmetric (zero point 0), as in TFLite and ONNX
QDQ, which keeps the int32 accumulation free of weight-zero-point terms.
`clip=percentile` takes the central 99.99 % of the calibration histogram
instead of min/max. Each quantised op keeps the label of its float original
in `cortex.source`, so the report can pair them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects import tensor_ops as ops
from cortex.dialects.base import shape_of, tensor
from cortex.dialects.folding import constant_value
from cortex.dialects.quant import (
    Q_MAX,
    Q_MIN,
    DequantizeOp,
    QAddOp,
    QConv2dOp,
    QLinearOp,
    QMatmulOp,
    QMaxPoolOp,
    QReluOp,
    QuantComputeOp,
    QuantizeOp,
    i8,
)
from cortex.dialects.quant_canonicalization import QUANT_CANONICAL
from cortex.errors import CortexError
from cortex.passes.calibrate import RANGE_ATTR, Range, range_of

SOURCE_ATTR = "cortex.source"
RANGE_FROM_ATTR = "cortex.range_from"
SCHEMAS = ("symmetric", "asymmetric")
GRANULARITIES = ("tensor", "channel")
CLIPS = ("minmax", "percentile")
PERCENTILE = 99.99
Params = tuple[float, int]


def op_labels(module: Operation) -> dict[Operation, str]:
    """A stable name for each cortex op: its result's SSA name, else `<op>#<k>` in walk order."""
    labels: dict[Operation, str] = {}
    counts: dict[str, int] = {}
    for op in module.walk():
        if not op.name.startswith("cortex.") or op.name == "cortex.constant":
            continue
        short = op.name.removeprefix("cortex.")
        k = counts.get(short, 0)
        counts[short] = k + 1
        hint = op.results[0].name_hint if op.results else None
        labels[op] = hint or f"{short}#{k}"
    return labels


@dataclass(frozen=True)
class Scheme:
    """How ranges become (scale, zero_point) pairs, and weights become i8."""

    schema: str = "symmetric"
    granularity: str = "tensor"
    clip: str = "minmax"

    def bounds(self, r: Range) -> tuple[float, float]:
        return r.percentile(PERCENTILE) if self.clip == "percentile" else (r.min, r.max)

    def activation(self, r: Range) -> Params:
        lo, hi = self.bounds(r)
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        if self.schema == "symmetric":
            peak = max(-lo, hi)
            return (peak / Q_MAX if peak > 0 else 1.0), 0
        if hi - lo <= 0:
            return 1.0, 0
        scale = (hi - lo) / (Q_MAX - Q_MIN)
        zero_point = int(np.clip(round(Q_MIN - lo / scale), Q_MIN, Q_MAX))
        return scale, zero_point

    def weights(self, w: np.ndarray, channel_axis: int, minimum: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(i8 weights, f32 scales): symmetric over [−127, 127], per tensor or along `channel_axis`;
        each scale at least `minimum` (per channel, f64) where given (`bias_floor`)."""
        w = np.asarray(w, np.float64)
        if self.granularity == "channel":
            axes = tuple(a for a in range(w.ndim) if a != channel_axis)
            peak = np.abs(w).max(axis=axes)
        else:
            peak = np.array([np.abs(w).max()])
        wanted = peak / Q_MAX
        if minimum is not None:
            floor = np.asarray(minimum, np.float64)
            wanted = np.maximum(wanted, floor if self.granularity == "channel" else floor.max(initial=0.0))
        scales = np.where(wanted > 0, wanted, 1.0).astype(np.float32)
        scales = np.where(scales.astype(np.float64) < wanted, np.nextafter(scales, np.float32(np.inf)), scales)
        shape = [1] * w.ndim
        if len(scales) > 1:
            shape[channel_axis] = -1
        q = np.clip(np.rint(w / scales.astype(np.float64).reshape(shape)), -Q_MAX, Q_MAX).astype(np.int8)
        return q, scales


def constant(rewriter: PatternRewriter, array: np.ndarray, element) -> SSAValue:
    from cortex.semantics.values import dense_of

    op = ops.ConstantOp(dense_of(array, tensor(array.shape, element)))
    rewriter.insert(op)
    return op.result


def quantized_input(rewriter: PatternRewriter, scheme: Scheme, x: SSAValue) -> tuple[SSAValue, Params] | None:
    """`x` as an i8 value with its parameters: a dequantised value's source, or a new quantize."""
    if isinstance(x.owner, DequantizeOp):
        return x.owner.x, x.owner.params
    r = range_of(x)
    if r is None:
        return None
    params = scheme.activation(r)
    q = QuantizeOp(x, *params)
    rewriter.insert(q)
    return q.result, params


def relu_user(op: Operation) -> Operation | None:
    """The op's only user, when that is a relu with a calibrated range."""
    uses = list(op.results[0].uses)
    if len(uses) == 1 and isinstance(uses[0].operation, ops.ReluOp) and RANGE_ATTR in uses[0].operation.attributes:
        return uses[0].operation
    return None


def output_range(op: Operation) -> Range | None:
    """The op's own range, or its only user's when that user is a relu (the relu folds into the range)."""
    relu = relu_user(op)
    if relu is not None:
        return Range.from_attr(relu.attributes[RANGE_ATTR])
    return range_of(op.results[0])


def finish(rewriter: PatternRewriter, op: Operation, qop: Operation, params: Params, labels: dict[Operation, str]) -> None:
    """Insert `qop` (labelled as `op`) and replace `op` by its dequantised result."""
    qop.attributes[SOURCE_ATTR] = StringAttr(labels.get(op, op.name))
    relu = relu_user(op) if isinstance(qop, (QuantComputeOp, QAddOp)) else None
    if relu is not None:  # its output range is the relu's: the report compares it with the relu
        qop.attributes[RANGE_FROM_ATTR] = StringAttr(labels.get(relu, relu.name))
    rewriter.insert(qop)
    dq = DequantizeOp(qop.results[0], *params)
    hint = op.results[0].name_hint
    rewriter.replace(op, dq)
    dq.result.name_hint = hint
    if hint:
        qop.results[0].name_hint = f"{hint}_q"


class QuantizeCompute(RewritePattern):
    """conv2d / linear / matmul → dequantize(q-op(quantize(x), i8 weights, i32 bias))."""

    def __init__(self, scheme: Scheme, labels: dict[Operation, str]):
        self.scheme, self.labels = scheme, labels

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (ops.Conv2dOp, ops.LinearOp, ops.MatmulOp)):
            return
        if isinstance(op, ops.Conv2dOp) and op.group.value.data != 1:
            return  # cortex.qconv2d has no groups: a grouped convolution stays float
        out_range = output_range(op)
        if out_range is None:
            return
        if isinstance(op, ops.MatmulOp):
            self.matmul(op, rewriter, out_range)
            return
        weight = constant_value(op.weight)
        bias = constant_value(op.bias) if op.bias is not None else None
        if not isinstance(weight, np.ndarray) or (op.bias is not None and bias is None):
            return
        x = quantized_input(rewriter, self.scheme, op.x)
        if x is None:
            return
        (xq, x_params), out = x, self.scheme.activation(out_range)
        name = f"{self.labels.get(op, op.name)} ({op.name})"
        terms = int(np.prod(np.asarray(weight).shape[1:]))
        headroom = accumulator_headroom(name, terms, x_params[1], Q_MAX)
        minimum = None if bias is None else bias_floor(np.asarray(bias, np.float64), x_params[0], headroom)
        wq, w_scales = self.scheme.weights(weight, 0, minimum)
        check_scales(name, w_scales, x_params[0], out[0])
        w_value = constant(rewriter, wq, i8)
        b_value = None
        if bias is not None:
            bias_q = np.rint(np.asarray(bias, np.float64) / (x_params[0] * w_scales.astype(np.float64)))
            assert np.abs(bias_q).max(initial=0) <= headroom, "bias_floor keeps the bias inside the headroom"
            b_value = constant(rewriter, bias_q.astype(np.int32), i32)
        common = {"x_q": x_params, "w_scales": w_scales.tolist(), "out_q": out}
        qop: QConv2dOp | QLinearOp
        if isinstance(op, ops.Conv2dOp):
            qop = QConv2dOp(
                xq, w_value, b_value, strides=op.strides.get_values(), pads=op.pads.get_values(),
                dilations=op.dilations.get_values(), **common,
            )
        else:
            qop = QLinearOp(xq, w_value, b_value, **common)
        finish(rewriter, op, qop, out, self.labels)

    def matmul(self, op: ops.MatmulOp, rewriter: PatternRewriter, out_range: Range) -> None:
        a_shape, b_shape = shape_of(op.a, "a"), shape_of(op.b, "b")
        if len(a_shape) != 2 or len(b_shape) != 2:
            return
        b_const = constant_value(op.b)
        if b_const is None and quantized_input_available(op.b) is False:
            return
        a = quantized_input(rewriter, self.scheme, op.a)
        if a is None:
            return
        name = f"{self.labels.get(op, op.name)} ({op.name})"
        if isinstance(b_const, np.ndarray):
            accumulator_headroom(name, a_shape[1], a[1][1], Q_MAX)
            bq, w_scales = self.scheme.weights(b_const, 1)
            b_value, w_zero_point = constant(rewriter, bq, i8), 0
        else:
            b = quantized_input(rewriter, self.scheme, op.b)
            if b is None:
                return
            b_value, (b_scale, w_zero_point) = b[0], b[1]
            accumulator_headroom(name, a_shape[1], a[1][1], span(w_zero_point))
            w_scales = np.array([b_scale], np.float32)
        out = self.scheme.activation(out_range)
        check_scales(name, w_scales, a[1][0], out[0])
        qop = QMatmulOp(a[0], b_value, x_q=a[1], w_scales=w_scales.tolist(), out_q=out, w_zero_point=w_zero_point)
        finish(rewriter, op, qop, out, self.labels)


I32_MAX = 2**31 - 1
F32_TINY = float(np.finfo(np.float32).tiny)


def span(zero_point: int) -> int:
    """The largest |q − zero_point| of an i8 value q."""
    return max(Q_MAX - zero_point, zero_point - Q_MIN)


def accumulator_headroom(name: str, terms: int, x_zero_point: int, w_span: int) -> int:
    """What the int32 accumulator has left for a bias once `terms` products are summed; a CortexError
    naming the op when the products alone could overflow it (the sum would wrap)."""
    bound = terms * span(x_zero_point) * w_span
    if bound >= I32_MAX:
        raise CortexError(
            f"cannot quantise {name}: its int32 accumulator could overflow ({terms} products of up to "
            f"{span(x_zero_point)}·{w_span} sum to {bound} > {I32_MAX})"
        )
    return I32_MAX - bound - 1


def bias_floor(bias: np.ndarray, x_scale: float, headroom: int) -> np.ndarray:
    """Per output channel, the least weight scale at which the bias, quantised at x_scale·w_scale, fits `headroom`."""
    return np.abs(bias) / (x_scale * max(headroom - 1, 1))


def check_scales(name: str, w_scales: np.ndarray, x_scale: float, out_scale: float) -> None:
    """Refuse scales float32 cannot carry (an underflowed weight scale or rescale factor makes every output 0)."""
    factors = x_scale * np.asarray(w_scales, np.float64) / out_scale
    for what, values in (("weight scale", np.asarray(w_scales, np.float64)), ("rescale factor", factors)):
        f32 = values.astype(np.float32)
        if not np.all(np.isfinite(f32)) or np.any(np.abs(f32) < F32_TINY):
            bad = float(values[~np.isfinite(f32) | (np.abs(f32) < F32_TINY)][0])
            raise CortexError(f"cannot quantise {name}: its {what} {bad:.3g} is outside float32's normal range")


def quantized_input_available(x: SSAValue) -> bool:
    return isinstance(x.owner, DequantizeOp) or range_of(x) is not None


class QuantizeAdd(RewritePattern):
    """add(dequantize(a), dequantize(b)) → dequantize(qadd(a, b)): where it pays, both sides already i8."""

    def __init__(self, scheme: Scheme, labels: dict[Operation, str]):
        self.scheme, self.labels = scheme, labels

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ops.AddOp):
            return
        lhs, rhs = op.lhs.owner, op.rhs.owner
        if not isinstance(lhs, DequantizeOp) or not isinstance(rhs, DequantizeOp):
            return
        out_range = output_range(op)
        if out_range is None:
            return
        out = self.scheme.activation(out_range)
        finish(rewriter, op, QAddOp(lhs.x, rhs.x, lhs.params, rhs.params, out), out, self.labels)


class QuantizeThrough(RewritePattern):
    """relu / max_pool / reshape of dequantize(q) → dequantize(the same op on q), in q's scale."""

    def __init__(self, labels: dict[Operation, str]):
        self.labels = labels

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, (ops.ReluOp, ops.MaxPoolOp, ops.ReshapeOp)) or not isinstance(op.x.owner, DequantizeOp):
            return
        source = op.x.owner
        params = source.params
        if isinstance(op, ops.ReluOp):
            qop: Operation = QReluOp(source.x, params[1])
        elif isinstance(op, ops.MaxPoolOp):
            qop = QMaxPoolOp(source.x, op.kernel_shape.get_values(), op.strides.get_values(), op.pads.get_values())
        else:
            qop = ops.ReshapeOp(source.x, op.result.type.get_shape())
        finish(rewriter, op, qop, params, self.labels)


def check_finite_weights(module: ModuleOp, labels: dict[Operation, str]) -> None:
    """Refuse a NaN or infinite weight or bias of an op to be quantised, naming it.

    int8 cannot hold it: a NaN became 0 and the report said "max abs err 0"
    while the float graph gave NaN; an inf gave an infinite scale and a raw
    VerifyException.
    """
    for op in module.walk():
        if not isinstance(op, (ops.Conv2dOp, ops.LinearOp, ops.MatmulOp)):
            continue
        for index, operand in enumerate(op.operands):
            found = constant_value(operand)
            if found is None:
                continue
            array = np.asarray(found)
            if array.dtype.kind != "f" or np.all(np.isfinite(array)):
                continue
            what = "NaN" if np.isnan(array).any() else "infinity"
            name = f"%{operand.name_hint}" if operand.name_hint else f"operand #{index}"
            raise CortexError(
                f"cannot quantise {labels.get(op, op.name)} ({op.name}): its constant {name} holds {what}"
            )


def quantize_module(module: ModuleOp, scheme: Scheme) -> None:
    """Rewrite `module` in place (see the module doc)."""
    labels = op_labels(module)
    check_finite_weights(module, labels)
    patterns: list[RewritePattern] = [QuantizeCompute(scheme, labels), QuantizeAdd(scheme, labels), QuantizeThrough(labels)]
    patterns += [p for group in QUANT_CANONICAL.values() for p in group]
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(module)
    for region in module.regions:
        region_dce(region)


@dataclass(frozen=True)
class QuantizePass(ModulePass):
    """Profile-guided int8 quantisation of conv2d/linear/matmul (+ relu, max_pool, reshape) from calibrated ranges."""

    name = "cortex-quantize"
    precision: str = "int8"
    schema: str = "symmetric"
    granularity: str = "tensor"
    clip: str = "minmax"

    def scheme(self) -> Scheme:
        for option, value, known in (
            ("precision", self.precision, ("int8",)),
            ("schema", self.schema, SCHEMAS),
            ("granularity", self.granularity, GRANULARITIES),
            ("clip", self.clip, CLIPS),
        ):
            if value not in known:
                raise CortexError(f"unknown {option} '{value}' (known: {', '.join(known)})")
        return Scheme(self.schema, self.granularity, self.clip)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        scheme = self.scheme()
        if not any(RANGE_ATTR in inner.attributes for inner in op.walk()):
            raise CortexError("the module has no calibrated ranges: run cortex-calibrate first")
        quantize_module(op, scheme)


__all__ = ["RANGE_FROM_ATTR", "SOURCE_ATTR", "QuantizePass", "Scheme", "op_labels", "quantize_module"]
