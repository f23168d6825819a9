"""Operators that select, join and reshape: Squeeze, Unsqueeze, Concat, Slice, Split, Pad, Gather, Shape, Where.

Index inputs (axes, starts, pads, split sizes, gather indices) are read at import time. A node whose
inputs are all known and integer (a shape computation) is computed by the graph walker at import time
(`Importer.fold`); these converters build the graph for float32 data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import DYNAMIC, NodeContext, normalise_axis, shape
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts

PAD_MODES = ("constant", "reflect", "edge", "wrap")
MAX_GATHERED = 256
"""The most indices a Gather of computed data takes (each is one slice)."""


def axes_of(im: Importer, ctx: NodeContext, inputs: list[str], rank: int) -> list[int] | None:
    """The `axes` of a node (an attribute in older opsets, a constant second input in newer ones), normalised."""
    if len(inputs) > 1 and inputs[1]:
        axes = [int(a) for a in im.static(inputs[1], ctx, "input axes").reshape(-1)]
    else:
        stated = ctx.ints("axes")
        if stated is None:
            return None
        axes = stated
    norm = [normalise_axis(ctx, a, rank, "axes") for a in axes]
    if len(set(norm)) != len(norm):
        raise ctx.error(f"axes {axes} name a dimension twice")
    return norm


@converts("Squeeze", maps_to="`cortex.reshape`", known_inputs=(1,), limits="axes a constant; without axes every known size-1 dimension")
def squeeze(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    s = shape(x)
    axes = axes_of(im, ctx, inputs, len(s))
    if axes is None:
        axes = [i for i, d in enumerate(s) if d == 1]
    for a in axes:
        if s[a] != 1:
            raise ctx.error(f"dimension {a} of {list(s)} is not 1", "axes" if "axes" in ctx.attrs else None)
    return [im.reshape(ctx, x, [d for i, d in enumerate(s) if i not in axes])]


@converts("Unsqueeze", maps_to="`cortex.reshape`", known_inputs=(1,), limits="axes a constant")
def unsqueeze(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    s = list(shape(x))
    if len(inputs) > 1 and inputs[1]:
        count = int(im.static(inputs[1], ctx, "input axes").size)
    else:
        count = len(ctx.ints("axes", []))
    axes = axes_of(im, ctx, inputs, len(s) + count)
    if not axes:
        raise ctx.error("Unsqueeze needs axes")
    out = list(s)
    for a in sorted(axes):
        out.insert(a, 1)
    return [im.reshape(ctx, x, out)]


@converts("Concat", maps_to="`cortex.concat`")
def concat(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    values = [im.value(name, ctx, f"input #{i}") for i, name in enumerate(inputs) if name]
    axis = normalise_axis(ctx, int(ctx.get("axis", 1)), len(shape(values[0])))
    values = [v for v in values if shape(v)[axis] != 0] or values[:1]  # an empty part adds nothing
    if len(values) == 1:
        return [values[0]]
    return [im.build(ctx, ops.ConcatOp, values, axis)]


def slice_of(im: Importer, ctx: NodeContext, x: SSAValue, box: dict[int, tuple[int, int, int]]) -> SSAValue:
    """`x` cut to box[axis] = (start, size, step) on the axes given, whole elsewhere."""
    s = shape(x)
    starts, sizes, steps = [0] * len(s), list(s), [1] * len(s)
    for axis, (start, size, step) in box.items():
        starts[axis], sizes[axis], steps[axis] = start, size, step
    if sizes == list(s) and all(st == 1 for st in steps):
        return x
    return im.build(ctx, ops.SliceOp, x, starts, sizes, steps)


def pick(im: Importer, ctx: NodeContext, x: SSAValue, axis: int, indices: Sequence[int]) -> SSAValue:
    """The cells `indices` (in range, any order) of `x` along `axis`: one strided slice per run of
    equally spaced ascending indices, joined by `cortex.concat`."""
    if len(indices) > MAX_GATHERED:
        raise ctx.error(f"{len(indices)} indices into computed data: more than {MAX_GATHERED} slices")
    runs: list[list[int]] = []
    for i in indices:
        run = runs[-1] if runs else None
        if run is not None and i > run[-1] and (len(run) == 1 or i - run[-1] == run[1] - run[0]):
            run.append(i)
        else:
            runs.append([i])
    parts = [slice_of(im, ctx, x, {axis: (r[0], len(r), r[1] - r[0] if len(r) > 1 else 1)}) for r in runs]
    return parts[0] if len(parts) == 1 else im.build(ctx, ops.ConcatOp, parts, axis)


def descending(ctx: NodeContext, d: int, start: int, end: int, step: int) -> list[int]:
    """The indices ONNX Slice takes along one axis with a negative step."""
    if d == DYNAMIC:
        raise ctx.error("slicing a dimension known only at run time is not supported")
    start = min(max(start + d if start < 0 else start, 0), d - 1)
    end = min(max(end + d if end < 0 else end, -1), d - 1)
    return list(range(start, end, step))


def resolve_bounds(ctx: NodeContext, d: int, start: int, end: int, step: int) -> tuple[int, int]:
    """ONNX Slice's clamping of one axis (positive step): (first index, element count)."""
    if step == 0:
        raise ctx.error("a step of 0 is not allowed")
    if d == DYNAMIC:
        if start == 0 and end >= 2**31 - 1 and step == 1:
            return 0, DYNAMIC
        raise ctx.error("slicing a dimension known only at run time is not supported")
    start = min(max(start + d if start < 0 else start, 0), d)
    end = min(max(end + d if end < 0 else end, 0), d)
    return start, max(0, -(-(end - start) // step))


@converts("Slice", maps_to="`cortex.slice` (and `cortex.concat` for a negative step)", known_inputs=(1, 2, 3, 4),
          limits=f"starts, ends, axes, steps constants; a negative step takes at most {MAX_GATHERED} cells")
def slice_(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    s = shape(x)
    if im.opset < 10:
        starts, ends = ctx.ints("starts", []), ctx.ints("ends", [])
        axes, steps = ctx.ints("axes", list(range(len(starts)))), [1] * len(starts)
    else:
        def read(i: int, what: str, default: Sequence[int]) -> list[int]:
            if len(inputs) > i and inputs[i]:
                return [int(v) for v in im.static(inputs[i], ctx, f"input {what}").reshape(-1)]
            return list(default)

        starts, ends = read(1, "starts", []), read(2, "ends", [])
        axes = read(3, "axes", range(len(starts)))
        steps = read(4, "steps", [1] * len(starts))
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error(f"starts, ends, axes and steps differ in length: {starts}, {ends}, {axes}, {steps}")
    box: dict[int, tuple[int, int, int]] = {}
    reversed_axes: dict[int, list[int]] = {}
    for start, end, axis, step in zip(starts, ends, axes, steps):
        a = normalise_axis(ctx, axis, len(s), None)
        if a in box or a in reversed_axes:
            raise ctx.error(f"axes {axes} name dimension {a} twice")
        if step < 0:
            reversed_axes[a] = descending(ctx, s[a], start, end, step)
            continue
        first, size = resolve_bounds(ctx, s[a], start, end, step)
        box[a] = (first if size else 0, size, step)
    y = slice_of(im, ctx, x, box)
    for a, indices in reversed_axes.items():
        y = pick(im, ctx, y, a, indices) if indices else slice_of(im, ctx, y, {a: (0, 0, 1)})
    return [y]


@converts("Split", maps_to="`cortex.slice` per output", known_inputs=(1,), limits="split sizes a constant (attribute or input) or equal parts")
def split(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input")
    s = shape(x)
    axis = normalise_axis(ctx, int(ctx.get("axis", 0)), len(s))
    outputs = len(ctx.node.output)
    if s[axis] == DYNAMIC:
        raise ctx.error("splitting a dimension known only at run time is not supported", "axis")
    if len(inputs) > 1 and inputs[1]:
        sizes = [int(v) for v in im.static(inputs[1], ctx, "input split").reshape(-1)]
    elif "split" in ctx.attrs:
        sizes = ctx.ints("split", [])
    else:
        parts = int(ctx.get("num_outputs", outputs))
        if parts != outputs:
            raise ctx.error(f"gives {parts} parts but the node has {outputs} outputs", "num_outputs")
        chunk = -(-s[axis] // parts)
        sizes = [min(chunk, s[axis] - i * chunk) for i in range(parts)]
    if len(sizes) != outputs or sum(sizes) != s[axis] or any(n < 0 for n in sizes):
        raise ctx.error(f"split sizes {sizes} do not cut dimension {axis} of {list(s)} into {outputs} outputs")
    offsets = np.cumsum([0, *sizes[:-1]])
    return [slice_of(im, ctx, x, {axis: (int(o), n, 1)}) for o, n in zip(offsets, sizes)]


@converts("Pad", maps_to="`cortex.pad` (`cortex.slice`, `cortex.concat` for negative pads and other modes)", known_inputs=(1, 2, 3),
          limits=f"pads, constant_value and axes constants; reflect, edge and wrap as slices (≤ {MAX_GATHERED} per axis)")
def pad(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    x = im.value(inputs[0], ctx, "input data")
    rank = len(shape(x))
    mode = ctx.require("mode", PAD_MODES, "constant", f"must be one of {', '.join(PAD_MODES)}")
    if im.opset < 11:
        pads, value = ctx.ints("pads", [0] * 2 * rank), float(ctx.get("value", 0.0))
    else:
        pads = [int(v) for v in im.static(inputs[1], ctx, "input pads").reshape(-1)]
        value = 0.0
        if len(inputs) > 2 and inputs[2]:
            known = im.known.get(inputs[2])
            if known is None or known.size != 1:
                raise ctx.error("input constant_value must be a known scalar")
            value = float(known.reshape(-1)[0])
        if len(inputs) > 3 and inputs[3]:
            axes = [normalise_axis(ctx, int(a), rank, None) for a in im.static(inputs[3], ctx, "input axes").reshape(-1)]
            full = [0] * 2 * rank
            for i, a in enumerate(axes):
                full[a], full[rank + a] = pads[i], pads[len(axes) + i]
            pads = full
    if len(pads) != 2 * rank:
        raise ctx.error(f"pads {pads} must have {2 * rank} entries for a rank-{rank} input")
    if mode != "constant":
        return [padded_by_index(im, ctx, x, pads, mode)]
    grown = [max(p, 0) for p in pads]
    y = im.build(ctx, ops.PadOp, x, grown, value) if any(grown) else x
    if any(p < 0 for p in pads):  # a negative pad removes cells
        s = shape(y)
        box = {
            a: (-min(pads[a], 0), s[a] + min(pads[a], 0) + min(pads[rank + a], 0), 1)
            for a in range(rank) if min(pads[a], pads[rank + a]) < 0
        }
        if any(s[a] == DYNAMIC for a in box):
            raise ctx.error("cropping a dimension known only at run time is not supported")
        if any(size < 0 for _, size, _ in box.values()):
            raise ctx.error(f"pads {pads} remove more than the input's {list(shape(x))}")
        y = slice_of(im, ctx, y, box)
    return [y]


def padded_by_index(im: Importer, ctx: NodeContext, x: SSAValue, pads: list[int], mode: str) -> SSAValue:
    """Pad modes reflect, edge and wrap: along each padded axis the cells NumPy's np.pad of the same mode
    takes (ONNX's modes are NumPy's), picked as slices and joined."""
    s, rank = shape(x), len(shape(x))
    y = x
    for a in range(rank):
        lo, hi = pads[a], pads[rank + a]
        if lo == hi == 0:
            continue
        if lo < 0 or hi < 0 or s[a] in (0, DYNAMIC):
            raise ctx.error(f"mode {mode} pads {pads}: negative, or on an empty or run-time dimension ({list(s)})", "mode")
        cells: Any = np.pad(np.arange(s[a]), (lo, hi), mode=mode)  # type: ignore[call-overload]
        y = pick(im, ctx, y, a, cells.tolist())
    return y


@converts("Gather", maps_to="`cortex.slice`, `cortex.concat`, `cortex.reshape`", known_inputs=(1,),
          limits=f"indices a constant (at most {MAX_GATHERED} of them unless the data is known too)")
def gather(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    indices = im.static(inputs[1], ctx, "input indices")
    if inputs[0] in im.known and inputs[0] not in im.values:  # a table known now: gathered now
        data = im.known[inputs[0]]
        axis = normalise_axis(ctx, int(ctx.get("axis", 0)), data.ndim)
        return [im.constant(np.take(data, indices.astype(np.int64), axis=axis))]
    x = im.value(inputs[0], ctx, "input data")
    s = shape(x)
    axis = normalise_axis(ctx, int(ctx.get("axis", 0)), len(s))
    if s[axis] == DYNAMIC:
        raise ctx.error("gathering along a dimension known only at run time is not supported", "axis")
    flat = [int(i) + s[axis] if i < 0 else int(i) for i in indices.reshape(-1)]
    if any(not 0 <= i < s[axis] for i in flat):
        raise ctx.error(f"indices {indices.reshape(-1).tolist()[:8]} out of range for dimension {axis} of size {s[axis]}")
    y = pick(im, ctx, x, axis, flat)
    return [im.reshape(ctx, y, [*s[:axis], *indices.shape, *s[axis + 1:]])]


@converts("Shape", maps_to="a constant (known at import time)", limits="the input's shape must be static")
def shape_node(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue | None]:
    s = list(shape(im.value(inputs[0], ctx, "input data")))
    start, end = int(ctx.get("start", 0)), ctx.get("end")
    part = s[start:] if end is None else s[start:int(end)]
    if DYNAMIC in part:
        raise ctx.error(f"the input's shape {['?' if d == DYNAMIC else d for d in s]} is known only at run time")
    im.known[ctx.node.output[0]] = np.array(part, np.int64)
    return [None]


@converts("Where", maps_to="`cortex.select`", typed_inputs=(0, 1, 2),
          limits="a bool condition; X and Y of one element type (float16/32/64, bool, signed integers)")
def where(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    cond = im.typed_value(inputs[0], ctx, "condition")
    x, y = im.typed_value(inputs[1], ctx, "X"), im.typed_value(inputs[2], ctx, "Y")
    return [im.build(ctx, ops.SelectOp, cond, x, y)]


__all__ = ["concat", "gather", "pad", "shape_node", "slice_", "split", "squeeze", "unsqueeze"]
