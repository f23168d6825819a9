"""Reference kernels of the vision stages: the meaning of each op, in NumPy/OpenCV.

One function per op, written from the op's docstring (docs/dialects/cortex.md). Operands come in the
op's operand order, properties as keyword arguments named as the op's
properties (so `fn(*operands, **op_params(op))` works); the defaults are
the op definitions'. Map results are float32 arrays; f32 scalar results are Python
floats holding a float32 value. Constant folding, the reference
interpreter and the compiled backend's extern table all call these, so
they are the one place where a stage's semantics live.

Intermediates that suffer from cancellation (variances, SSIM moments, the
spectral residual) are computed in float64 and rounded to float32 once at
the end: this is the ground truth the compiled code is compared against.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import cv2
import numpy as np

from cortex.errors import CortexError
from cortex.semantics import defaults as D
from cortex.semantics.kernel_table import kernel

F32 = np.float32

# ITU-R BT.601 luma weights, in the frame's BGR channel order.
GRAY_WEIGHTS_BGR = (F32(0.114), F32(0.587), F32(0.299))

SSIM_WINDOW = (D.SSIM_KSIZE, D.SSIM_KSIZE)
SSIM_SIGMA = D.SSIM_SIGMA
SSIM_C1 = (0.01 * 255) ** 2
SSIM_C2 = (0.03 * 255) ** 2

SALIENCY_EPS = 1e-9
ENCODER_BLUR_KSIZE = (9, 9)


def f32_scalar(value: float) -> float:
    """A Python float holding the float32 rounding of `value` (an f32 scalar result)."""
    return float(F32(value))


def block_grid(shape: Sequence[int], block: int) -> tuple[int, int]:
    h, w = shape[0], shape[1]
    if block <= 0 or h % block or w % block:
        raise CortexError(f"image of size {h}x{w} is not a whole number of {block}x{block} blocks")
    return h // block, w // block


def block_mean(image: np.ndarray, block: int, dtype=np.float64) -> np.ndarray:
    """Mean over each `block`×`block` cell of a 2-D image (accumulated in `dtype`)."""
    gh, gw = block_grid(image.shape, block)
    return image.reshape(gh, block, gw, block).mean(axis=(1, 3), dtype=dtype)


@kernel("cortex.gray")
def gray(frame: np.ndarray) -> np.ndarray:
    """Y = 0.114·B + 0.587·G + 0.299·R of a BGR uint8 frame, in float32."""
    b, g, r = (frame[..., c].astype(F32) for c in range(3))
    wb, wg, wr = GRAY_WEIGHTS_BGR
    y = b * wb
    y += g * wg
    y += r * wr
    return y


@kernel("cortex.blur_detector")
def blur_detector(gray: np.ndarray) -> float:
    """Sharpness: variance of the 3×3 Laplacian [[0,1,0],[1,-4,1],[0,1,0]], reflect-101 border.

    `cv2.Laplacian` with ksize=1 applies exactly that kernel; working in
    float64 (OpenCV 5 has no f32 → f64 Laplacian) keeps the variance free of
    float32 cancellation. `cv2.meanStdDev` takes the variance in one pass
    (E[x²] − mean², in float64: the Laplacian's mean is near 0, so nothing
    cancels), where `ndarray.var` makes two and a temporary of the image's
    size (nearly twice as slow at 1088×1920: benchmarks/README.md).
    """
    lap = cv2.Laplacian(np.asarray(gray, np.float64), cv2.CV_64F, ksize=1, borderType=cv2.BORDER_REFLECT_101)
    _, std = cv2.meanStdDev(lap)
    return f32_scalar(float(std[0, 0]) ** 2)


def _gauss11(image: np.ndarray) -> np.ndarray:
    return cv2.GaussianBlur(image, SSIM_WINDOW, SSIM_SIGMA, sigmaY=SSIM_SIGMA, borderType=cv2.BORDER_REFLECT_101)


STACK_CHANNELS = 4
"""At most this many images go into one multi-channel `cv2.GaussianBlur` call (OpenCV's
separable filters take up to CV_CN_MAX channels; benchmarks/bench_schedule.py measured where
stacking pays)."""


@kernel("cortex.gaussian_blur")
def gaussian_blur(*images, ksize: int = D.SSIM_KSIZE, sigma: float = D.SSIM_SIGMA):
    """Each image blurred by a ksize×ksize Gaussian (σ = sigma both ways, reflect-101), in its own dtype.

    One image: its blur. Several (operator stacking): a tuple of their blurs,
    computed as multi-channel calls of up to STACK_CHANNELS images. OpenCV filters
    each channel with the same taps, but its vectorised multi-channel path rounds
    a few pixels differently (last bit; measured: 39 of ~10⁷ float64 pixels), so
    stacking is exact only up to rounding: `cortex-stack-stencils` is not in
    compile's default passes. The reference interpreter passes the variadic
    operand group as one list, a compiled extern call its operands one by one:
    both are accepted.
    """
    if len(images) == 1 and isinstance(images[0], list):
        images = tuple(images[0])
    k, s = (int(ksize), int(ksize)), float(sigma)

    def blur(image: np.ndarray) -> np.ndarray:
        return cv2.GaussianBlur(image, k, s, sigmaY=s, borderType=cv2.BORDER_REFLECT_101)

    if len(images) == 1:
        return blur(np.asarray(images[0]))
    out: list[np.ndarray] = []
    for start in range(0, len(images), STACK_CHANNELS):
        group = images[start : start + STACK_CHANNELS]
        if len(group) == 1:
            out.append(blur(np.asarray(group[0])))
            continue
        stacked = blur(np.dstack(group))
        out.extend(np.ascontiguousarray(stacked[..., c]) for c in range(len(group)))
    return tuple(out)


@kernel("cortex.scene_change")
def scene_change(gray: np.ndarray, prev_gray: np.ndarray) -> float:
    """1 − mean SSIM over the whole image (Gaussian 11×11, σ=1.5, reflect-101, no cropping)."""
    x = np.asarray(gray, np.float64)
    y = np.asarray(prev_gray, np.float64)
    mu_x, mu_y = _gauss11(x), _gauss11(y)
    mu_xy = mu_x * mu_y
    mu_sq = np.square(mu_x, out=mu_x)  # μx² + μy², built in place (the frames are large)
    mu_sq += np.square(mu_y, out=mu_y)
    var_sum = _gauss11(np.square(x)) + _gauss11(np.square(y)) - mu_sq  # σx² + σy²
    cov = _gauss11(np.multiply(x, y)) - mu_xy  # σxy
    numerator = (2.0 * mu_xy + SSIM_C1) * (2.0 * cov + SSIM_C2)
    denominator = (mu_sq + SSIM_C1) * (var_sum + SSIM_C2)
    return f32_scalar(1.0 - (numerator / denominator).mean())


@kernel("cortex.center_crop")
def center_crop(gray: np.ndarray, *, block: int = D.BLOCK, sigma: float = D.CENTER_SIGMA) -> np.ndarray:
    """Centre prior: cell (i, j) at y=(i+.5)/Gh, x=(j+.5)/Gw gets exp(−((x−.5)²+(y−.5)²)/(2σ²))."""
    gh, gw = block_grid(gray.shape, block)
    y = (np.arange(gh, dtype=np.float64) + 0.5) / gh
    x = (np.arange(gw, dtype=np.float64) + 0.5) / gw
    d2 = (x[None, :] - 0.5) ** 2 + (y[:, None] - 0.5) ** 2
    return np.exp(-d2 / (2.0 * sigma * sigma)).astype(F32)


def to_uint8(gray: np.ndarray) -> np.ndarray:
    """The gray image rounded (half to even) and clipped to uint8."""
    return np.clip(np.rint(gray), 0, 255).astype(np.uint8)


_DETECTORS = threading.local()


def _mser(delta: int, min_area: int, max_area: int):
    """This thread's MSER detector for these parameters, kept between calls.

    A detector keeps its per-pixel work buffers from one image to the next; a
    new one per call allocates them again, and at 1088×1920 glibc hands them
    back to the OS in between: ~27,000 zero-filled pages a frame. One per
    thread: a detector is not safe to share between concurrent calls.
    """
    detectors = _DETECTORS.__dict__.setdefault("mser", {})
    key = (delta, min_area, max_area)
    if key not in detectors:
        detectors[key] = cv2.MSER_create(  # type: ignore[attr-defined]
            delta=delta, min_area=min_area, max_area=max_area, max_variation=0.25, min_diversity=0.0
        )
    return detectors[key]


@kernel("cortex.text_roi")
def text_roi(
    gray: np.ndarray, *, block: int = D.BLOCK, delta: int = D.MSER_DELTA, min_area: int = D.MSER_MIN_AREA, max_area: int = D.MSER_MAX_AREA
) -> np.ndarray:
    """Per block, the fraction of its pixels covered by the union of the MSER regions.

    min_diversity=0.0: OpenCV 5.0's default drops stable regions.
    """
    block_grid(gray.shape, block)
    regions, _ = _mser(int(delta), int(min_area), int(max_area)).detectRegions(to_uint8(gray))
    mask = np.zeros(gray.shape[:2], np.uint8)
    if len(regions):
        points = np.concatenate(regions)  # each region: N×2 (x, y) pixel coordinates
        mask[points[:, 1], points[:, 0]] = 1
    return block_mean(mask, block).astype(F32)


def gaussian_taps(size: int = 5, sigma: float = 1.0) -> np.ndarray:
    """Normalised 1-D Gaussian taps exp(−k²/(2σ²)), k = −size//2 … size//2."""
    k = np.arange(size, dtype=np.float64) - size // 2
    taps = np.exp(-(k * k) / (2.0 * sigma * sigma))
    return taps / taps.sum()


