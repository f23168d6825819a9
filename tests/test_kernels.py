"""Every reference kernel against values worked out by hand on tiny inputs."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, f32

from cortex.dialects import ALL_OPS
from cortex.dialects.tensor_ops import ConstantOp
from cortex.errors import CortexError
from cortex.ir import parse
from cortex.semantics import tensor_kernels as tk
from cortex.semantics import vision_kernels as vk
from cortex.semantics.kernels import KERNELS, NO_KERNEL, run_kernel

F32 = np.float32


def arr(values, dtype=F32):
    return np.array(values, dtype=dtype)


def assert_f32(actual, expected, rtol=1e-6, atol=1e-6):
    assert isinstance(actual, np.ndarray) and actual.dtype == F32, f"got {type(actual)} {getattr(actual, 'dtype', '')}"
    np.testing.assert_allclose(actual, np.asarray(expected, np.float64), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- the table


def test_every_cortex_op_but_state_and_weight_has_a_kernel():
    names = {op.name for op in ALL_OPS}
    assert set(KERNELS) == names - NO_KERNEL
    assert NO_KERNEL <= names


# ---------------------------------------------------------------- vision kernels


def test_gray_of_known_pixels():
    frame = arr([[[10, 20, 30], [255, 0, 0]], [[0, 255, 0], [0, 0, 255]]], np.uint8)  # BGR
    # 0.114·B + 0.587·G + 0.299·R
    assert_f32(vk.gray(frame), [[1.14 + 11.74 + 8.97, 29.07], [149.685, 76.245]], rtol=1e-6)


def test_blur_detector_laplacian_variance_by_hand():
    img = arr([[0, 0, 0], [0, 9, 0], [0, 0, 0]])
    # Laplacian with reflect-101 borders: [[0,18,0],[18,-36,18],[0,18,0]];
    # mean 36/9 = 4, mean of squares 2592/9 = 288, variance 288 − 16 = 272.
    sharpness = vk.blur_detector(img)
    assert isinstance(sharpness, float)
    assert sharpness == pytest.approx(272.0, rel=1e-6)
    assert vk.blur_detector(np.full((8, 8), 77.0, F32)) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 40), st.integers(3, 40), st.sampled_from([1.0, 255.0, 1e4]), st.integers(0, 2**32 - 1))
def test_blur_detector_is_the_two_pass_variance_in_float32(h, w, scale, seed):
    """The one-pass variance (`cv2.meanStdDev`) is NumPy's two-pass one within a float32 ulp (equal in 3000 of
    3000 random images, measured); a flat image's is exactly 0."""
    rng = np.random.default_rng(seed)
    gray = (rng.random((h, w)) * scale).astype(F32)
    lap = cv2.Laplacian(gray.astype(np.float64), cv2.CV_64F, ksize=1, borderType=cv2.BORDER_REFLECT_101)
    assert vk.blur_detector(gray) == pytest.approx(F32(lap.var()), rel=2.0**-23, abs=0)
    assert vk.blur_detector(np.full((h, w), gray[0, 0], F32)) == 0.0


def test_scene_change_identical_images_is_zero():
    img = np.random.default_rng(0).uniform(0, 255, (24, 32)).astype(F32)
    assert vk.scene_change(img, img) == pytest.approx(0.0, abs=1e-6)


def test_scene_change_of_two_flat_images_by_hand():
    # Flat images: σ = 0, so SSIM = (2ab + C1) / (a² + b² + C1).
    c1 = (0.01 * 255) ** 2
    a, b = 100.0, 50.0
    expected = 1 - (2 * a * b + c1) / (a * a + b * b + c1)
    got = vk.scene_change(np.full((16, 16), a, F32), np.full((16, 16), b, F32))
    assert got == pytest.approx(expected, rel=1e-5)
    assert got == pytest.approx(0.2, abs=1e-3)


def test_scene_change_is_symmetric_and_grows_with_change():
    rng = np.random.default_rng(1)
    a = rng.uniform(0, 255, (32, 32)).astype(F32)
    small, big = a + rng.normal(0, 2, a.shape).astype(F32), rng.uniform(0, 255, a.shape).astype(F32)
    assert vk.scene_change(a, big) == pytest.approx(vk.scene_change(big, a), rel=1e-6)
    assert 0 < vk.scene_change(a, small) < vk.scene_change(a, big)


