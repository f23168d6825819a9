"""The L2 ROI-scoring pipeline, built for any frame size and block — or for every size.

This builder is the one home of the pipeline's structure. `examples/l2_pipeline.mlir`
is exactly `build_l2_pipeline(None, None)` printed, the shape-generic form
(`tensor<?x?x3xui8>`; a test keeps them equal; `L2_PIPELINE` is its path, so
the bundled pipeline is reachable from any directory): it runs on frames of
any size, compiled once per frame size (`cortex.shape_generic`; `cortex-run`
binds it to a video's size before the first frame). Given a height and
width, the builder gives the static pipeline for that size: the same module
the generic one becomes once bound to it (`cortex-pad-frames`,
`cortex-specialize-shapes`) — for sides that are no multiple of the block, a
`cortex.pad_frame` first and an encoder that crops back.

The blur gate skips scoring when

    sharpness < max(blur_threshold, blur_fraction · median(sharpness_history))

with `blur_threshold` and `blur_fraction` runtime inputs (`cortex.weight`,
defaults in `cortex.semantics.modes.INPUT_DEFAULTS`: 100 and 0, the original
fixed gate) and `sharpness_history` a state holding the last
`SHARPNESS_WINDOW` sharpness values (`cortex.window_push`,
`cortex.window_median`: compilable ops, so the adaptive gate is IR like
every other stage). The history counts gated frames too, so a video that turns soft for good
is followed within half a window; its zeros before the first frame are empty slots the median
ignores, so the first frame is never gated by the relative rule.
"""

from __future__ import annotations

from pathlib import Path

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import tensor, ui8
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.dialects.vision import (
    BlurDetectorOp,
    CenterCropOp,
    EncoderOp,
    GrayOp,
    MotionMapOp,
    PadFrameOp,
    SaliencyDftOp,
    SceneChangeOp,
    ScoreFusionOp,
    TemporalSmoothOp,
    TextRoiOp,
)
from cortex.dialects.window import WindowMedianOp, WindowPushOp
from cortex.errors import CortexError
from cortex.ir import verify_located
from cortex.semantics import defaults as D
from cortex.semantics.modes import DEFAULT_ENTRY, INPUT_DEFAULTS

ENTRY = DEFAULT_ENTRY
TERMS = ("center_crop", "text_roi", "saliency_dft", "motion_map")
WEIGHTS = ("wc", "wt", "ws", "wm")
BLUR_THRESHOLD = INPUT_DEFAULTS["blur_threshold"]
SHARPNESS_WINDOW = 25
"""Frames of sharpness history the relative blur gate takes its median over (~1 s of video)."""
L2_PIPELINE = Path(__file__).resolve().parent / "l2_pipeline.mlir"
"""The bundled pipeline's file, `build_l2_pipeline()` printed."""


