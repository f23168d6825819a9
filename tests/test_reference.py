"""The eager reference interpreter: the L2 pipeline, state, weights, tensor graphs, diagnostics."""

from __future__ import annotations

import math
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.numerics import REORDERED, assert_f32_close

import cortex
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import parse
from cortex.semantics import vision_kernels as vk
from cortex.semantics.modes import INPUT_DEFAULTS, MODES

F32 = np.float32
H, W, BLOCK = 64, 96, 32
EXAMPLE = Path(cortex.__file__).parent / "examples" / "l2_pipeline.mlir"


@pytest.fixture(scope="module")
def small_pipeline():
    return build_l2_pipeline(H, W, BLOCK)


def textured_frame(seed: int, h: int = H, w: int = W) -> np.ndarray:
    """A sharp frame (sharpness far above the blur threshold of 100)."""
    return np.random.default_rng(seed).integers(0, 256, (h, w, 3), dtype=np.uint8)


def expected_frame(frame, prev_gray, prev_score, weights, blur_threshold=100.0):
    """The L2 pipeline (docs/dialects/cortex.md) written out with the kernels: (encoded, score, gray)."""
    gray = vk.gray(frame)
    if vk.blur_detector(gray) < blur_threshold:
        score = prev_score
    else:
        scene = vk.scene_change(gray, prev_gray)
        maps = [
            vk.center_crop(gray, block=BLOCK),
            vk.text_roi(gray, block=BLOCK),
            vk.saliency_dft(gray, block=BLOCK),
            vk.motion_map(gray, prev_gray, block=BLOCK),
        ]
        fused = vk.score_fusion(maps, [weights[w] for w in ("wc", "wt", "ws", "wm")])
        score = vk.temporal_smooth(fused, prev_score, scene)
    return vk.encoder(frame, score, block=BLOCK), score, gray


# ---------------------------------------------------------------- the L2 pipeline


def test_l2_two_frames_thread_state(small_pipeline):
    runner = ReferenceRunner(small_pipeline, mode="balanced")
    weights = MODES["balanced"]
    prev_gray, prev_score = np.zeros((H, W), F32), np.zeros((2, 3), F32)
    for seed in (1, 2):
        frame = textured_frame(seed)
        encoded, score = runner(frame)
        want_encoded, want_score, gray = expected_frame(frame, prev_gray, prev_score, weights)
        assert_f32_close(score, want_score, ulps=REORDERED)
        np.testing.assert_array_equal(encoded, want_encoded)
        # The state after the call is this frame's gray and score.
        np.testing.assert_array_equal(runner.state["prev_gray"], gray)
        np.testing.assert_array_equal(runner.state["prev_score"], score)
        prev_gray, prev_score = gray, score
    assert score.dtype == F32 and score.shape == (2, 3)


def test_second_call_sees_the_first_calls_gray_as_prev():
    # Motion only (wm = 1): the second frame's score is the motion map against frame 1.
    runner = ReferenceRunner(build_l2_pipeline(H, W, BLOCK), mode=None, weights={"wc": 0, "wt": 0, "ws": 0, "wm": 1})
    first, second = textured_frame(3), textured_frame(4)
    _, score1 = runner(first)
    _, score2 = runner(second)
    g1, g2 = vk.gray(first), vk.gray(second)
    motion = vk.motion_map(g2, g1, block=BLOCK)
    assert vk.scene_change(g2, g1) > 0.5  # two unrelated noise frames: the smoothing resets
    assert_f32_close(score2, motion, ulps=REORDERED)
    assert not np.allclose(score2, vk.motion_map(g2, np.zeros_like(g2), block=BLOCK))


def test_a_blurred_frame_keeps_the_previous_score(small_pipeline):
    runner = ReferenceRunner(small_pipeline)
    _, score = runner(textured_frame(5))
    flat = np.full((H, W, 3), 128, np.uint8)  # sharpness 0 < 100
    _, kept = runner(flat)
    np.testing.assert_array_equal(kept, score)
    np.testing.assert_array_equal(runner.state["prev_gray"], vk.gray(flat))


def test_reset_and_initial_state_are_zeros(small_pipeline):
    runner = ReferenceRunner(small_pipeline)
    assert set(runner.state) == {"prev_gray", "prev_score", "sharpness_history"}
    assert not runner.state["prev_gray"].any() and runner.state["prev_gray"].dtype == F32
    first = runner(textured_frame(6))[1]
    runner(textured_frame(7))
    runner.reset()
    assert not runner.state["prev_score"].any()
    np.testing.assert_array_equal(runner(textured_frame(6))[1], first)


def test_mode_weights_equal_explicit_weights(small_pipeline):
    frame = textured_frame(8)
    by_mode = ReferenceRunner(small_pipeline, mode="power_save")(frame)[1]
    explicit = ReferenceRunner(small_pipeline, mode=None, weights=MODES["power_save"])(frame)[1]
    balanced = ReferenceRunner(small_pipeline, mode="balanced")(frame)[1]
    np.testing.assert_array_equal(by_mode, explicit)
    assert not np.allclose(by_mode, balanced)


