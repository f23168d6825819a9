"""Every default property value of the cortex ops, and the constants of their formulas, named once.

The op definitions (`prop_def(default_value=...)`), their Python builders and
the reference kernels all read these (the op docstrings, rendered in docs/dialects/, say what they mean).
"""

from __future__ import annotations

import math

BLOCK = 32
"""Side of the square blocks of every score map (pixels)."""

CENTER_SIGMA = 0.3
"""center_crop: the Gaussian's sigma, as a fraction of the frame."""

MSER_DELTA = 5
MSER_MIN_AREA = 60
MSER_MAX_AREA = 14400
"""text_roi: OpenCV MSER parameters."""

SCENE_PRECISIONS = ("f64", "f32")
"""scene_change: the float types its decomposition computes in (`cortex-decompose-scene-change{precision=}`,
`CompileOptions.precision`); the first is the default."""

SSIM_KSIZE = 11
SSIM_SIGMA = 1.5
"""scene_change: side and sigma of SSIM's Gaussian window (cortex.gaussian_blur's defaults)."""

SALIENCY_SCALE = 8
"""saliency_dft: downscale factor of the spectral residual."""

SMOOTH_ALPHA = 0.6
SMOOTH_RESET_THRESHOLD = 0.5
"""temporal_smooth: weight of the new score, and the scene score that resets smoothing."""

ENCODER_THRESHOLD = 0.5
ENCODER_QUALITY = 85
"""encoder: blocks scoring under threshold × peak are blurred; JPEG quality."""

GELU_APPROXIMATE = "none"
BATCH_NORM_EPSILON = 1e-5
SOFTMAX_AXIS = -1
KEEPDIMS = 1
STRIDES = (1, 1)
PADS = (0, 0, 0, 0)
DILATIONS = (1, 1)
CONV_GROUP = 1
ZERO_POINT = 0  # quantisation: int8 zero point when none is given (symmetric)

GELU_TANH_K = 0.044715
"""The cubic coefficient of the tanh GELU: 0.5·x·(1 + tanh(√(2/π)·(x + k·x³)))."""
GELU_TANH_C = math.sqrt(2.0 / math.pi)
"""√(2/π), the tanh GELU's outer coefficient (0.7978845608 to 10 digits, as traced models write it)."""

Q_MIN, Q_MAX = -128, 127
"""The int8 range of quantised values (cortex.quantize and the q* ops)."""

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)
HWIO_TO_OIHW = (3, 2, 0, 1)
"""Axis permutations between the NCHW/OIHW and NHWC/HWIO layouts."""
