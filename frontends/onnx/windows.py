"""Windowed operators: convolution and pooling (1-D as a unit-height 2-D)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import DYNAMIC, NodeContext, shape
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts
from cortex.frontends.onnx_checks import MAX_ELEMENTS


def same_pads(size: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int], upper: bool) -> list[int]:
    """ONNX SAME_UPPER / SAME_LOWER: output = ceil(size / stride), the odd cell at the end (upper) or start."""
    begins, ends = [], []
    for n, k, s, d in zip(size, kernel, strides, dilations):
        total = (math.ceil(n / s) - 1) * s + (k - 1) * d + 1 - n  # negative (a crop) when stride > kernel
        small, big = total // 2, total - total // 2
        begins.append(small if upper else big)
        ends.append(big if upper else small)
    return begins + ends


def ceil_extra(n: int, k: int, s: int, lo: int, hi: int) -> int:
    """Padding to add at the end so that floor division gives ONNX's ceil_mode output size.

    ONNX (as PyTorch) drops a last window that would start in the end padding.
    """
    span = n + lo + hi - k
    out = -(-span // s) + 1
    if (out - 1) * s >= n + lo:
        out -= 1
    return max(0, (out - 1) * s + k - (n + lo + hi))


def window_cells(n: int, k: int, s: int, lo: int, out: int, limit_lo: int, limit_hi: int, d: int = 1) -> np.ndarray:
    """Per output position, how many of the k window cells (d apart) lie in [limit_lo, limit_hi) (input coordinates)."""
    cells = (np.arange(out) * s - lo)[:, None] + np.arange(k)[None, :] * d
    return ((cells >= limit_lo) & (cells < limit_hi)).sum(axis=1)

class Window:
    """kernel/strides/dilations/pads of a 1-D or 2-D windowed node, resolved against the input size."""

    def __init__(self, ctx: NodeContext, spatial: Sequence[int], kernel: Sequence[int]):
        rank = len(spatial)
        self.kernel = list(kernel)
        self.strides = ctx.ints("strides", [1] * rank)
        self.dilations = ctx.ints("dilations", [1] * rank)
        auto_pad = ctx.get("auto_pad", "NOTSET")
        pads = ctx.ints("pads", [0] * (2 * rank))
        for attr, values, size in (("strides", self.strides, rank), ("dilations", self.dilations, rank), ("pads", pads, 2 * rank)):
            if len(values) != size:
                raise ctx.error(f"expected {size} values for a {rank}-D input", attr)
        for attr, values in (("strides", self.strides), ("dilations", self.dilations), ("kernel_shape", self.kernel)):
            if any(v < 1 for v in values):
                raise ctx.error("must be positive", attr)
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pads = same_pads(spatial, self.kernel, self.strides, self.dilations, auto_pad == "SAME_UPPER")
        elif auto_pad == "VALID":
            pads = [0] * (2 * rank)
        elif auto_pad != "NOTSET":
            raise ctx.error("must be NOTSET, SAME_UPPER, SAME_LOWER or VALID", "auto_pad")
        if any(p < 0 for p in pads):
            raise ctx.error(
                f"gives negative padding {pads} (a stride larger than the window): a crop, which cortex pads "
                "cannot express (ONNX Runtime rejects it too)",
                "auto_pad" if auto_pad != "NOTSET" else "pads",
            )
        self.begin, self.end = pads[:rank], pads[rank:]
        padded = [n + b + e for n, b, e in zip(spatial, self.begin, self.end)]
        if math.prod(padded) > MAX_ELEMENTS:
            raise ctx.error(f"pads the input to {padded}: more than {MAX_ELEMENTS} elements", "pads")

    def as_2d(self, rank: int) -> tuple[list[int], list[int], list[int], list[int]]:
        """kernel, strides, dilations, pads (top, left, bottom, right) of the 2-D op; 1-D gets a unit height."""
        if rank == 1:
            return [1, *self.kernel], [1, *self.strides], [1, *self.dilations], [0, self.begin[0], 0, self.end[0]]
        return self.kernel, self.strides, self.dilations, [*self.begin, *self.end]


def spatial_input(im: Importer, ctx: NodeContext, name: str) -> tuple[SSAValue, int]:
    """The input lifted to NCHW (N×C×L → N×C×1×L) and its number of spatial dimensions."""
    x = im.value(name, ctx, "input X")
    rank = len(shape(x)) - 2
    if rank not in (1, 2):
        raise ctx.error(f"only 1-D and 2-D inputs (N×C×L, N×C×H×W) are supported, got shape {shape(x)}")
    if rank == 1:
        n, c, length = shape(x)
        x = im.reshape(ctx, x, (n, c, 1, length))
    return x, rank


def restore_rank(im: Importer, ctx: NodeContext, y: SSAValue, rank: int) -> SSAValue:
    if rank == 1:
        n, c, _, length = shape(y)
        return im.reshape(ctx, y, (n, c, length))
    return y


@converts("Conv", maps_to="`cortex.conv2d`",
          limits="1-D and 2-D; pads, auto_pad, strides, dilations, group (grouped and depthwise)")
def conv(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x, rank = spatial_input(im, ctx, inputs[0])
    weight = im.value(inputs[1], ctx, "input W")
    ws = shape(weight)
    if len(ws) != rank + 2:
        raise ctx.error(f"weight shape {ws} does not match a {rank}-D convolution")
    kernel = ctx.ints("kernel_shape", list(ws[2:]))
    if list(kernel) != list(ws[2:]):
        raise ctx.error(f"does not match the weight's spatial shape {list(ws[2:])}", "kernel_shape")
    group = int(ctx.get("group", 1))
    channels = shape(x)[1]
    if group < 1 or ws[0] % group or (channels != DYNAMIC and channels != ws[1] * group):
        raise ctx.error(f"must divide the {ws[0]} filters and give the input's {channels} channels as {ws[1]} per group", "group")
    orig_spatial = shape(im.value(inputs[0], ctx, "input X"))[2:]
    window = Window(ctx, orig_spatial, kernel)
    _, strides, dilations, pads = window.as_2d(rank)
    if rank == 1:
        weight = im.reshape(ctx, weight, (ws[0], ws[1], 1, ws[2]))
    bias = im.optional(inputs, 2, ctx, "input B")
    y = im.build(ctx, ops.Conv2dOp, x, weight, bias, strides=strides, pads=pads, dilations=dilations, group=group)
    return [restore_rank(im, ctx, y, rank)]


@converts("MaxPool", "AveragePool", maps_to="`cortex.max_pool`, `cortex.avg_pool`",
          limits="1-D and 2-D; ceil_mode as end padding, count_include_pad as a constant rescale; no Indices output")
def pool(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """Pooling; ceil_mode becomes extra end padding (never counted, never the max), and
    count_include_pad = 1 a constant rescale of the dialect's count-excluding average."""
    is_max = ctx.node.op_type == "MaxPool"
    if len([o for o in ctx.node.output if o]) > 1:
        raise ctx.error("the Indices output (argmax) is not supported")
    original = im.value(inputs[0], ctx, "input X")
    x, rank = spatial_input(im, ctx, inputs[0])
    spatial = shape(original)[2:]
    kernel = ctx.ints("kernel_shape")
    if kernel is None or len(kernel) != rank:
        raise ctx.error(f"must give {rank} sizes", "kernel_shape")
    window = Window(ctx, spatial, kernel)
    if any(p >= k for p, k in zip([*window.begin, *window.end], [*kernel, *kernel])):
        # a window wholly in the padding: -inf for a max, 0/0 for an average (ONNX Runtime rejects it)
        raise ctx.error(f"must be smaller than the kernel {list(kernel)}", "pads")
    if is_max:
        ctx.require("storage_order", (0,), 0, "only row-major storage order is supported")
    ceil_mode = ctx.require("ceil_mode", (0, 1), 0, "must be 0 or 1")
    include_pad = 0 if is_max else ctx.require("count_include_pad", (0, 1), 0, "must be 0 or 1")
    begin, end = list(window.begin), list(window.end)
    stated_end = (0, end[0]) if rank == 1 else (end[0], end[1])  # the padding count_include_pad counts
    if ceil_mode:
        spans = [(k - 1) * d + 1 for k, d in zip(kernel, window.dilations)]
        end = [e + ceil_extra(n, k, s, b, e) for n, k, s, b, e in zip(spatial, spans, window.strides, begin, end)]
    window.end = end
    kernel2, strides2, dilations2, pads2 = window.as_2d(rank)
    op = ops.MaxPoolOp if is_max else ops.AvgPoolOp
    y = im.build(ctx, op, x, kernel2, strides2, pads2, dilations2)
    if include_pad:
        out = shape(y)[2:]
        size2 = [1, *spatial] if rank == 1 else list(spatial)
        begin2 = (pads2[0], pads2[1])
        real, counted = [], []
        for axis in range(2):
            n, k, s, lo, d = size2[axis], kernel2[axis], strides2[axis], begin2[axis], dilations2[axis]
            real.append(window_cells(n, k, s, lo, out[axis], 0, n, d))
            counted.append(window_cells(n, k, s, lo, out[axis], -lo, n + stated_end[axis], d))
        scale = np.outer(real[0], real[1]) / np.outer(counted[0], counted[1])
        if not np.all(scale == 1.0):
            y = im.build(ctx, ops.MulOp, y, im.constant(scale.astype(np.float32)))
    return [restore_rank(im, ctx, y, rank)]