def test_explicit_weights_win_over_the_mode(small_pipeline):
    frame = textured_frame(9)
    only_center = {"wc": 1.0, "wt": 0.0, "ws": 0.0, "wm": 0.0}
    score = ReferenceRunner(small_pipeline, mode="motion", weights=only_center)(frame)[1]
    _, want, _ = expected_frame(frame, np.zeros((H, W), F32), np.zeros((2, 3), F32), only_center)
    assert_f32_close(score, want, ulps=REORDERED)
    partial = ReferenceRunner(small_pipeline, mode="motion", weights={"wc": 1.0})
    assert partial.weights == {**INPUT_DEFAULTS, **MODES["motion"], "wc": 1.0}


def test_full_size_call_from_the_example_file():
    runner = cortex.reference(str(EXAMPLE), mode="balanced")
    frame = textured_frame(10, 480, 640)
    encoded, score = runner(frame)
    assert score.shape == (15, 20) and score.dtype == F32
    assert np.all(np.isfinite(score))
    assert cv2.imdecode(encoded, cv2.IMREAD_COLOR).shape == (480, 640, 3)


def test_op_timer_sees_every_cortex_op_and_nothing_else(small_pipeline):
    seen: list[tuple[str, float]] = []
    runner = ReferenceRunner(small_pipeline, op_timer=lambda op, seconds: seen.append((op.name, seconds)))
    runner(textured_frame(11))
    names = {name for name, _ in seen}
    assert {"cortex.gray", "cortex.text_roi", "cortex.score_fusion", "cortex.encoder", "cortex.update_state"} <= names
    assert all(name.startswith("cortex.") for name in names)
    assert all(seconds >= 0 for _, seconds in seen)
    assert sum(name == "cortex.weight" for name, _ in seen) == 4 + len(INPUT_DEFAULTS)  # + the blur gate's inputs


# ---------------------------------------------------------------- tensor graphs

GRAPH = """
func.func @layer(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x2xf32> {
  %y = cortex.linear %x, %w, %b : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %g = cortex.gelu %y : tensor<2x2xf32> -> tensor<2x2xf32>
  func.return %g : tensor<2x2xf32>
}
func.func @main(%x: tensor<2x3xf32>, %k: f32) -> (tensor<2x2xf32>, tensor<2xf32>, f32) {
  %w = cortex.constant dense<[[1.0, 0.0, -1.0], [0.5, 0.5, 0.5]]> : tensor<2x3xf32>
  %b = cortex.constant dense<[0.0, -1.0]> : tensor<2xf32>
  %y = func.call @layer(%x, %w, %b) : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
  %s = cortex.softmax %y {axis = 1 : i64} : tensor<2x2xf32> -> tensor<2x2xf32>
  %half = cortex.constant dense<0.5> : tensor<f32>
  %z = cortex.mul %s, %half : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  %r = cortex.reduce_sum %z {axes = array<i64: 1>, keepdims = 0 : i64} : tensor<2x2xf32> -> tensor<2xf32>
  %two = arith.constant 2.0 : f32
  %k2 = arith.mulf %k, %two : f32
  func.return %z, %r, %k2 : tensor<2x2xf32>, tensor<2xf32>, f32
}
"""


def gelu(v: float) -> float:
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def test_tensor_graph_with_a_call_between_functions():
    x = np.array([[1, 2, 3], [0, -2, 4]], F32)
    z, r, k2 = ReferenceRunner(parse(GRAPH), entry="main", mode=None)(x, 1.25)
    # linear: rows of x·Wᵀ + b = [1−3, 3−1] and [0−4, 1−1]
    y = np.array([[gelu(-2.0), gelu(2.0)], [gelu(-4.0), gelu(0.0)]])
    e = np.exp(y - y.max(axis=1, keepdims=True))
    want = 0.5 * e / e.sum(axis=1, keepdims=True)
    assert z.dtype == F32
    assert_f32_close(z, want, ulps=REORDERED)
    assert_f32_close(r, [0.5, 0.5], ulps=REORDERED)
    assert isinstance(k2, float) and k2 == 2.5


# ---------------------------------------------------------------- diagnostics


def one_line(excinfo) -> str:
    message = str(excinfo.value)
    assert "\n" not in message
    return message


EXPECTED_FRAME = f"argument #0: expected a uint8 array of shape ({H}, {W}, 3)"


@pytest.mark.parametrize(
    "inputs, message",
    [
        ((np.zeros((H, W, 3), F32),), f"{EXPECTED_FRAME}, got a float32 array of shape ({H}, {W}, 3)"),
        ((np.zeros((H, W), np.uint8),), f"{EXPECTED_FRAME}, got a uint8 array of shape ({H}, {W})"),
        (([[0, 0, 0]],), "got a list"),
        ((), "@l2_frame takes 1 argument(s), got 0"),
    ],
)
def test_bad_inputs(small_pipeline, inputs, message):
    runner = ReferenceRunner(small_pipeline)
    with pytest.raises(CortexError) as excinfo:
        runner(*inputs)
    assert message in one_line(excinfo)