def test_center_crop_64x64_block_32():
    # Cells at x, y ∈ {0.25, 0.75}: exp(−(0.0625 + 0.0625) / (2·0.09)) = exp(−0.69444…).
    expected = math.exp(-0.125 / 0.18)
    assert_f32(vk.center_crop(np.zeros((64, 64), F32), block=32, sigma=0.3), [[expected] * 2] * 2)


def test_center_crop_odd_grid_has_its_peak_in_the_middle():
    out = vk.center_crop(np.zeros((96, 32), F32), block=32, sigma=0.5)
    # Cells at y ∈ {1/6, 1/2, 5/6}, x = 1/2.
    edge = math.exp(-((1 / 3) ** 2) / 0.5)
    assert_f32(out, [[edge], [1.0], [edge]])


def test_text_roi_covers_a_dark_square_exactly():
    img = np.full((128, 128), 255, F32)
    img[36:56, 70:90] = 0  # a 20×20 region (area 400) inside block (1, 2)
    img[80:84, 10:12] = 0  # 8 pixels: below min_area, ignored
    out = vk.text_roi(img, block=32)
    expected = np.zeros((4, 4))
    expected[1, 2] = 400 / 1024
    assert_f32(out, expected)


def test_text_roi_text_block_beats_empty_block():
    img = np.full((128, 128), 255, np.uint8)
    cv2.putText(img, "Ab", (66, 52), cv2.FONT_HERSHEY_SIMPLEX, 0.8, 0, 2)
    out = vk.text_roi(img.astype(F32), block=32)
    assert out.shape == (4, 4) and out.dtype == F32
    assert out[1, 2] > 0.1
    assert out[3, 0] == 0.0
    assert np.all((out >= 0) & (out <= 1))


def test_text_roi_rounds_and_clips_the_gray_image():
    img = np.full((128, 128), 300.0, F32)  # clips to 255
    img[36:56, 70:90] = -4.4  # rounds/clips to 0
    assert vk.text_roi(img, block=32)[1, 2] == pytest.approx(400 / 1024)


def test_saliency_of_a_black_image_by_hand():
    # F = 0 → L constant → R = 0 → S = |IDFT2(1)|² = a unit impulse at (0, 0).
    # The edge-replicated 5×5 Gaussian turns it into a_i·a_j, a_i = Σ_{k ≤ −i} g_k;
    # normalised by its max a_0², pooled over the 4×4 small pixels of cell (0, 0).
    g = np.exp(-np.arange(-2, 3) ** 2 / 2.0)
    g /= g.sum()
    a = [g[0] + g[1] + g[2], g[0] + g[1], g[0]]
    expected = np.zeros((2, 2))
    expected[0, 0] = sum(a) ** 2 / a[0] ** 2 / 16
    assert_f32(vk.saliency_dft(np.zeros((64, 64), F32), block=32, scale=8), expected, atol=1e-6)


def test_saliency_of_a_flat_image_is_uniform():
    # Only the DC term is non-zero, so the saliency is flat (normalised to 1).
    out = vk.saliency_dft(np.full((64, 96), 100.0, F32), block=32, scale=8)
    assert out.shape == (2, 3) and out.dtype == F32
    np.testing.assert_allclose(out, 1.0, atol=1e-4)


def test_saliency_finds_an_odd_patch_in_texture():
    rng = np.random.default_rng(1)
    img = (rng.random((256, 256)) * 20 + 100).astype(F32)
    img[150:170, 30:40] = 250
    out = vk.saliency_dft(img, block=32, scale=8)
    assert out.shape == (8, 8)
    assert np.unravel_index(np.argmax(out), out.shape) in {(4, 1), (5, 1)}
    assert out.max() <= 1.0


def test_saliency_rejects_a_block_that_is_not_a_multiple_of_scale():
    with pytest.raises(CortexError, match="multiple of scale"):
        vk.saliency_dft(np.zeros((60, 60), F32), block=30, scale=8)


def test_motion_map_of_two_tiny_images():
    prev = np.zeros((4, 4), F32)
    cur = np.zeros((4, 4), F32)
    cur[0:2, 0:2] = 255  # block (0, 0): mean 255 → 1
    cur[0, 3] = 51  # block (0, 1): 51/4/255 = 0.05
    prev[3, 3] = 102  # block (1, 1): |0 − 102|/4/255 = 0.1
    assert_f32(vk.motion_map(cur, prev, block=2), [[1.0, 0.05], [0.0, 0.1]])


