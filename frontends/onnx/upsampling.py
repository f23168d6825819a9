"""Resize and ConvTranspose, written with existing cortex ops.

Resize is separable and linear in its input for every mode ONNX defines (nearest, linear, cubic; any
coordinate transformation but tf_crop_and_resize, whose extrapolation is not linear): along each
resized axis it is a constant matrix, computed at import time by ONNX's own reference implementation
applied to the identity, and applied with `cortex.matmul`. (A nearest resize is a 0/1 matrix, exact
for finite inputs; an inf or nan in the input spreads along its row.)

ConvTranspose is a convolution of the input spread out by the stride (zeros between the cells: a
reshape, a pad and a slice), with the filters flipped and their in/out axes swapped at import time.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import DYNAMIC, NodeContext, normalise_axis, shape
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.shaping import pick, slice_of
from cortex.frontends.onnx.table import converts

RESIZE_ATTRIBUTES = ("mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "antialias")


def resize_matrix(ctx: NodeContext, size: int, scale: float | None, out: int) -> np.ndarray:
    """The in × out matrix of one axis: row j is the resize of the j-th unit vector (ONNX's reference)."""
    from onnx.reference import ReferenceEvaluator

    attributes = {k: ctx.attrs[k] for k in RESIZE_ATTRIBUTES if k in ctx.attrs}
    names = ["X", "", "scales"] if scale is not None else ["X", "", "", "sizes"]
    node = onnx.helper.make_node("Resize", names, ["Y"], **attributes)
    if scale is not None:
        feeds = {"X": np.eye(size, dtype=np.float32), "scales": np.array([1.0, scale], np.float32)}
    else:
        feeds = {"X": np.eye(size, dtype=np.float32), "sizes": np.array([size, out], np.int64)}
    try:
        results: Any = ReferenceEvaluator(node, opsets={"": 19}).run(None, feeds)
        matrix = np.asarray(results[0], np.float32)
    except Exception as e:  # noqa: BLE001 - the reference's own error, named by the node
        raise ctx.error(f"cannot be computed: {type(e).__name__}: {e}") from None
    if matrix.shape != (size, out):
        raise ctx.error(f"resizing a dimension of {size} to {out} gave a {matrix.shape} matrix")
    return matrix


def along(im: Importer, ctx: NodeContext, x: SSAValue, axis: int, matrix: np.ndarray) -> SSAValue:
    """`x` with its `axis` multiplied by `matrix` (in × out)."""
    rank = len(shape(x))
    if axis == rank - 1:
        return im.build(ctx, ops.MatmulOp, x, im.constant(matrix))
    if axis == rank - 2:
        return im.build(ctx, ops.MatmulOp, im.constant(np.ascontiguousarray(matrix.T)), x)
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = im.build(ctx, ops.MatmulOp, im.build(ctx, ops.TransposeOp, x, perm), im.constant(matrix))
    return im.build(ctx, ops.TransposeOp, moved, list(np.argsort(perm)))


@converts("Resize", since=11, maps_to="`cortex.matmul` with a constant matrix per resized axis", known_inputs=(1, 2, 3),
          limits="nearest, linear and cubic, every coordinate mode but tf_crop_and_resize; scales or sizes constants; "
                 "keep_aspect_ratio_policy stretch")
def resize(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input X")
    s = shape(x)
    if im.opset < 11:
        raise ctx.error("Resize of opset < 11 is not supported")
    ctx.require("coordinate_transformation_mode",
                ("half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel", "half_pixel_symmetric"),
                "half_pixel", "tf_crop_and_resize (extrapolation outside the box) is not supported")
    ctx.require("keep_aspect_ratio_policy", ("stretch",), "stretch", 'only "stretch" is supported')
    ctx.get("extrapolation_value")  # used by tf_crop_and_resize only
    for name in RESIZE_ATTRIBUTES:
        ctx.get(name)
    axes = [normalise_axis(ctx, a, len(s), "axes") for a in ctx.ints("axes", list(range(len(s))))]
    scales = im.known.get(inputs[2]) if len(inputs) > 2 and inputs[2] else None
    sizes = im.static(inputs[3], ctx, "input sizes") if len(inputs) > 3 and inputs[3] else None
    if scales is not None and scales.size == 0:
        scales = None
    if (scales is None) == (sizes is None):
        raise ctx.error("exactly one of scales and sizes must be given, as a constant")
    given = (scales if scales is not None else np.asarray(sizes)).reshape(-1)
    if len(given) != len(axes):
        raise ctx.error(f"{len(given)} scales or sizes for {len(axes)} axes")
    y = x
    for axis, g in zip(axes, given):
        n = s[axis]
        out = int(np.floor(n * float(g))) if scales is not None else int(g)
        if out == n and (scales is None or float(g) == 1.0):
            continue
        if n == DYNAMIC:
            raise ctx.error(f"resizing dimension {axis}, known only at run time, is not supported")
        matrix = resize_matrix(ctx, n, float(g) if scales is not None else None, out)
        y = along(im, ctx, y, axis, matrix)
    return [y]


def spread(im: Importer, ctx: NodeContext, x: SSAValue, strides: list[int]) -> SSAValue:
    """N×C×H×W → N×C×((H−1)·sh+1)×((W−1)·sw+1), the cells `strides` apart, zeros between."""
    n, c, h, w = shape(x)
    sh, sw = strides
    if sh == sw == 1:
        return x
    y = im.reshape(ctx, x, (n, c, h, 1, w, 1))
    y = im.build(ctx, ops.PadOp, y, [0, 0, 0, 0, 0, 0, 0, 0, 0, sh - 1, 0, sw - 1])
    y = im.reshape(ctx, y, (n, c, h * sh, w * sw))
    return slice_of(im, ctx, y, {2: (0, (h - 1) * sh + 1, 1), 3: (0, (w - 1) * sw + 1, 1)})


def transposed_pads(ctx: NodeContext, size: list[int], kernel: list[int], strides: list[int], dilations: list[int],
                    extra: list[int], rank: int) -> list[int]:
    """ONNX ConvTranspose's pads (begins, ends) in 2-D, from `pads` or from output_shape / auto_pad."""
    out_shape, auto_pad = ctx.ints("output_shape"), ctx.get("auto_pad", "NOTSET")
    if out_shape is None and auto_pad in ("NOTSET", "VALID"):
        pads = ctx.ints("pads", [0] * 2 * rank) if auto_pad == "NOTSET" else [0] * 2 * rank
        return [0, pads[0], 0, pads[1]] if rank == 1 else pads
    if out_shape is None:
        out_shape = [n * s for n, s in zip(size, strides)]
    out_shape = ([1] + out_shape[-1:]) if rank == 1 else out_shape[-2:]
    begins, ends = [], []
    for n, k, s, d, e, o in zip(size, kernel, strides, dilations, extra, out_shape):
        total = s * (n - 1) + e + (k - 1) * d + 1 - o
        small, big = total // 2, total - total // 2
        begins.append(small if auto_pad == "SAME_UPPER" else big)
        ends.append(big if auto_pad == "SAME_UPPER" else small)
    return begins + ends


def flipped_filters(im: Importer, ctx: NodeContext, name: str, group: int, rank: int) -> SSAValue:
    """ConvTranspose's C × M/g × kh × kw weight as a convolution's M × C/g × kh × kw, flipped in space."""
    if name in im.known and name not in im.values:
        known = im.known[name] if rank == 2 else im.known[name][:, :, None, :]
        c, m, kh, kw = known.shape
        filters = known.reshape(group, c // group, m, kh, kw).transpose(0, 2, 1, 3, 4)[..., ::-1, ::-1]
        return im.constant(np.ascontiguousarray(filters.reshape(group * m, c // group, kh, kw), np.float32))
    w = im.value(name, ctx, "input W")
    if rank == 1:
        w = im.reshape(ctx, w, (*shape(w)[:2], 1, shape(w)[2]))
    c, m, kh, kw = shape(w)
    w = im.build(ctx, ops.TransposeOp, im.reshape(ctx, w, (group, c // group, m, kh, kw)), [0, 2, 1, 3, 4])
    w = im.reshape(ctx, w, (group * m, c // group, kh, kw))
    for axis, k in ((2, kh), (3, kw)):
        if k > 1:
            w = pick(im, ctx, w, axis, list(range(k - 1, -1, -1)))
    return w


@converts("ConvTranspose", maps_to="`cortex.reshape`, `cortex.pad`, `cortex.slice`, `cortex.conv2d`",
          limits="1-D and 2-D; strides, pads, dilations, group, output_padding, output_shape, auto_pad")
def conv_transpose(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input X")
    rank = len(shape(x)) - 2
    if rank not in (1, 2):
        raise ctx.error(f"only 1-D and 2-D inputs are supported, got shape {list(shape(x))}")
    w_shape = list(im.known[inputs[1]].shape) if inputs[1] in im.known else list(shape(im.value(inputs[1], ctx, "input W")))
    group = int(ctx.get("group", 1))
    lift = (lambda v: [1, *v]) if rank == 1 else (lambda v: list(v))
    kernel = lift(ctx.ints("kernel_shape", w_shape[2:]))
    strides, dilations = lift(ctx.ints("strides", [1] * rank)), lift(ctx.ints("dilations", [1] * rank))
    extra = [0, *ctx.ints("output_padding", [0])] if rank == 1 else ctx.ints("output_padding", [0, 0])
    if kernel != lift(w_shape[2:]) or w_shape[0] % group or shape(x)[1] != w_shape[0]:
        raise ctx.error(f"weight {w_shape} does not fit input {list(shape(x))} with group {group}")
    if rank == 1:
        n, c, length = shape(x)
        x = im.reshape(ctx, x, (n, c, 1, length))
    pads = transposed_pads(ctx, list(shape(x)[2:]), kernel, strides, dilations, extra, rank)
    filters = flipped_filters(im, ctx, inputs[1], group, rank)
    full = [(k - 1) * d for k, d in zip(kernel, dilations)]
    begin = [f - p for f, p in zip(full, pads[:2])]
    end = [f - p + e for f, p, e in zip(full, pads[2:], extra)]
    y = spread(im, ctx, x, strides)
    crop = {a + 2: (-min(b, 0), shape(y)[a + 2] + min(b, 0) + min(e, 0), 1) for a, (b, e) in enumerate(zip(begin, end))}
    y = slice_of(im, ctx, y, crop)
    bias = im.optional(inputs, 2, ctx, "input B")
    conv_pads = [max(begin[0], 0), max(begin[1], 0), max(end[0], 0), max(end[1], 0)]
    y = im.build(ctx, ops.Conv2dOp, y, filters, bias, pads=conv_pads, dilations=dilations, group=group)
    return [im.reshape(ctx, y, (*shape(y)[:2], shape(y)[3])) if rank == 1 else y]


__all__ = ["conv_transpose", "resize"]
