"""The L2 ROI-scoring pipeline, built for any frame size and block.

`examples/l2_pipeline.mlir` is exactly `build_l2_pipeline()` printed (a test
keeps them equal). Real videos get a pipeline built for their padded
resolution (`cortex.video.source.padded_size`), compiled once per resolution.
"""

from __future__ import annotations

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.ir import Block, Region

from cortex.dialects import shapes
from cortex.dialects.base import tensor, ui8
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.dialects.vision import (
    BlurDetectorOp,
    CenterCropOp,
    EncoderOp,
    GrayOp,
    MotionMapOp,
    SaliencyDftOp,
    SceneChangeOp,
    ScoreFusionOp,
    TemporalSmoothOp,
    TextRoiOp,
)
from cortex.semantics import defaults as D

ENTRY = "l2_frame"
TERMS = ("center_crop", "text_roi", "saliency_dft", "motion_map")
WEIGHTS = ("wc", "wt", "ws", "wm")
BLUR_THRESHOLD = 100.0


def build_l2_pipeline(
    height: int = 480,
    width: int = 640,
    block: int = D.BLOCK,
    blur_threshold: float = BLUR_THRESHOLD,
    crop: tuple[int, int] | None = None,
) -> ModuleOp:
    """`@l2_frame(tensor<HxWx3xui8>) -> (tensor<?xui8>, tensor<H/b x W/b x f32>)`.

    For a video whose frames are padded up to `height`×`width`, `crop` is their
    own size: the encoder crops back to it (see `cortex.video.source.padded_size`).
    """
    grid = shapes.block_grid(height, width, block)
    frame_t, gray_t, map_t = tensor((height, width, 3), ui8), tensor((height, width)), tensor(grid)
    bytes_t = tensor((shapes.DYNAMIC,), ui8)

    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp(ENTRY, ([frame_t], [bytes_t, map_t]))
    fn.args[0].name_hint = "frame"

    def named(value, name):
        value.name_hint = name
        return value

    with ImplicitBuilder(fn.body):
        gray = named(GrayOp(fn.args[0]).result, "gray")
        prev_gray = named(StateOp("prev_gray", gray_t).result, "prev_gray")
        prev_score = named(StateOp("prev_score", map_t).result, "prev_score")
        sharpness = named(BlurDetectorOp(gray).result, "sharpness")
        threshold = named(arith.ConstantOp(FloatAttr(blur_threshold, f32)).result, "blur_threshold")
        blurred = named(arith.CmpfOp(sharpness, threshold, "olt").result, "blurred")
        branch = scf.IfOp(blurred, [map_t], Region(Block()), Region(Block()))
        score = named(branch.results[0], "score")
        UpdateStateOp("prev_gray", gray)
        UpdateStateOp("prev_score", score)
        encoded = named(EncoderOp(fn.args[0], score, block=block, crop=crop).result, "encoded")
        func.ReturnOp(encoded, score)

    with ImplicitBuilder(branch.true_region):
        scf.YieldOp(prev_score)
    with ImplicitBuilder(branch.false_region):
        scene = named(SceneChangeOp(gray, prev_gray).result, "scene")
        maps = [
            named(CenterCropOp(gray, block=block).result, "center"),
            named(TextRoiOp(gray, block=block).result, "text"),
            named(SaliencyDftOp(gray, block=block).result, "saliency"),
            named(MotionMapOp(gray, prev_gray, block=block).result, "motion"),
        ]
        weights = [named(WeightOp(w).result, w) for w in WEIGHTS]
        fused = named(ScoreFusionOp(maps, weights, TERMS).result, "fused")
        smoothed = named(TemporalSmoothOp(fused, prev_score, scene).result, "smoothed")
        scf.YieldOp(smoothed)
    module.verify()
    return module