def test_score_fusion_weighted_sum():
    maps = [arr([[1, 2], [3, 4]]), arr([[10, 0], [0, 10]])]
    out = vk.score_fusion(maps, [0.5, 0.25], terms=("a", "b"))
    assert_f32(out, [[3.0, 1.0], [1.5, 4.5]])


def test_temporal_smooth_resets_on_scene_change_only_above_threshold():
    score, prev = arr([[1.0, 0.0]]), arr([[0.0, 1.0]])
    assert_f32(vk.temporal_smooth(score, prev, 0.6, alpha=0.6, reset_threshold=0.5), [[1.0, 0.0]])
    # 0.6·prev + 0.4·score; a scene value equal to the threshold does not reset.
    assert_f32(vk.temporal_smooth(score, prev, 0.5, alpha=0.6, reset_threshold=0.5), [[0.4, 0.6]])


def test_encoder_output_decodes_to_the_frame():
    rng = np.random.default_rng(2)
    frame = rng.integers(0, 256, (64, 96, 3), dtype=np.uint8)
    encoded = vk.encoder(frame, arr([[1, 0, 1], [0, 1, 0]]), block=32, quality=90)
    assert encoded.dtype == np.uint8 and encoded.ndim == 1
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)
    assert decoded.shape == frame.shape


def test_encoder_blurs_exactly_the_low_score_blocks():
    rng = np.random.default_rng(3)
    frame = rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)
    score = arr([[1.0, 0.2], [0.5, 0.9]])  # threshold 0.5·max = 0.5: only (0, 1) is low
    expected = frame.copy()
    expected[0:32, 32:64] = cv2.GaussianBlur(frame, (9, 9), 0)[0:32, 32:64]
    _, reference = cv2.imencode(".jpg", expected, [cv2.IMWRITE_JPEG_QUALITY, 85])
    out = vk.encoder(frame, score, block=32, threshold=0.5, quality=85)
    np.testing.assert_array_equal(out, reference.ravel())


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), grid=st.tuples(st.integers(1, 4), st.integers(1, 4)),
       layout=st.sampled_from(["contiguous", "fortran", "strided", "read-only"]))
def test_encoder_image_is_the_per_pixel_blend_of_the_low_blocks(seed, grid, layout):
    """The block-by-block copy of the low blocks is the definition, pixel for pixel:
    where(mask repeated to pixels, blurred, frame), JPEG-encoded; the caller's frame is left as it was."""
    rng = np.random.default_rng(seed)
    block = 8
    h, w = grid[0] * block, grid[1] * block
    frame = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    if layout == "fortran":
        frame = np.asfortranarray(frame)
    elif layout == "strided":
        frame = rng.integers(0, 256, (h, 2 * w, 3), dtype=np.uint8)[:, ::2]
    elif layout == "read-only":
        frame.flags.writeable = False
    before = frame.copy()
    score = rng.random(grid).astype(F32)
    low = vk.low_score_mask(score, 0.5)
    pixels = np.repeat(np.repeat(low, block, axis=0), block, axis=1)
    image = np.where(pixels[..., None], cv2.GaussianBlur(np.ascontiguousarray(frame), (9, 9), 0), frame)
    _, expected = cv2.imencode(".jpg", np.ascontiguousarray(image), [cv2.IMWRITE_JPEG_QUALITY, 80])
    np.testing.assert_array_equal(vk.encoder(frame, score, block=block, threshold=0.5, quality=80), expected.ravel())
    np.testing.assert_array_equal(frame, before)


def test_encoder_blurs_nothing_when_the_score_is_zero():
    frame = np.random.default_rng(4).integers(0, 256, (32, 64, 3), dtype=np.uint8)
    _, plain = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 70])
    np.testing.assert_array_equal(vk.encoder(frame, np.zeros((1, 2), F32), quality=70), plain.ravel())


def test_encoder_crops_a_padded_frame_back_to_the_video_size():
    frame = np.random.default_rng(6).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    score = arr([[1.0, 0.2], [0.5, 0.9]])
    full = cv2.imdecode(vk.encoder(frame, score), cv2.IMREAD_COLOR)
    cropped = vk.encoder(frame, score, crop=(50, 40))
    _, expected = cv2.imencode(".jpg", np.ascontiguousarray(full_blend(frame, score)[:50, :40]), [cv2.IMWRITE_JPEG_QUALITY, 85])
    assert full.shape == (64, 64, 3)
    np.testing.assert_array_equal(cropped, expected.ravel())