def _checked_grid(height: int, width: int, block: int) -> tuple[int, ...]:
    """The score-map shape (one cell per started block), or a CortexError naming the argument that is wrong."""
    for name, value in (("height", height), ("width", width), ("block", block)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise CortexError(f"build_l2_pipeline: {name} must be an int{'' if name == 'block' else ' or None'}, got {value!r}")
    try:
        padded_h, padded_w = shapes.padded_to_block(height, width, block)
        return shapes.block_grid(padded_h, padded_w, block)
    except VerifyException as e:
        raise CortexError(f"build_l2_pipeline({height}, {width}, block={block}): {e}") from None


def build_l2_pipeline(
    height: int | None = 480,
    width: int | None = 640,
    block: int = D.BLOCK,
    blur_threshold: float | None = None,
) -> ModuleOp:
    """`@l2_frame(tensor<HxWx3xui8>) -> (tensor<?xui8>, tensor<H/b x W/b x f32>)`.

    `height` or `width` None leaves that side `?` (the bundled shape-generic form).

    A side that is no multiple of `block` is padded in the pipeline: a
    `cortex.pad_frame` edge-replicates the frame up to the next multiples (the
    score grid has one cell per started block) and the encoder crops back.
    `blur_threshold=None` (the default) makes the gate's absolute threshold
    the runtime input `blur_threshold`; a number bakes it in as a constant.
    Arguments no pipeline can have are a CortexError naming them.
    """
    height = shapes.DYNAMIC if height is None else height
    width = shapes.DYNAMIC if width is None else width
    try:
        return _build_l2_pipeline(height, width, block, blur_threshold)
    except VerifyException as e:  # an op builder's typing rule (e.g. a block the saliency scale does not divide)
        raise CortexError(f"build_l2_pipeline({height}, {width}, block={block}): {e}") from None


def _build_l2_pipeline(height: int, width: int, block: int, blur_threshold: float | None) -> ModuleOp:
    grid = _checked_grid(height, width, block)
    padded = shapes.padded_to_block(height, width, block)
    frame_t, gray_t, map_t = tensor((height, width, 3), ui8), tensor(padded), tensor(grid)
    bytes_t = tensor((shapes.DYNAMIC,), ui8)

    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp(ENTRY, ([frame_t], [bytes_t, map_t]))
    fn.args[0].name_hint = "frame"

    def named(value, name):
        value.name_hint = name
        return value

    with ImplicitBuilder(fn.body):
        frame, crop = fn.args[0], None
        if padded != (height, width):
            frame, crop = named(PadFrameOp(frame, block).result, "padded"), (height, width)
        gray = named(GrayOp(frame).result, "gray")
        prev_gray = named(StateOp("prev_gray", gray_t).result, "prev_gray")
        prev_score = named(StateOp("prev_score", map_t).result, "prev_score")
        history = named(StateOp("sharpness_history", tensor((SHARPNESS_WINDOW,))).result, "sharpness_history")
        sharpness = named(BlurDetectorOp(gray).result, "sharpness")
        if blur_threshold is None:
            absolute = named(WeightOp("blur_threshold").result, "blur_threshold")
        else:
            absolute = named(arith.ConstantOp(FloatAttr(blur_threshold, f32)).result, "blur_threshold")
        fraction = named(WeightOp("blur_fraction").result, "blur_fraction")
        median = named(WindowMedianOp(history).result, "sharpness_median")
        relative = named(arith.MulfOp(fraction, median).result, "relative_threshold")
        threshold = named(arith.MaximumfOp(absolute, relative).result, "threshold")
        blurred = named(arith.CmpfOp(sharpness, threshold, "olt").result, "blurred")
        branch = scf.IfOp(blurred, [map_t], Region(Block()), Region(Block()))
        score = named(branch.results[0], "score")
        UpdateStateOp("prev_gray", gray)
        UpdateStateOp("prev_score", score)
        UpdateStateOp("sharpness_history", named(WindowPushOp(history, sharpness).result, "new_history"))
        encoded = named(EncoderOp(frame, score, block=block, crop=crop).result, "encoded")
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
    verify_located(module)
    return module


SCENE_ONLY = """
func.func @scene(%frame: tensor<{h}x{w}x3xui8>) -> f32 {{
  %gray = cortex.gray %frame : tensor<{h}x{w}x3xui8> -> tensor<{h}x{w}xf32>
  %prev_gray = cortex.state "prev_gray" : tensor<{h}x{w}xf32>
  %scene = cortex.scene_change %gray, %prev_gray : (tensor<{h}x{w}xf32>, tensor<{h}x{w}xf32>) -> f32
  cortex.update_state "prev_gray" = %gray : tensor<{h}x{w}xf32>
  func.return %scene : f32
}}"""
"""Scene change alone (and the gray it reads) with its delayed input, as the L2 pipeline has it; `SCENE_ONLY.format(h=..., w=...)`:
the benchmarks' scene-change tables and the NumPy emitter's memory test read it."""
