"""Frames of any size: `cortex-pad-frames` pads a frame to the block grid in IR (`cortex.pad_frame`) and the
encoder crops back, for the Python API (shape-generic compile, `specialize`, the reference, the builder) and
`cortex-run` alike.

Equivalence: the pass's module on a raw frame gives exactly what the module bound to the padded size gives on
the frame padded outside the IR (NumPy's edge mode) with the encoder told to crop — in the reference
interpreter and in the NumPy backend — and the NumPy backend agrees with the reference.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import example, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

import cortex
from cortex.dialects import EncoderOp, PadFrameOp
from cortex.dialects.base import i64_array
from cortex.examples.l2_pipeline import L2_PIPELINE, build_l2_pipeline
from cortex.ir import to_text
from cortex.passes.pad_frames import binding_pipeline, scored_frame_size
from cortex.passes.specialize_shapes import specialize_shapes
from cortex.semantics.modes import BLUR_AUTO
from cortex.semantics.vision_kernels import pad_frame
from cortex.tools.cortex_run import main
from cortex.video.source import open_video
from cortex.video.synthetic import SyntheticVideo

TREE = Path("/usr/share/doc/opencv-doc/examples/data/tree.avi")  # 240x320: 240 is no multiple of 32


def generic():
    return cortex.parse(L2_PIPELINE)


def grid(h: int, w: int, block: int = 32) -> tuple[int, int]:
    return -(-h // block), -(-w // block)


def random_frames(h: int, w: int, n: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (h, w, 3), dtype=np.uint8)
    return [np.roll(base, 3 * i, axis=1) for i in range(n)]  # some motion, so the maps are not all equal


def padded_outside(h: int, w: int) -> ModuleOp:
    """The pipeline before the pass: bound to the padded size, the encoder cropping back (frames padded by NumPy)."""
    ph, pw = 32 * grid(h, w)[0], 32 * grid(h, w)[1]
    module = specialize_shapes(generic(), "l2_frame", [(ph, pw, 3)])
    for op in module.walk():
        if isinstance(op, EncoderOp) and (ph, pw) != (h, w):
            op.properties["crop"] = i64_array((h, w))
    return module


def edge_pad(frame: np.ndarray) -> np.ndarray:
    gh, gw = grid(*frame.shape[:2])
    return np.pad(frame, ((0, 32 * gh - frame.shape[0]), (0, 32 * gw - frame.shape[1]), (0, 0)), mode="edge")


def same(a, b) -> bool:
    return all(x[0].tobytes() == y[0].tobytes() and np.array_equal(x[1], y[1]) for x, y in zip(a, b, strict=True))


# ---- the op's kernel


def test_the_kernel_replicates_the_last_row_and_column():
    frame = np.random.default_rng(0).integers(0, 256, (470, 630, 3), dtype=np.uint8)
    padded = pad_frame(frame, block=32)
    assert padded.shape == (480, 640, 3) and padded.dtype == np.uint8
    assert np.array_equal(padded[:470, :630], frame)
    assert np.array_equal(padded[470:, :630], np.repeat(frame[-1:], 10, axis=0))
    assert np.array_equal(padded[:470, 630:], np.repeat(frame[:, -1:], 10, axis=1))
    assert (padded[470:, 630:] == frame[-1, -1]).all()
    on_grid = frame[:448, :608]
    assert pad_frame(on_grid, block=32) is on_grid  # nothing to pad: the frame itself


# ---- the pass: property over random sizes, tiny ones included


@settings(max_examples=12, deadline=None, derandomize=True)
@given(h=st.integers(1, 200), w=st.integers(1, 200))
@example(h=33, w=47)
@example(h=1, w=1)
@example(h=64, w=96)
def test_any_size_binds_to_the_builder_s_module_with_one_cell_per_started_block(h, w):
    jit = cortex.reference(generic())
    bound = jit.bind(((h, w, 3),))
    assert to_text(bound) == to_text(build_l2_pipeline(h, w))  # the pass and the builder: one module
    fn = next(op for op in bound.ops if getattr(op, "sym_name", None) is not None)
    assert tuple(fn.function_type.inputs.data[0].get_shape()) == (h, w, 3)
    assert tuple(fn.function_type.outputs.data[1].get_shape()) == grid(h, w)
    pads = [op for op in bound.walk() if isinstance(op, PadFrameOp)]
    assert len(pads) == (grid(h, w) != (h / 32, w / 32))
    assert scored_frame_size(bound, "l2_frame") == (32 * grid(h, w)[0], 32 * grid(h, w)[1])


@settings(max_examples=8, deadline=None, derandomize=True)
@given(h=st.integers(1, 120), w=st.integers(1, 120), seed=st.integers(0, 3))
@example(h=33, w=47, seed=0)
@example(h=1, w=1, seed=1)
def test_the_reference_after_the_pass_is_the_reference_before_it(h, w, seed):
    """Property: raw frames through the padded pipeline == NumPy-padded frames through the pipeline bound to
    the padded size with a cropping encoder; the JPEG is H x W."""
    frames = random_frames(h, w, 3, seed)
    after = cortex.reference(generic(), weights=BLUR_AUTO)
    before = cortex.reference(padded_outside(h, w), weights=BLUR_AUTO)
    got = [after(f) for f in frames]
    assert same(got, [before(edge_pad(f)) for f in frames])
    assert got[-1][1].shape == grid(h, w)
    assert cv2.imdecode(got[-1][0], cv2.IMREAD_COLOR).shape == (h, w, 3)


@pytest.mark.parametrize("size", [(33, 47), (100, 150)])
def test_the_numpy_backend_before_and_after_the_pass_and_against_the_reference(size):
    frames = random_frames(*size, 3, seed=7)
    after = cortex.compile(generic(), weights=BLUR_AUTO)
    before = cortex.compile(padded_outside(*size), weights=BLUR_AUTO)
    got = [after(f) for f in frames]
    assert same(got, [before(edge_pad(f)) for f in frames])
    reference = cortex.reference(generic(), weights=BLUR_AUTO, mode="balanced")
    for (_, score), (_, want) in zip(got, [reference(f) for f in frames]):
        assert_f32_close(score, want, ulps=ACCUMULATED)
    assert "cortex.pad_frame" in after.current.source


# ---- the API at real frame sizes


def test_the_binding_is_printed_and_is_what_runs():
    jit = cortex.compile(generic())
    text = jit.binding((240, 320, 3))
    assert text == "cortex-pad-frames{entry=l2_frame size=240x320},cortex-specialize-shapes{entry=l2_frame shapes=240x320x3}"
    assert to_text(cortex.run_passes(generic(), text)) == to_text(jit.bind(((240, 320, 3),)))
    assert binding_pipeline(generic(), "l2_frame", [(480, 640, 3)]).startswith("cortex-pad-frames{")


def test_a_shape_generic_entry_without_blocks_is_only_specialised():
    module = cortex.parse("""builtin.module {
  func.func @f(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %y = cortex.relu %x : tensor<?x3xf32> -> tensor<?x3xf32>
    func.return %y : tensor<?x3xf32>
  }
}""")
    assert binding_pipeline(module, "f", [(5, 3)]) == "cortex-specialize-shapes{entry=f shapes=5x3}"


def test_an_image_entry_of_any_size_without_blocks_is_not_padded():
    """A `?x?x3` argument whose ops cut no blocks is an image of any size, not a video frame to pad."""
    module = cortex.parse("""builtin.module {
  func.func @f(%x: tensor<?x?x3xf32>) -> tensor<?x?x3xf32> {
    %y = cortex.relu %x : tensor<?x?x3xf32> -> tensor<?x?x3xf32>
    func.return %y : tensor<?x?x3xf32>
  }
}""")
    assert binding_pipeline(module, "f", [(5, 7, 3)]) == "cortex-specialize-shapes{entry=f shapes=5x7x3}"


@pytest.mark.slow
@pytest.mark.parametrize("size", [(1080, 1920), (720, 1280), (528, 720), (240, 320), (33, 47)])
def test_the_api_runs_real_frame_sizes_with_a_full_size_jpeg(size):
    compiled = cortex.compile(generic(), mode="power_save")
    for frame in SyntheticVideo(*size).frames(2) if min(size) >= 64 else random_frames(*size, 2, seed=1):
        encoded, score = compiled(frame)
        assert score.shape == grid(*size)
        assert cv2.imdecode(encoded, cv2.IMREAD_COLOR).shape == (*size, 3)
    assert compiled.compiled_shapes == [((*size, 3),)]


@pytest.mark.slow
def test_build_specialize_and_reference_at_720x1280_keep_state_across_frames():
    frames = list(SyntheticVideo(720, 1280).frames(3))
    static = cortex.compile(cortex.build_l2_pipeline(720, 1280), mode="power_save")
    jit = cortex.compile(generic(), mode="power_save")
    program = jit.specialize((720, 1280, 3))
    want = [static(f) for f in frames]
    assert same([jit(f) for f in frames], want)  # the shape-generic call, frame after frame, state carried
    program.reset()
    assert same([program(f) for f in frames], want)
    assert jit.state["prev_gray"].shape == (736, 1280)  # the state lives on the padded grid
    reference = cortex.reference(generic(), mode="power_save")
    for (_, score), (_, got) in zip(want, [reference(f) for f in frames]):
        assert score.shape == got.shape == (23, 40)


# ---- the API equals cortex-run


@pytest.mark.slow
@pytest.mark.skipif(not TREE.exists(), reason="opencv-doc's tree.avi is not installed")
def test_the_api_gives_cortex_run_s_scores_on_a_clip_off_the_block_grid(tmp_path, capsys):
    scores = tmp_path / "scores.jsonl"
    rc = main([str(TREE), "--frames", "8", "--quiet", "--scores-jsonl", str(scores)])
    out = capsys.readouterr().out
    assert rc == 0
    assert "240x320 (padded 256x320), 8 frames" in out
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    compiled = cortex.compile(generic(), mode="balanced", weights=BLUR_AUTO)
    frames = list(open_video(TREE, frames=8))
    assert frames[0].shape == (240, 320, 3)
    got = [compiled(f)[1] for f in frames]
    assert len(rows) == len(got) == 8
    for row, score in zip(rows, got):
        assert score.shape == (8, 10)
        assert np.array_equal(np.asarray(row["score"], np.float32), score)


def test_the_profiler_runs_a_generic_frame_entry_at_a_size_off_the_grid():
    """cortex-profile binds a `?` frame entry with the same passes: 100x150 used to be refused."""
    from cortex.passes.profile import profile_module, profile_ms

    module = generic()
    profile_module(module, frames=1, size=(100, 150))
    gray = next(op for op in module.walk() if op.name == "cortex.gray")
    assert profile_ms(gray) is not None
    assert not [op for op in module.walk() if isinstance(op, PadFrameOp)]  # the user's module is not rewritten


def test_a_module_bound_to_one_frame_size_refuses_frames_of_another():
    bound = specialize_shapes(generic(), "l2_frame", [(256, 320, 3)])
    with pytest.raises(cortex.CortexError, match=r"takes tensor<256x320x3xui8> frames; frames of 240x320 do not fit it"):
        cortex.run_passes(bound, "cortex-pad-frames{entry=l2_frame size=240x320}")
    again = cortex.run_passes(specialize_shapes(generic(), "l2_frame", [(256, 320, 3)]), "cortex-pad-frames{entry=l2_frame size=256x320}")
    assert to_text(again) == to_text(bound)  # its own size binds as it is
