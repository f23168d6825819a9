"""Image stencils bound to OpenCV: what a high-level stage decomposes into.

`cortex.gaussian_blur` is the separable Gaussian filter (OpenCV's
`GaussianBlur`, reflect-101 border) that `cortex.scene_change` applies five
times. Written as its own op, the compiler sees each blur: temporal reuse can
carry one across frames, operator stacking can merge several into one
multi-channel call (the op is variadic: N same-typed images in, their N
blurs out, one OpenCV call), and precision rewrites can change its element
type. Semantics live in the reference kernel
(`cortex.semantics.vision_kernels.gaussian_blur`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, Float32Type, Float64Type, FloatAttr, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, f32_attr, i64_attr
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.traits import External
from cortex.semantics import defaults as D


def blur_image(value: SSAValue, what: str) -> TensorType:
    """An H×W f32 or f64 image (static sides within the frame limits), or a VerifyException."""
    t = value.type
    if not (isinstance(t, TensorType) and t.get_num_dims() == 2 and isinstance(t.element_type, Float32Type | Float64Type)):
        raise VerifyException(f"{what} must be a 2-D f32 or f64 tensor (H x W), got {t}")
    h, w = t.get_shape()
    shapes.check_image_side("H", h)
    shapes.check_image_side("W", w)
    return t


@irdl_op_definition
class GaussianBlurOp(CortexOp):
    """Gaussian blur of each image: `ksize`×`ksize` window, standard deviation `sigma` in both
    directions, reflect-101 border, in the images' own element type (OpenCV `GaussianBlur`).

    Variadic: N images of one type in, their N blurs out, in order. N = 1 is the
    plain stencil; N > 1 is what operator stacking (`cortex-stack-stencils`)
    makes of N independent blurs, which the kernel runs as one N-channel call
    where OpenCV supports it. The results equal N separate calls up to the last
    bit of a few pixels (OpenCV's multi-channel path rounds differently).

        %b = cortex.gaussian_blur %x {ksize = 11 : i64, sigma = 1.5 : f32} : tensor<480x640xf64> -> tensor<480x640xf64>
        %b0, %b1 = cortex.gaussian_blur %x, %y : tensor<480x640xf64>, tensor<480x640xf64> -> tensor<480x640xf64>, tensor<480x640xf64>
    """

    name = "cortex.gaussian_blur"
    images = var_operand_def(TensorType)
    ksize = prop_def(IntegerAttr[I64], default_value=i64_attr(D.SSIM_KSIZE))
    sigma = prop_def(FloatAttr[Float32Type], default_value=f32_attr(D.SSIM_SIGMA))
    blurred = var_result_def(TensorType)
    traits = traits_def(Pure(), External(), CortexCanonicalization())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$images attr-dict `:` type($images) `->` type($blurred)"

    def __init__(self, images: Sequence[SSAValue], ksize: int = D.SSIM_KSIZE, sigma: float = D.SSIM_SIGMA):
        super().__init__(
            operands=[list(images)],
            result_types=[[v.type for v in images]],
            properties={"ksize": i64_attr(ksize), "sigma": f32_attr(sigma)},
        )

    def infer_result_types(self) -> Sequence[Attribute | None]:
        if not self.images:
            raise VerifyException("needs at least one image")
        if len(self.blurred) != len(self.images):
            raise VerifyException(f"needs one result per image, got {len(self.images)} images and {len(self.blurred)} results")
        ksize = self.ksize.value.data
        if ksize < 1 or ksize % 2 == 0:
            raise VerifyException(f"ksize must be a positive odd number, got {ksize}")
        sigma = self.sigma.value.data
        if not sigma > 0:  # also rejects NaN
            raise VerifyException(f"sigma must be positive, got {sigma}")
        first = blur_image(self.images[0], "image #0")
        for i, v in enumerate(self.images):
            if blur_image(v, f"image #{i}") != first:
                raise VerifyException(f"every image must have one type, got {first} and {v.type} (image #{i})")
        return [first] * len(self.images)


STENCIL_OPS = [GaussianBlurOp]

__all__ = ["STENCIL_OPS", "GaussianBlurOp", "blur_image"]
