"""`cortex-pad-frames{entry=l2_frame size=240x320}`: a pipeline that scores blocks, bound to frames of any size.

The ops that cut an image into `block`×`block` cells (the maps, the
encoder) need sides that are multiples of the block. A video's frames are
what they are (1080×1920, 240×320, 33×47), so binding a shape-generic entry
to them goes through this pass:

1. the entry's frame argument (its first, a `tensor<?x?x3xui8>`) takes the
   frames' H×W;
2. when H or W is no multiple of the entry's block (the least common
   multiple of its ops' `block` properties, `video_block`), a
   `cortex.pad_frame` edge-replicates the frame at the bottom and right up to
   the next multiples and every use of the frame reads the padded one instead
   (`PadFrameArgument`), so the score grid has one cell per started block;
3. every `cortex.encoder` of the padded frame crops back to H×W
   (`CropEncoderToFrame`): the JPEG has the frame's own size.

`cortex-specialize-shapes` then infers every shape below. `binding_pipeline`
is the one statement of the steps that bind an entry to argument shapes: the
shape-generic pipeline (`cortex.compile`/`cortex.reference` of a `?` entry,
`specialize`) and `cortex-run` both run it, and print it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from cortex.dialects import shapes
from cortex.dialects.base import i64_array
from cortex.dialects.vision import EncoderOp, PadFrameOp
from cortex.passes.specialize_shapes import ShapeBindingError, find_function, parse_shape, video_block
from cortex.semantics.modes import DEFAULT_ENTRY


def frame_argument(fn: func.FuncOp) -> TensorType | None:
    """The type of `fn`'s frame argument (its first, a rank-3 tensor: H×W×channels), or None."""
    if not fn.args:
        return None
    t = fn.args[0].type
    return t if isinstance(t, TensorType) and t.get_num_dims() == 3 else None


def is_video_entry(module: ModuleOp, entry: str) -> bool:
    """Whether `entry` takes a frame whose height or width is `?` and scores blocks: what
    `cortex-pad-frames` binds (any other shape-generic entry is bound by `cortex-specialize-shapes` alone)."""
    fn = find_function(module, entry)
    if fn is None or (t := frame_argument(fn)) is None:
        return False
    return shapes.DYNAMIC in t.get_shape()[:2] and video_block(module, entry) > 1


def binding_pipeline(module: ModuleOp, entry: str, arg_shapes: Sequence[Sequence[int] | None]) -> str:
    """The passes that bind `entry` to `arg_shapes` (one per argument, None for a scalar), as `cortex-opt -p` text:
    `cortex-pad-frames` for a video entry (its frame of any H×W), then `cortex-specialize-shapes`."""
    given = ["-" if s is None else shapes.fmt(tuple(int(d) for d in s)) for s in arg_shapes]
    steps = []
    first = arg_shapes[0] if arg_shapes else None
    if first is not None and len(first) == 3 and is_video_entry(module, entry):
        steps.append(f"cortex-pad-frames{{entry={entry} size={int(first[0])}x{int(first[1])}}}")
    steps.append(f"cortex-specialize-shapes{{entry={entry} shapes={','.join(given)}}}")
    return ",".join(steps)


@dataclass
class PadFrameArgument(RewritePattern):
    """The entry's frame read through one `cortex.pad_frame` (inserted first in the body) by every op."""

    entry: str
    block: int

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        if op.sym_name.data != self.entry or not op.args:
            return
        frame = op.args[0]
        if any(isinstance(use.operation, PadFrameOp) for use in frame.uses):
            return  # padded already
        pad = PadFrameOp(frame, self.block)
        pad.result.name_hint = "padded"
        rewriter.insert(pad, InsertPoint.at_start(op.body.blocks[0]))
        rewriter.replace_uses_with_if(frame, pad.result, lambda use: use.operation is not pad)


