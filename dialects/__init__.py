"""IRDL definitions of the cortex dialect: the reference in docs/dialects/ is generated from them."""

from cortex.dialects import xdsl_patches
from cortex.dialects.cortex import ALL_OPS, Cortex
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.dialects.traits import Compilable, External, FrameBoundary, is_compilable, op_kind
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

xdsl_patches.install()  # before any op is built: ImplicitBuilder safe across threads, is_splat by bits

__all__ = [
    "ALL_OPS",
    "BlurDetectorOp",
    "CenterCropOp",
    "Compilable",
    "Cortex",
    "EncoderOp",
    "External",
    "FrameBoundary",
    "GrayOp",
    "MotionMapOp",
    "PadFrameOp",
    "SaliencyDftOp",
    "SceneChangeOp",
    "ScoreFusionOp",
    "StateOp",
    "TemporalSmoothOp",
    "TextRoiOp",
    "UpdateStateOp",
    "WeightOp",
    "WindowMedianOp",
    "WindowPushOp",
    "is_compilable",
    "op_kind",
]