def test_bad_scalar_argument():
    with pytest.raises(CortexError) as excinfo:
        ReferenceRunner(parse(GRAPH), entry="main", mode=None)(np.zeros((2, 3), F32), "x")
    assert "argument #1: expected an f32 scalar, got a str" in one_line(excinfo)


def test_unknown_entry_lists_the_functions():
    with pytest.raises(CortexError) as excinfo:
        ReferenceRunner(parse(GRAPH), entry="l2_frame")
    assert "no function '@l2_frame' in the module (functions: layer, main)" in one_line(excinfo)


def test_unknown_mode(small_pipeline):
    with pytest.raises(CortexError) as excinfo:
        ReferenceRunner(small_pipeline, mode="turbo")
    assert "unknown mode 'turbo'" in one_line(excinfo)


def test_no_mode_and_no_weights_fails_at_the_call_and_keeps_state(small_pipeline):
    runner = ReferenceRunner(small_pipeline, mode=None)
    with pytest.raises(CortexError) as excinfo:
        runner(textured_frame(12))
    assert "weight 'wc' has no value" in one_line(excinfo)
    assert "give a mode or weights" in str(excinfo.value)
    assert not runner.state["prev_gray"].any()  # a failed call commits nothing


def test_unknown_weight_name():
    module = parse(
        """func.func @f(%m: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %w = cortex.weight "wx" : f32
  %s = cortex.score_fusion(%m) weights(%w) {terms = ["m"]} : tensor<2x2xf32> -> tensor<2x2xf32>
  func.return %s : tensor<2x2xf32>
}"""
    )
    runner = ReferenceRunner(module, entry="f", mode="balanced")
    with pytest.raises(CortexError) as excinfo:
        runner(np.ones((2, 2), F32))
    assert one_line(excinfo) == "weight 'wx' has no value: known weights (mode 'balanced'): blur_fraction, blur_threshold, wc, wm, ws, wt"
    out = ReferenceRunner(module, entry="f", mode="balanced", weights={"wx": 0.5})(np.ones((2, 2), F32))[0]
    np.testing.assert_array_equal(out, np.full((2, 2), 0.5, F32))


def test_non_numeric_weight(small_pipeline):
    with pytest.raises(CortexError, match="weight 'wc' must be a number"):
        ReferenceRunner(small_pipeline, weights={"wc": "high"})


COUNTER = """
func.func @count(%x: f32) -> (f32, f32) {
  %before = cortex.state "n" : f32
  %next = arith.addf %before, %x : f32
  cortex.update_state "n" = %next : f32
  %after = cortex.state "n" : f32
  func.return %before, %after : f32, f32
}
"""


def test_state_writes_take_effect_at_the_next_call():
    runner = ReferenceRunner(parse(COUNTER), entry="count", mode=None)
    assert runner(1.5) == (0.0, 0.0)  # the read after the write still sees the previous call
    assert runner(2.0) == (1.5, 1.5)
    assert runner.state == {"n": 3.5}


def test_a_kernel_failure_is_a_one_line_error_naming_the_op():
    module = parse(
        """func.func @f(%x: tensor<2x2xf32>) -> tensor<?x?xf32> {
  %r = cortex.reshape %x : tensor<2x2xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}"""
    )
    with pytest.raises(CortexError) as excinfo:
        ReferenceRunner(module, entry="f")(np.ones((2, 2), F32))
    assert one_line(excinfo).startswith("'cortex.reshape' failed: ValueError:")


def test_the_state_does_not_alias_inputs_or_outputs(small_pipeline):
    runner = ReferenceRunner(small_pipeline)
    frame = textured_frame(13)
    _, score = runner(frame)
    kept = runner.state["prev_score"].copy()
    score *= 0  # writing into an output must not change the state
    np.testing.assert_array_equal(runner.state["prev_score"], kept)


# ---------------------------------------------------------------- the weights a call binds


def test_weights_for_call_layers_defaults_mode_and_overrides():
    """Runtime-input defaults, then the mode's row, then explicit weights; the diagnostic says where it looked."""
    from cortex.semantics.modes import weights_for_call

    table, where = weights_for_call("balanced", {"wc": 2, "extra": 1.5})
    assert table == {**INPUT_DEFAULTS, **MODES["balanced"], "wc": 2.0, "extra": 1.5}
    assert where.startswith("known weights (mode 'balanced' and weights=)")
    table, where = weights_for_call(None, None)
    assert table == dict(INPUT_DEFAULTS) and "give a mode or weights=" in where
    for bad, message in (({"wc": True}, "must be a number"), ({"wc": float("nan")}, "finite"), ([1], "mapping")):
        with pytest.raises(CortexError, match=message):
            weights_for_call(None, bad)
    with pytest.raises(CortexError, match="unknown mode 'fast'"):
        weights_for_call("fast", None)