class CropEncoderToFrame(RewritePattern):
    """An encoder of a padded frame crops its JPEG back to the frame's own H×W."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: EncoderOp, rewriter: PatternRewriter) -> None:
        pad = op.frame.owner
        if not isinstance(pad, PadFrameOp) or not isinstance(pad.frame.type, TensorType):
            return
        size = tuple(pad.frame.type.get_shape()[:2])
        if shapes.DYNAMIC in size or (op.crop is not None and tuple(op.crop.get_values()) == size):
            return
        op.properties["crop"] = i64_array(size)
        rewriter.notify_op_modified(op)


def bind_frame_size(fn: func.FuncOp, size: tuple[int, int]) -> None:
    """`fn`'s frame argument typed H×W×(its channels), or a ShapeBindingError when its type fixes another size."""
    declared = frame_argument(fn)
    name = fn.sym_name.data
    if declared is None:
        raise ShapeBindingError(f"@{name} takes no frame argument (a tensor<?x?x3xui8> first) to pad")
    if not shapes.shapes_agree(declared.get_shape()[:2], size):
        raise ShapeBindingError(f"@{name} takes {declared} frames; frames of {shapes.fmt(size)} do not fit it")
    bound = TensorType(declared.element_type, (*size, declared.get_shape()[2]))
    if bound == declared:
        return
    rewriter = PatternRewriter(fn)
    rewriter.replace_value_with_new_type(fn.args[0], bound)
    inputs = [bound, *fn.function_type.inputs.data[1:]]
    fn.function_type = FunctionType.from_lists(inputs, list(fn.function_type.outputs.data))


def pad_frames(module: ModuleOp, entry: str, size: tuple[int, int]) -> ModuleOp:
    """`module` (in place) with `entry` bound to frames of `size` (H, W), padded and cropped where H or W
    is no multiple of the entry's block (see module doc)."""
    fn = find_function(module, entry)
    if fn is None:
        raise ShapeBindingError(f"the module has no function @{entry}")
    try:
        for name, side in zip("HW", size):
            shapes.check_image_side(name, side)
    except shapes.ShapeError as e:
        raise ShapeBindingError(f"cortex-pad-frames: {e}") from None
    bind_frame_size(fn, size)
    block = video_block(module, entry)
    if shapes.padded_to_block(*size, block) != tuple(size):
        patterns = GreedyRewritePatternApplier([PadFrameArgument(entry, block), CropEncoderToFrame()])
        PatternRewriteWalker(patterns, apply_recursively=True).rewrite_module(module)
    return module


@dataclass(frozen=True)
class PadFramesPass(ModulePass):
    """`cortex-pad-frames{entry=l2_frame size=240x320}`: `entry`'s frame argument bound to H×W frames, padded to
    the block grid by a `cortex.pad_frame` and cropped back by the encoders where needed (`pad_frames`)."""

    name = "cortex-pad-frames"

    entry: str = DEFAULT_ENTRY
    size: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shape = parse_shape(self.size) if self.size else ()
        if len(shape) != 2:
            raise ShapeBindingError(f"cortex-pad-frames' size reads like 480x640 (frame height x width), got '{self.size}'")
        pad_frames(op, self.entry, (shape[0], shape[1]))




def scored_frame_size(module: ModuleOp, entry: str) -> tuple[int, int]:
    """The H×W the bound `entry` scores: its `cortex.pad_frame`'s result where the frame is padded, else the
    frame argument's own (what `cortex-run` reports as the padded size)."""
    fn = find_function(module, entry)
    t = frame_argument(fn) if fn is not None else None
    if fn is None or t is None:
        raise ShapeBindingError(f"@{entry} takes no frame argument")
    for use in fn.args[0].uses:
        if isinstance(use.operation, PadFrameOp) and isinstance(padded := use.operation.result.type, TensorType):
            return padded.get_shape()[0], padded.get_shape()[1]
    return t.get_shape()[0], t.get_shape()[1]


__all__ = ["PadFramesPass", "binding_pipeline", "is_video_entry", "pad_frames", "scored_frame_size"]
