"""cortex-profile{frames=N mode=M entry=E size=HxW}: measure every cortex op, record it in the IR.

Per-stage `profile_ms` timings, as an attribute: the reference interpreter
runs `entry` over N inputs, its `op_timer` hook reports the wall time of
each cortex op execution, and each op gets the median over the frames as
`cortex.profile_ms` (f64, milliseconds). The graph view and the DCE report
read it back to say what a pass saved.

Inputs: synthetic video frames (`cortex.video.synthetic.SyntheticVideo`, at
the entry's frame size) when the entry takes one BGR frame; seeded random
arrays of the argument types otherwise (tensor graphs). A shape-generic
frame entry (`tensor<?x?x3xui8>`, the bundled pipeline) is profiled on a
copy bound to `size=HxW` (default 480x640, the synthetic video's), as
`cortex-run` binds it to a video; the times are recorded on the module's
own ops, which keep their dynamic types.

Ops that never ran (the L2 pipeline's scoring stages on a run where every
frame was blurred, or any op in a branch never taken) get no attribute, and
an attribute left by an earlier profile is removed from them: the IR then
says "not measured", which the graph view shows as 0.00 ms. An op that ran
on some frames only gets the median over the frames it ran on. Pieces
outlined by `cortex-partition` are profiled too: the interpreter follows
the calls.

The times are discardable attributes like any other, and CSE (xDSL's, as
MLIR's) only merges ops whose attributes are equal: two identical ops with
different times stay apart. To see what an optimisation pipeline removes,
profile one copy and optimise another: `render_diff` reads the times from
the module before the pipeline only.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, IntegerType, ModuleOp, TensorType, f64
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from cortex.dialects.base import shape_of, ui8
from cortex.errors import CortexError
from cortex.interpreter.calling import entry_function
from cortex.semantics.modes import DEFAULT_MODE

PROFILE_ATTR = "cortex.profile_ms"


class ProfileError(PassFailedException, CortexError):
    """The module cannot be profiled (reported as one line)."""


def _frame_sides(t: Attribute) -> list[int] | None:
    """(H, W) of tensor<HxWx3xui8>, one BGR frame (a side is -1 where it is dynamic); None for any other type."""
    if isinstance(t, TensorType) and t.element_type == ui8 and t.get_num_dims() == 3 and t.get_shape()[2] == 3:
        return list(t.get_shape()[:2])
    return None


def is_frame_type(t: Attribute) -> bool:
    """tensor<HxWx3xui8>: one BGR frame, which the synthetic video can supply."""
    sides = _frame_sides(t)
    return sides is not None and min(sides) > 0


def is_generic_frame_type(t: Attribute) -> bool:
    """tensor<?x?x3xui8> (any side dynamic): a frame of a size the video decides."""
    sides = _frame_sides(t)
    return sides is not None and min(sides) < 0


def random_value(t: Attribute, rng: np.random.Generator, index: int) -> Any:
    """A seeded random value of type `t` (standard normal floats, in-range integers)."""
    if isinstance(t, Float32Type):
        return float(np.float32(rng.standard_normal()))
    if not isinstance(t, TensorType):
        raise CortexError(f"argument #{index} has type {t}: cannot make a sample input for it")
    shape = tuple(t.get_shape())
    if any(d < 0 for d in shape):
        raise CortexError(f"argument #{index} has a dynamic shape ({t}): cannot make a sample input for it")
    element = t.element_type
    if isinstance(element, Float32Type):
        return rng.standard_normal(shape).astype(np.float32)
    if element == ui8:
        return rng.integers(0, 256, shape, dtype=np.uint8)
    if isinstance(element, IntegerType):
        return rng.integers(-100, 100, shape).astype(f"int{element.width.data}")
    raise CortexError(f"argument #{index} has element type {element}: cannot make a sample input for it")


def sample_inputs(fn: func.FuncOp, frames: int, seed: int = 0) -> Iterator[tuple[Any, ...]]:
    """`frames` argument tuples for `fn`: synthetic video frames, or seeded random arrays."""
    types: Sequence[Attribute] = fn.function_type.inputs.data
    if len(types) == 1 and is_frame_type(types[0]):
        from cortex.video.synthetic import SyntheticVideo

        height, width, _ = shape_of(types[0], "the frame")
        for frame in SyntheticVideo(height, width, seed=seed).frames(frames):
            yield (frame,)
        return
    rng = np.random.default_rng(seed)
    for _ in range(frames):
        yield tuple(random_value(t, rng, i) for i, t in enumerate(types))


MAX_PROFILE_FRAMES = 10_000
"""More frames than this adds nothing to a median, and would run for hours."""


def profile_module(
    module: ModuleOp, frames: int = 10, mode: str | None = DEFAULT_MODE, entry: str | None = None, seed: int = 0,
    size: tuple[int, int] | None = None,
) -> dict[Operation, float]:
    """Run the reference interpreter and set `cortex.profile_ms` on every cortex op that ran.

    Returns the medians in milliseconds, keyed by op. `size` (height, width): the frame size a
    shape-generic frame entry is profiled at (default `DEFAULT_SIZE`); only such an entry takes one.
    """
    from cortex.interpreter.reference import ReferenceRunner
    from cortex.passes.pad_frames import pad_frames
    from cortex.passes.specialize_shapes import specialize_shapes
    from cortex.video.synthetic import DEFAULT_SIZE

    if isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= MAX_PROFILE_FRAMES:
        raise CortexError(f"frames must be a whole number from 1 to {MAX_PROFILE_FRAMES}, got {frames}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise CortexError(f"seed must be a non-negative whole number, got {seed}")
    fn = entry_function(module, entry)
    types = fn.function_type.inputs.data
    own_op: dict[Operation, Operation] | None = None  # the bound copy's op -> the module's
    if len(types) == 1 and is_generic_frame_type(types[0]):
        bound = module.clone()
        own_op = dict(zip(bound.walk(), module.walk()))  # a clone walks in the same order (a pad op added next has none)
        h, w = size or DEFAULT_SIZE
        specialize_shapes(pad_frames(bound, fn.sym_name.data, (h, w)), fn.sym_name.data, [(h, w, 3)])
        fn = entry_function(bound, fn.sym_name.data)
        module_run = bound
    elif size is not None:
        raise CortexError(f"size={size[0]}x{size[1]} is for a shape-generic frame entry; @{fn.sym_name.data} takes "
                          + ", ".join(str(t) for t in types))
    else:
        module_run = module
    samples: dict[Operation, list[float]] = defaultdict(list)
    per_frame: dict[Operation, float] = defaultdict(float)

    def op_timer(op: Operation, seconds: float) -> None:
        per_frame[op] += seconds  # an op run twice in one frame (a piece called twice) adds up

    runner = ReferenceRunner(module_run, entry=fn.sym_name.data, mode=mode, op_timer=op_timer)
    for inputs in sample_inputs(fn, frames, seed):
        per_frame.clear()
        runner(*inputs)
        for op, seconds in per_frame.items():
            samples[op].append(seconds)

    medians = {op: round(1000.0 * statistics.median(times), 4) for op, times in samples.items()}
    if own_op is not None:
        medians = {own_op[op]: ms for op, ms in medians.items() if op in own_op}
    for op in module.walk():
        if not op.name.startswith("cortex."):
            continue
        if op in medians:
            op.attributes[PROFILE_ATTR] = FloatAttr(medians[op], f64)
        else:
            op.attributes.pop(PROFILE_ATTR, None)
    return medians


def profile_ms(op: Operation) -> float | None:
    """The recorded median time of `op` in milliseconds (a float or, written by hand, an integer), or None."""
    attr = op.attributes.get(PROFILE_ATTR)
    return float(attr.value.data) if isinstance(attr, (FloatAttr, IntegerAttr)) else None


@dataclass(frozen=True)
class ProfilePass(ModulePass):
    """Record each cortex op's median reference-interpreter time as `cortex.profile_ms`."""

    name = "cortex-profile"

    frames: int = 10
    mode: str = DEFAULT_MODE
    entry: str = ""
    """The function to profile ("": the module's only public function)."""
    seed: int = 0
    size: str = ""
    """HxW: the frame size a shape-generic pipeline is profiled at ("" : 480x640)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            profile_module(op, self.frames, self.mode or None, self.entry or None, self.seed, _size(self.size))
        except CortexError as e:
            raise ProfileError(str(e)) from None


def _size(text: str) -> tuple[int, int] | None:
    if not text:
        return None
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ProfileError(f"size reads like 480x640, got '{text}'")
    return int(parts[0]), int(parts[1])


__all__ = ["PROFILE_ATTR", "ProfilePass", "is_generic_frame_type", "profile_ms", "profile_module", "sample_inputs"]