def full_blend(frame: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The encoder's image before JPEG for a 2x2 grid where only cell (0, 1) is low."""
    image = frame.copy()
    image[0:32, 32:64] = cv2.GaussianBlur(frame, (9, 9), 0)[0:32, 32:64]
    return image


def test_encoder_quality_changes_the_size():
    frame = np.random.default_rng(5).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    score = np.ones((2, 2), F32)
    assert len(vk.encoder(frame, score, quality=20)) < len(vk.encoder(frame, score, quality=95))


def test_vision_kernels_reject_sizes_that_are_not_whole_blocks():
    with pytest.raises(CortexError, match="not a whole number of 32x32 blocks"):
        vk.motion_map(np.zeros((40, 64), F32), np.zeros((40, 64), F32), block=32)


# ---------------------------------------------------------------- tensor kernels

A = arr([[1, 2], [3, 4]])
B = arr([[10, 20], [30, 40]])


@pytest.mark.parametrize(
    "kernel, args, expected",
    [
        (tk.add, (A, B), [[11, 22], [33, 44]]),
        (tk.add, (A, arr(1.0)), [[2, 3], [4, 5]]),  # rank-0 scalar broadcasts
        (tk.sub, (B, A), [[9, 18], [27, 36]]),
        (tk.mul, (A, arr([10, 100])), [[10, 200], [30, 400]]),  # row broadcast
        (tk.div, (B, A), [[10, 10], [10, 10]]),
        (tk.pow, (A, arr(2.0)), [[1, 4], [9, 16]]),
        (tk.neg, (A,), [[-1, -2], [-3, -4]]),
        (tk.exp, (arr([[0, 1], [-1, 2]]),), [[1, math.e], [1 / math.e, math.e**2]]),
        (tk.log, (arr([[1, math.e], [math.e**2, 1]]),), [[0, 1], [2, 0]]),
        (tk.sqrt, (arr([[4, 9], [0, 2.25]]),), [[2, 3], [0, 1.5]]),
        (tk.abs, (arr([[-3, 3], [0, -0.5]]),), [[3, 3], [0, 0.5]]),
        (tk.relu, (arr([[-1, 2], [0, -0.5]]),), [[0, 2], [0, 0]]),
        (tk.sigmoid, (arr([[0, 1000], [-1000, math.log(3)]]),), [[0.5, 1], [0, 0.75]]),
        (tk.tanh, (arr([[0, math.log(2)], [-100, 100]]),), [[0, 0.6], [-1, 1]]),
        (tk.matmul, (A, arr([[5, 6], [7, 8]])), [[19, 22], [43, 50]]),
        (tk.transpose, (A,), [[1, 3], [2, 4]]),
    ],
)
def test_tensor_kernel_2x2(kernel, args, expected):
    kwargs = {"perm": (1, 0)} if kernel is tk.transpose else {}
    assert_f32(kernel(*args, **kwargs), expected)


def test_gelu_exact_and_tanh():
    x = arr([[-1.0, 0.0], [1.0, 2.0]])
    # x·Φ(x): Φ(1) = 0.841344746…, Φ(2) = 0.977249868…
    assert_f32(tk.gelu(x), [[-0.15865525393145707, 0.0], [0.8413447460685429, 1.9544997361036416]])
    # 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))) at x = 1: 0.841191990…
    assert_f32(tk.gelu(x, approximate="tanh")[1, 0:1], [0.8411919906082768])
    # away from x = ±1, where x³ = x hides a wrong power (mutation testing): 0.5·x·(1 + tanh(…)) in float64
    assert_f32(tk.gelu(arr([-1.5, 2.0, 3.0]), approximate="tanh"), [-0.10042842301976707, 1.954597694087775, 2.996362607918227])
    with pytest.raises(CortexError, match="approximate"):
        tk.gelu(x, approximate="fast")


def test_linear_with_and_without_bias():
    x = arr([[1, 2]])
    w = arr([[1, 0], [0, 1], [1, 1]])  # N×K = 3×2
    assert_f32(tk.linear(x, w), [[1, 2, 3]])
    assert_f32(tk.linear(x, w, arr([0.5, 0, -1])), [[1.5, 2, 2]])


def test_batch_norm_per_channel():
    x = arr([[[[1, 3]], [[2, 6]]]])  # N=1, C=2, H=1, W=2
    out = tk.batch_norm(x, arr([1, 2]), arr([0, 1]), arr([1, 2]), arr([4, 16]), epsilon=0.0)
    # channel 0: (x − 1)/2·1 + 0; channel 1: (x − 2)/4·2 + 1
    assert_f32(out, [[[[0, 1]], [[1, 3]]]])


X33 = arr(np.arange(1, 10).reshape(1, 1, 3, 3))
ONES22 = np.ones((1, 1, 2, 2), F32)


def test_conv2d_valid_padded_strided_dilated():
    assert_f32(tk.conv2d(X33, ONES22), [[[[12, 16], [24, 28]]]])
    # pads 1 on every side, stride 2: windows see {1}, {2, 3}, {4, 7}, {5, 6, 8, 9}
    assert_f32(tk.conv2d(X33, ONES22, strides=(2, 2), pads=(1, 1, 1, 1)), [[[[1, 5], [11, 28]]]])
    # dilation 2: the corners 1 + 3 + 7 + 9, plus a bias of 1
    assert_f32(tk.conv2d(X33, ONES22, arr([1.0]), dilations=(2, 2)), [[[[21]]]])
    # pads (top, left, bottom, right) = (0, 1, 0, 0): a zero column on the left,
    # so the first output column sums 1 + 4 and 4 + 7
    assert_f32(tk.conv2d(X33, ONES22, pads=(0, 1, 0, 0)), [[[[5, 12, 16], [11, 24, 28]]]])


def test_conv2d_mixes_channels_oihw():
    x = arr([[[[1, 2]], [[10, 20]]]])  # C=2, H=1, W=2
    w = arr([[[[1]], [[1]]], [[[2]], [[-1]]]])  # O=2, I=2, 1×1
    assert_f32(tk.conv2d(x, w), [[[[11, 22]], [[-8, -16]]]])


def test_avg_pool_does_not_count_padding():
    x = arr([[[[1, 2], [3, 4]]]])
    assert_f32(tk.avg_pool(x, kernel_shape=(2, 2)), [[[[2.5]]]])
    # every padded 2×2 window holds one real cell: count_include_pad = 0 gives it back
    assert_f32(tk.avg_pool(x, kernel_shape=(2, 2), strides=(2, 2), pads=(1, 1, 1, 1)), x)


def test_max_pool_never_picks_padding():
    x = -arr([[[[1, 2], [3, 4]]]])
    assert_f32(tk.max_pool(-x, kernel_shape=(2, 2)), [[[[4]]]])
    assert_f32(tk.max_pool(x, kernel_shape=(2, 2), strides=(2, 2), pads=(1, 1, 1, 1)), x)
    assert_f32(tk.max_pool(arr([[[[1, 5, 2, 0]]]]), kernel_shape=(1, 2), strides=(1, 2)), [[[[5, 2]]]])


def test_reshape_softmax_reductions():
    assert_f32(tk.reshape(A, shape=(4,)), [1, 2, 3, 4])
    assert_f32(tk.softmax(arr([[0, math.log(3)]])), [[0.25, 0.75]])
    assert_f32(tk.softmax(arr([[0, 0], [math.log(3), 0]]), axis=0), [[0.25, 0.5], [0.75, 0.5]])
    assert_f32(tk.reduce_sum(A), [[10]])
    assert_f32(tk.reduce_sum(A, axes=(0,), keepdims=0), [4, 6])
    assert_f32(tk.reduce_mean(A, axes=(1,)), [[1.5], [3.5]])
    full = tk.reduce_max(A, keepdims=0)
    assert full.shape == () and full == 4
    assert_f32(tk.reduce_max(-A, axes=(1,), keepdims=0), [-1, -3])  # negative data: its maximum, not 0


def test_constant_from_a_dense_attribute():
    """The op's `dense<...>` property reaches the kernel as its array (the kernels import no xDSL)."""
    attr = DenseIntOrFPElementsAttr.from_list(TensorType(f32, [2, 2]), [1.0, 2.0, 3.0, 4.0])
    (value,) = run_kernel(ConstantOp(attr), [])
    assert_f32(value, A)


# ---------------------------------------------------------------- run_kernel on op instances

GRAPH = """
func.func @g(%x: tensor<1x2xf32>, %w: tensor<3x2xf32>, %b: tensor<3xf32>,
             %m: tensor<2x2xf32>, %n: tensor<2x2xf32>, %s: f32, %t: f32) -> (tensor<1x3xf32>, tensor<1x3xf32>, tensor<6xf32>, tensor<2x2xf32>) {
  %l = "cortex.linear"(%x, %w) : (tensor<1x2xf32>, tensor<3x2xf32>) -> tensor<1x3xf32>
  %lb = "cortex.linear"(%x, %w, %b) : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32>
  %r = "cortex.reshape"(%w) : (tensor<3x2xf32>) -> tensor<6xf32>
  %f = "cortex.score_fusion"(%m, %n, %s, %t) <{terms = ["a", "b"], operandSegmentSizes = array<i32: 2, 2>}> : (tensor<2x2xf32>, tensor<2x2xf32>, f32, f32) -> tensor<2x2xf32>
  func.return %l, %lb, %r, %f : tensor<1x3xf32>, tensor<1x3xf32>, tensor<6xf32>, tensor<2x2xf32>
}
"""


def test_run_kernel_groups_operands_and_reads_the_reshape_shape():
    ops = {op.results[0].name_hint: op for op in parse(GRAPH).walk() if op.name.startswith("cortex.")}
    x, w, b = arr([[1, 2]]), arr([[1, 0], [0, 1], [1, 1]]), arr([0.5, 0, -1])
    (lin,) = run_kernel(ops["l"], [x, w])
    assert_f32(lin, [[1, 2, 3]])
    (lin_b,) = run_kernel(ops["lb"], [x, w, b])
    assert_f32(lin_b, [[1.5, 2, 2]])
    (flat,) = run_kernel(ops["r"], [w])
    assert_f32(flat, [1, 0, 0, 1, 1, 1])
    (fused,) = run_kernel(ops["f"], [A, B, 0.5, 0.1])
    assert_f32(fused, [[1.5, 3], [4.5, 6]])


def test_run_kernel_passes_properties():
    module = parse(
        """func.func @c(%g: tensor<64x64xf32>) -> tensor<2x2xf32> {
  %c = cortex.center_crop %g {block = 32 : i64, sigma = 5.000000e-01 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}"""
    )
    (op,) = [op for op in module.walk() if op.name == "cortex.center_crop"]
    (out,) = run_kernel(op, [np.zeros((64, 64), F32)])
    assert_f32(out, [[math.exp(-0.125 / 0.5)] * 2] * 2)


# ---------------------------------------------------------------- ops for ONNX's MobileNet/ResNet/attention operators


def test_max_min_broadcast_and_propagate_nan():
    assert_f32(tk.maximum(arr([[1, -2], [3, 0]]), arr([0.5, 0.5])), [[1, 0.5], [3, 0.5]])
    assert_f32(tk.minimum(arr([[1, -2], [3, 0]]), arr(0.5)), [[0.5, -2], [0.5, 0]])
    assert np.isnan(tk.maximum(arr([np.nan]), arr([1.0]))[0]) and np.isnan(tk.minimum(arr([1.0]), arr([np.nan]))[0])


def test_erf_by_hand():
    assert_f32(tk.erf(arr([0.0, 1.0, -1.0, 3.0, 1e-4])), [0.0, 0.8427007929, -0.8427007929, 0.9999779095, 1.1283791e-4], rtol=1e-7)


def test_concat_pad_slice_by_hand():
    a, b = arr([[1, 2]]), arr([[3, 4], [5, 6]])
    assert_f32(tk.concat([a, b], axis=0), [[1, 2], [3, 4], [5, 6]])
    assert_f32(tk.pad(a, pads=[1, 0, 0, 1], value=9.0), [[9, 9, 9], [1, 2, 9]])
    x = arr(np.arange(12).reshape(3, 4))
    assert_f32(tk.slice_(x, starts=[1, 0], sizes=[2, 2], steps=[1, 3]), [[4, 7], [8, 11]])
    assert tk.slice_(x, starts=[0, 1], sizes=[3, 0], steps=[1, 1]).shape == (3, 0)


def test_grouped_conv2d_sees_only_its_channels():
    """Depthwise: filter i reads channel i only; grouped: filters 0-1 read channels 0-1, filters 2-3 channels 2-3."""
    x = arr(np.arange(16).reshape(1, 4, 2, 2))
    w = np.zeros((4, 1, 1, 1), F32)
    w[:, 0, 0, 0] = [1, 10, 100, 1000]
    assert_f32(tk.conv2d(x, w, group=4), x * arr([1, 10, 100, 1000]).reshape(1, 4, 1, 1))
    w2 = np.ones((4, 2, 1, 1), F32)
    w2[1] = 2
    y = tk.conv2d(x, w2, arr([0, 0, 0.5, 0]), group=2)
    low, high = x[0, 0] + x[0, 1], x[0, 2] + x[0, 3]
    assert_f32(y, np.stack([low, 2 * low, high + 0.5, high])[None])
