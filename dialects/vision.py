"""The vision stages of the L2 pipeline.

Semantics live in the reference kernels (`cortex.semantics.kernels`); these
classes state operands, properties with their defaults, typing rules and
whether the stage is compilable or an OpenCV extern.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    ArrayAttr,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import (
    CortexOp,
    f32_attr,
    f32_scalar,
    frame_image,
    gray_image,
    i64_array,
    i64_attr,
    shape_of,
    tensor,
    ui8,
)
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.traits import Compilable, External
from cortex.semantics import defaults as D

UNARY_FORMAT = "$gray attr-dict `:` type($gray) `->` type($result)"
BINARY_FORMAT = "$gray `,` $prev_gray attr-dict `:` `(` type($gray) `,` type($prev_gray) `)` `->` type($result)"


def positive(op: CortexOp, *names: str) -> None:
    for name in names:
        attr = op.properties[name]
        value = attr.value.data if isinstance(attr, IntegerAttr | FloatAttr) else None
        if value is None or not value > 0:  # also rejects NaN
            raise VerifyException(f"property '{name}' must be positive, got {value}")


def map_type(op: CortexOp, h: int, w: int) -> TensorType:
    block = op.properties["block"]
    assert isinstance(block, IntegerAttr), "prop_def(IntegerAttr) checked it"
    return tensor(shapes.block_grid(h, w, block.value.data))


def same_image(op: CortexOp, a: SSAValue, b: SSAValue) -> None:
    if not shapes.shapes_agree(shape_of(a, "gray"), shape_of(b, "prev_gray")):
        raise VerifyException(f"gray and prev_gray must have the same shape, got {a.type} and {b.type}")


@irdl_op_definition
class GrayOp(CortexOp):
    """BGR uint8 frame → float32 luma, Y = 0.114·B + 0.587·G + 0.299·R.

    Frames are `tensor<H×W×3×ui8>` in OpenCV's BGR order; the result is an H×W float32 image in [0, 255].
    """

    name = "cortex.gray"
    frame = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    assembly_format = "$frame attr-dict `:` type($frame) `->` type($result)"

    def __init__(self, frame: SSAValue):
        super().__init__(operands=[frame])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        return [tensor(frame_image(self.frame))]


@irdl_op_definition
class BlurDetectorOp(CortexOp):
    """Sharpness: variance of the 3×3 Laplacian (OpenCV).

    The variance of the 3×3 Laplacian ([[0,1,0],[1,-4,1],[0,1,0]], border reflect-101) over the whole
    image, as an f32 scalar. External: kept as a call to an OpenCV-backed extern.
    """

    name = "cortex.blur_detector"
    gray = operand_def(TensorType)
    result = result_def(Float32Type)
    traits = traits_def(Pure(), External(), CortexCanonicalization())
    assembly_format = UNARY_FORMAT

    def __init__(self, gray: SSAValue):
        super().__init__(operands=[gray])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        gray_image(self.gray)
        return [f32]


@irdl_op_definition
class SceneChangeOp(CortexOp):
    """1 − mean SSIM of the two images (OpenCV Gaussian window).

    1 − mean SSIM over the whole image: Gaussian 11×11 window, σ = 1.5, OpenCV's default border
    reflect-101, no cropping; C1 = (0.01·255)², C2 = (0.03·255)². External (OpenCV).
    """

    name = "cortex.scene_change"
    gray = operand_def(TensorType)
    prev_gray = operand_def(TensorType)
    result = result_def(Float32Type)
    traits = traits_def(Pure(), External(), CortexCanonicalization())
    assembly_format = BINARY_FORMAT

    def __init__(self, gray: SSAValue, prev_gray: SSAValue):
        super().__init__(operands=[gray, prev_gray])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        gray_image(self.gray)
        gray_image(self.prev_gray, "prev_gray")
        same_image(self, self.gray, self.prev_gray)
        return [f32]


@irdl_op_definition
class CenterCropOp(CortexOp):
    """Centre prior on the block grid; depends on the shape alone.

    Cell (i, j) of the (H/block)×(W/block) grid, with centre y = (i+0.5)/Gh, x = (j+0.5)/Gw, holds
    exp(−((x−0.5)² + (y−0.5)²) / (2σ²)). Reads only its operand's shape, so it folds to a constant.
    """

    name = "cortex.center_crop"
    gray = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    sigma = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.CENTER_SIGMA))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, gray: SSAValue, block: int = D.BLOCK, sigma: float = D.CENTER_SIGMA):
        super().__init__(
            operands=[gray],
            properties={"block": i64_attr(block), "sigma": f32_attr(sigma)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block", "sigma")
        return [map_type(self, *gray_image(self.gray))]


@irdl_op_definition
class TextRoiOp(CortexOp):
    """Fraction of each block covered by MSER regions (OpenCV).

    MSER regions of the gray image (rounded and clipped to uint8) with max_variation = 0.25 and
    min_diversity = 0.0 (OpenCV 5.0's default drops stable regions); per block, the
    fraction of its pixels covered by the union of the regions. External (OpenCV).
    """

    name = "cortex.text_roi"
    gray = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    delta = prop_def(IntegerAttr[I64], default_value=i64_attr(D.MSER_DELTA))
    min_area = prop_def(IntegerAttr[I64], default_value=i64_attr(D.MSER_MIN_AREA))
    max_area = prop_def(IntegerAttr[I64], default_value=i64_attr(D.MSER_MAX_AREA))
    result = result_def(TensorType)
    traits = traits_def(Pure(), External(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, gray: SSAValue, block: int = D.BLOCK, delta: int = D.MSER_DELTA, min_area: int = D.MSER_MIN_AREA, max_area: int = D.MSER_MAX_AREA):
        super().__init__(
            operands=[gray],
            properties={
                "block": i64_attr(block),
                "delta": i64_attr(delta),
                "min_area": i64_attr(min_area),
                "max_area": i64_attr(max_area),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block", "delta", "min_area", "max_area")
        if self.min_area.value.data > self.max_area.value.data:
            raise VerifyException(
                f"min_area ({self.min_area.value.data}) must not exceed max_area ({self.max_area.value.data})"
            )
        return [map_type(self, *gray_image(self.gray))]


@irdl_op_definition
class SaliencyDftOp(CortexOp):
    """Spectral-residual saliency (Hou & Zhang 2007) on the block grid.

    Average-pool by `scale`; F = DFT2; L = log(|F| + 1e-9); R = L − box3×3(L) (edge-replicated);
    S = |IDFT2(exp(R + i·angle(F)))|²; 5×5 Gaussian σ = 1 (edge-replicated); divide by max (if > 0);
    average-pool to the block grid.
    """

    name = "cortex.saliency_dft"
    gray = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    scale = prop_def(IntegerAttr[I64], default_value=i64_attr(D.SALIENCY_SCALE))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = UNARY_FORMAT

    def __init__(self, gray: SSAValue, block: int = D.BLOCK, scale: int = D.SALIENCY_SCALE):
        super().__init__(
            operands=[gray],
            properties={"block": i64_attr(block), "scale": i64_attr(scale)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block", "scale")
        block, scale = self.block.value.data, self.scale.value.data
        if block % scale:
            raise VerifyException(f"block ({block}) must be a multiple of scale ({scale})")
        return [map_type(self, *gray_image(self.gray))]


@irdl_op_definition
class MotionMapOp(CortexOp):
    """Mean absolute frame difference per block, scaled to [0, 1].

    Mean over each block×block cell of |gray − prev_gray| / 255.
    """

    name = "cortex.motion_map"
    gray = operand_def(TensorType)
    prev_gray = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = BINARY_FORMAT

    def __init__(self, gray: SSAValue, prev_gray: SSAValue, block: int = D.BLOCK):
        super().__init__(
            operands=[gray, prev_gray],
            properties={"block": i64_attr(block)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block")
        h, w = gray_image(self.gray)
        gray_image(self.prev_gray, "prev_gray")
        same_image(self, self.gray, self.prev_gray)
        return [map_type(self, h, w)]


@irdl_op_definition
class ScoreFusionOp(CortexOp):
    """S = Σ wᵢ·mapᵢ; `terms` names the stage that produced each map.

    The weights are f32 scalars (often `cortex.weight`s, constants after mode specialisation); `terms`
    holds the producing stages' names, e.g. ["center_crop", "text_roi", "saliency_dft", "motion_map"].
    """

    name = "cortex.score_fusion"
    maps = var_operand_def(TensorType)
    weights = var_operand_def(Float32Type)
    terms = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = (
        "`(` $maps `)` `weights` `(` $weights `)` attr-dict `:` type($maps) `->` type($result)"
    )

    def __init__(self, maps: Sequence[SSAValue], weights: Sequence[SSAValue], terms: Sequence[str]):
        super().__init__(
            operands=[list(maps), list(weights)],
            properties={"terms": ArrayAttr([StringAttr(t) for t in terms])},
        )

    @property
    def term_names(self) -> tuple[str, ...]:
        return tuple(t.data for t in self.terms.data)

    def verify_(self) -> None:
        super().verify_()
        self.verify_terms()

    def verify_terms(self) -> None:
        """Each term names the stage whose map it weighs: a map made by a scoring stage (`MAP_STAGES`)
        must be called by that stage's name, so a typo ("text_rio") or a swapped pair fails here,
        not silently in a report. Maps made otherwise (arguments, arithmetic, a stage folded to a
        constant by canonicalize) keep whatever name they were given."""
        for i, (term, m) in enumerate(zip(self.term_names, self.maps)):
            owner = m.owner
            made_by = owner.name.removeprefix("cortex.") if isinstance(owner, Operation) else None
            if made_by in MAP_STAGES and term != made_by:
                raise VerifyException(
                    f"term #{i} is '{term}', but its map is made by cortex.{made_by}: the term must be '{made_by}' "
                    f"(terms name the scoring stages: {', '.join(sorted(MAP_STAGES))})"
                )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        n_terms, n_maps, n_weights = len(self.terms.data), len(self.maps), len(self.weights)
        if n_terms == 0:
            raise VerifyException("score_fusion needs at least one term")
        if not n_terms == n_maps == n_weights:
            raise VerifyException(
                f"score_fusion has {n_terms} terms, {n_maps} maps and {n_weights} weights; "
                "the three counts must be equal"
            )
        first = self.maps[0].type
        for i, m in enumerate(self.maps):
            gray_image(m, f"map #{i}")
            if not shapes.shapes_agree(shape_of(m, f"map #{i}"), shape_of(first, "map #0")):
                raise VerifyException(f"all maps must have one shape: map #{i} is {m.type}, map #0 is {first}")
        return [first]


MAP_STAGES = frozenset({"center_crop", "text_roi", "saliency_dft", "motion_map"})
"""The scoring stages: ops that make a score map from a frame (what `score_fusion`'s terms name)."""


@irdl_op_definition
class TemporalSmoothOp(CortexOp):
    """Exponential smoothing of the score map, reset on a scene change.

    scene > reset_threshold ? score : alpha·prev_score + (1 − alpha)·score.
    """

    name = "cortex.temporal_smooth"
    score = operand_def(TensorType)
    prev_score = operand_def(TensorType)
    scene = operand_def(Float32Type)
    alpha = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.SMOOTH_ALPHA))
    reset_threshold = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.SMOOTH_RESET_THRESHOLD))
    result = result_def(TensorType)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$score `,` $prev_score `,` $scene attr-dict `:` "
        "`(` type($score) `,` type($prev_score) `,` type($scene) `)` `->` type($result)"
    )

    def __init__(self, score: SSAValue, prev_score: SSAValue, scene: SSAValue, alpha: float = D.SMOOTH_ALPHA, reset_threshold: float = D.SMOOTH_RESET_THRESHOLD):
        super().__init__(
            operands=[score, prev_score, scene],
            properties={"alpha": f32_attr(alpha), "reset_threshold": f32_attr(reset_threshold)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        alpha = self.alpha.value.data
        if not 0.0 <= alpha <= 1.0:
            raise VerifyException(f"alpha must lie in [0, 1], got {alpha}")
        gray_image(self.score, "score")
        gray_image(self.prev_score, "prev_score")
        if not shapes.shapes_agree(shape_of(self.score, "score"), shape_of(self.prev_score, "prev_score")):
            raise VerifyException(
                f"score and prev_score must have the same shape, got {self.score.type} and {self.prev_score.type}"
            )
        f32_scalar(self.scene, "scene")
        return [self.score.type]


@irdl_op_definition
class PadFrameOp(CortexOp):
    """A frame edge-replicated at the bottom and right to the next multiples of `block` (OpenCV).

    An H×W×3 frame becomes ⌈H/block⌉·block × ⌈W/block⌉·block × 3: the last row is repeated downwards
    and the last column rightwards (`cv2.copyMakeBorder`, `BORDER_REPLICATE`), so a score grid over it
    has one cell per started block. A frame whose sides are already multiples comes back unchanged.
    `cortex-pad-frames` inserts it when a pipeline is bound to frames of any size (the encoder then
    crops back to H×W). External (OpenCV).
    """

    name = "cortex.pad_frame"
    frame = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    result = result_def(TensorType)
    traits = traits_def(Pure(), External(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$frame attr-dict `:` type($frame) `->` type($result)"

    def __init__(self, frame: SSAValue, block: int = D.BLOCK):
        super().__init__(operands=[frame], properties={"block": i64_attr(block)})

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block")
        h, w = frame_image(self.frame)
        return [tensor((*shapes.padded_to_block(h, w, self.block.value.data), 3), ui8)]


@irdl_op_definition
class EncoderOp(CortexOp):
    """ROI-aware JPEG encoding: low-score blocks are blurred first (OpenCV).

    The frame is Gaussian-blurred once (`cv2.GaussianBlur(frame, (9, 9), 0)`); every block whose score
    is below threshold · max(score) takes the blurred pixels (none when the max is 0); the result is
    JPEG-encoded at `quality`. `crop` (height, width) cuts a padded frame back to the video's size
    before encoding. External (OpenCV).
    """

    name = "cortex.encoder"
    frame = operand_def(TensorType)
    score = operand_def(TensorType)
    block = prop_def(IntegerAttr[I64], default_value=i64_attr(D.BLOCK))
    threshold = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.ENCODER_THRESHOLD))
    quality = prop_def(IntegerAttr[I64], default_value=i64_attr(D.ENCODER_QUALITY))
    crop = opt_prop_def(DenseArrayBase[I64])
    """(height, width) of the video's own frames, when the pipeline runs on frames
    padded to a multiple of `block`: the encoder crops back to it. Absent: no crop."""
    result = result_def(TensorType)
    traits = traits_def(External(), CortexCanonicalization(), Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = (
        "$frame `,` $score attr-dict `:` `(` type($frame) `,` type($score) `)` `->` type($result)"
    )

    def __init__(
        self,
        frame: SSAValue,
        score: SSAValue,
        block: int = D.BLOCK,
        threshold: float = D.ENCODER_THRESHOLD,
        quality: int = D.ENCODER_QUALITY,
        crop: Sequence[int] | None = None,
    ):
        properties: dict[str, Attribute] = {"block": i64_attr(block), "threshold": f32_attr(threshold), "quality": i64_attr(quality)}
        if crop is not None:
            properties["crop"] = i64_array(crop)
        super().__init__(
            operands=[frame, score], properties=properties
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        positive(self, "block")
        quality = self.quality.value.data
        if not 0 <= quality <= 100:
            raise VerifyException(f"quality must lie in [0, 100], got {quality}")
        h, w = frame_image(self.frame)
        grid = map_type(self, h, w)
        if self.crop is not None:
            crop = tuple(self.crop.get_values())
            if len(crop) != 2 or not all(0 < c for c in crop) or any(
                size != shapes.DYNAMIC and c > size for c, size in zip(crop, (h, w))
            ):
                raise VerifyException(
                    f"crop must be (height, width) within the {shapes.fmt((h, w))} frame, got {list(crop)}"
                )
        gray_image(self.score, "score")
        if not shapes.shapes_agree(shape_of(self.score, "score"), grid.get_shape()):
            raise VerifyException(f"score must cover the block grid of the frame ({grid}), got {self.score.type}")
        return [tensor((shapes.DYNAMIC,), ui8)]


VISION_OPS: list[type[IRDLOperation]] = [
    GrayOp,
    BlurDetectorOp,
    SceneChangeOp,
    CenterCropOp,
    TextRoiOp,
    SaliencyDftOp,
    MotionMapOp,
    ScoreFusionOp,
    TemporalSmoothOp,
    PadFrameOp,
    EncoderOp,
]