def separable_filter_edge(image: np.ndarray, taps: np.ndarray) -> np.ndarray:
    """Correlate rows then columns with symmetric `taps`, edges replicated."""
    r = len(taps) // 2
    p = np.pad(image, r, mode="edge")
    h, w = image.shape
    rows = sum(t * p[:, i : i + w] for i, t in enumerate(taps))
    return sum(t * rows[i : i + h, :] for i, t in enumerate(taps))


@kernel("cortex.saliency_dft")
def saliency_dft(gray: np.ndarray, *, block: int = D.BLOCK, scale: int = D.SALIENCY_SCALE) -> np.ndarray:
    """Spectral-residual saliency (Hou & Zhang 2007), step by step as the op's docstring writes it."""
    if block % scale:
        raise CortexError(f"saliency_dft: block ({block}) must be a multiple of scale ({scale})")
    block_grid(gray.shape, block)
    small = block_mean(np.asarray(gray, F32), scale)  # average-pool by `scale` (float64)
    spectrum = np.fft.fft2(small)
    log_amplitude = np.log(np.abs(spectrum) + SALIENCY_EPS)
    box = np.full(3, 1.0 / 3.0)
    residual = log_amplitude - separable_filter_edge(log_amplitude, box)
    saliency = np.abs(np.fft.ifft2(np.exp(residual + 1j * np.angle(spectrum)))) ** 2
    saliency = separable_filter_edge(saliency, gaussian_taps(5, 1.0))
    peak = saliency.max()
    if peak > 0:
        saliency /= peak
    return block_mean(saliency, block // scale).astype(F32)


@kernel("cortex.motion_map")
def motion_map(gray: np.ndarray, prev_gray: np.ndarray, *, block: int = D.BLOCK) -> np.ndarray:
    """Mean over each block of abs(gray − prev_gray)/255."""
    diff = np.abs(np.subtract(gray, prev_gray, dtype=F32))
    return (block_mean(diff, block) / 255.0).astype(F32)


@kernel("cortex.score_fusion")
def score_fusion(maps: Sequence[np.ndarray], weights: Sequence[float], *, terms: Sequence[str] = ()) -> np.ndarray:
    """S = Σ wᵢ·mapᵢ in float32 (`terms` only names the maps)."""
    if not maps or len(maps) != len(weights):
        raise CortexError(
            f"score_fusion needs as many weights as maps, got {len(maps)} maps and {len(weights)} weights"
        )
    total = np.multiply(maps[0], F32(weights[0]), dtype=F32)
    for m, w in zip(maps[1:], weights[1:]):
        total += np.multiply(m, F32(w), dtype=F32)
    return total


@kernel("cortex.temporal_smooth")
def temporal_smooth(
    score: np.ndarray, prev_score: np.ndarray, scene: float, *, alpha: float = D.SMOOTH_ALPHA, reset_threshold: float = D.SMOOTH_RESET_THRESHOLD
) -> np.ndarray:
    """scene > reset_threshold ? score : alpha·prev_score + (1−alpha)·score."""
    if scene > reset_threshold:
        return np.array(score, dtype=F32)
    smoothed = F32(alpha) * np.asarray(prev_score, F32) + F32(1.0 - alpha) * np.asarray(score, F32)
    return smoothed.astype(F32, copy=False)


def low_score_mask(score: np.ndarray, threshold: float) -> np.ndarray:
    """Blocks whose score < threshold·max(score); none when the max is 0."""
    peak = float(np.max(score))
    if peak == 0.0:
        return np.zeros(score.shape, bool)
    return score < F32(threshold) * F32(peak)


@kernel("cortex.pad_frame")
def pad_frame(frame: np.ndarray, *, block: int = D.BLOCK) -> np.ndarray:
    """`frame` edge-replicated at the bottom and right to the next multiples of `block` (OpenCV's
    `BORDER_REPLICATE`); the frame itself when its sides are multiples already."""
    if block <= 0:
        raise CortexError(f"pad_frame: block must be positive, got {block}")
    h, w = frame.shape[0], frame.shape[1]
    bottom, right = -h % block, -w % block
    if bottom == 0 and right == 0:
        return frame
    return cv2.copyMakeBorder(np.ascontiguousarray(frame), 0, bottom, 0, right, cv2.BORDER_REPLICATE)


@kernel("cortex.encoder")
def encoder(
    frame: np.ndarray,
    score: np.ndarray,
    *,
    block: int = D.BLOCK,
    threshold: float = D.ENCODER_THRESHOLD,
    quality: int = D.ENCODER_QUALITY,
    crop: tuple[int, int] | None = None,
) -> np.ndarray:
    """ROI-aware JPEG: low-score blocks take the 9×9-Gaussian-blurred pixels; 1-D uint8 bytes.

    `crop` (height, width): the frame was padded to a multiple of `block`;
    the JPEG shows only the video's own top-left height×width pixels.
    """
    gh, gw = block_grid(frame.shape, block)
    if score.shape != (gh, gw):
        raise CortexError(f"encoder: score of shape {score.shape} does not cover the {gh}x{gw} block grid")
    low = low_score_mask(score, threshold)
    image = frame
    if low.any():
        blurred = cv2.GaussianBlur(frame, ENCODER_BLUR_KSIZE, 0)
        image = np.array(frame, order="C")
        # the low blocks copied block by block through (gh, gw, block, block, ...) views, an order of magnitude
        # faster than a per-pixel np.where over the repeated mask (same bytes; benchmarks/README.md)
        cells = (gh, block, gw, block, *frame.shape[2:])
        image.reshape(cells).swapaxes(1, 2)[low] = np.asarray(blurred).reshape(cells).swapaxes(1, 2)[low]
    if crop is not None:
        image = image[: crop[0], : crop[1]]
    ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray(image), [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
    if not ok:
        raise CortexError(f"encoder: JPEG encoding of a {frame.shape} frame failed")
    return encoded.reshape(-1)

