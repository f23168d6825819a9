"""The example graphs parse, verify, round-trip, and compute what their NumPy formulas say.

Also: `examples/l2_pipeline.mlir` is exactly the builder's output, and the
builder makes the pipeline for other frame sizes and blocks.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from xdsl.dialects import func

import cortex
from cortex.dialects import EncoderOp, PadFrameOp
from cortex.dialects.base import ui8
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import parse_module, to_text
from cortex.video.synthetic import SyntheticVideo

EXAMPLES_DIR = Path(cortex.__file__).resolve().parent / "examples"
NAMES = sorted(EXAMPLES)

# The ops each graph is there to exercise (passes written against the examples rely on them).
EXPECTED_OPS = {
    "unoptimized_model": {"cortex.constant": 4, "cortex.mul": 3, "cortex.relu": 3, "cortex.exp": 1, "cortex.add": 2},
    "linear_bn": {"cortex.constant": 6, "cortex.linear": 1, "cortex.batch_norm": 1},
    "conv_bn": {"cortex.constant": 6, "cortex.conv2d": 1, "cortex.batch_norm": 1},
    "gelu_tanh": {"cortex.constant": 4, "cortex.mul": 6, "cortex.add": 2, "cortex.tanh": 1},
}


def op_counts(module) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in module.walk():
        if op.name.startswith("cortex."):
            counts[op.name] = counts.get(op.name, 0) + 1
    return counts


@pytest.mark.parametrize("name", NAMES)
def test_example_parses_and_verifies(name):
    spec = EXAMPLES[name]
    assert spec.path.parent == EXAMPLES_DIR and spec.path.exists()
    module = cortex.parse(str(spec.path))
    module.verify()
    entries = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
    assert entries == [spec.entry]
    assert op_counts(module) == EXPECTED_OPS[name]


@pytest.mark.parametrize("name", NAMES)
def test_example_round_trips(name):
    """custom → parse → custom is stable, and so is generic; both forms denote the same module."""
    module = cortex.parse(str(EXAMPLES[name].path))
    custom, generic = to_text(module), to_text(module, generic=True)
    assert to_text(parse_module(custom)) == custom
    from_generic = parse_module(generic)
    assert to_text(from_generic, generic=True) == generic
    assert to_text(from_generic) == custom
    assert '"cortex.' in generic and '"cortex.' not in custom


@pytest.mark.parametrize("name", NAMES)
def test_committed_file_matches_its_generator(name):
    """The constants are seeded: regenerating gives the committed text byte for byte."""
    spec = EXAMPLES[name]
    assert spec.path.read_text() == spec.render(), (
        f"{spec.path.name} differs from its template: run `python -m cortex.examples.tensor_graphs`"
    )


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", NAMES)
def test_reference_interpreter_matches_numpy(name, seed):
    spec = EXAMPLES[name]
    runner = cortex.reference(cortex.parse(str(spec.path)), entry=spec.entry, mode=None)
    inputs = spec.make_inputs(seed)
    got = runner(*inputs)
    want = spec.numpy_reference(*inputs)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == np.float32
        assert_f32_close(g, w, ulps=ACCUMULATED)


@pytest.mark.parametrize("name", NAMES)
def test_inputs_are_seeded(name):
    make = EXAMPLES[name].make_inputs
    a, b, c = make(0), make(0), make(1)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c))
    assert all(x.dtype == np.float32 for x in a)


def test_numpy_reference_is_sensitive():
    """The comparison above could fail: a wrong graph (GELU without its cubic term) differs."""
    spec = EXAMPLES["gelu_tanh"]
    text = spec.path.read_text().replace("%inner = cortex.add %x, %kx3", "%inner = cortex.add %x, %kx2")
    runner = cortex.reference(parse_module(text), entry=spec.entry, mode=None)
    (x,) = spec.make_inputs(0)
    assert not np.allclose(runner(x)[0], spec.numpy_reference(x)[0], rtol=1e-5, atol=1e-5)


# ---- the L2 pipeline file and builder -----------------------------------


def test_l2_pipeline_file_is_the_builders_output():
    text = (EXAMPLES_DIR / "l2_pipeline.mlir").read_text()
    assert text == to_text(build_l2_pipeline(None, None)), (
        "examples/l2_pipeline.mlir differs from build_l2_pipeline(None, None): regenerate it from examples/l2_pipeline.py"
    )
    assert "tensor<?x?x3xui8>" in text  # the shape-generic form


def test_l2_pipeline_file_round_trips():
    module = cortex.parse(str(EXAMPLES_DIR / "l2_pipeline.mlir"))
    generic = to_text(module, generic=True)
    assert to_text(parse_module(generic)) == to_text(module)


def signature(module) -> tuple[list, list]:
    (fn,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return list(fn.function_type.inputs.data), list(fn.function_type.outputs.data)


@pytest.mark.parametrize(
    "height, width, block",
    [(720, 1280, 16), (768, 1280, 64), (96, 128, 32)],
)
def test_builder_other_sizes(height, width, block):
    module = build_l2_pipeline(height, width, block)
    module.verify()
    (frame_t,), (bytes_t, score_t) = signature(module)
    assert tuple(frame_t.get_shape()) == (height, width, 3) and frame_t.element_type == ui8
    assert tuple(score_t.get_shape()) == (height // block, width // block)
    blocks = {op.properties["block"].value.data for op in module.walk() if "block" in op.properties}
    assert blocks == {block}
    # the printed text parses back to the same module
    assert to_text(parse_module(to_text(module))) == to_text(module)


def test_builder_pads_a_size_off_the_block_grid():
    """720 is no multiple of 64: the frame is 720x1280, a cortex.pad_frame pads it to 768x1280 (one score cell
    per started block) and the encoder crops back to 720x1280."""
    module = build_l2_pipeline(720, 1280, 64)
    (frame_t,), (_, score_t) = signature(module)
    assert tuple(frame_t.get_shape()) == (720, 1280, 3) and tuple(score_t.get_shape()) == (12, 20)
    (pad,) = [op for op in module.walk() if isinstance(op, PadFrameOp)]
    assert tuple(pad.result.type.get_shape()) == (768, 1280, 3) and pad.block.value.data == 64
    (encoder,) = [op for op in module.walk() if isinstance(op, EncoderOp)]
    assert encoder.frame is pad.result and tuple(encoder.crop.get_values()) == (720, 1280)
    assert not [op for op in build_l2_pipeline(768, 1280, 64).walk() if isinstance(op, PadFrameOp)]


def test_builder_pipeline_runs_at_another_size():
    """A small pipeline built by the builder runs on 90x120 synthetic frames: a 3x4 grid, 90x120 JPEGs."""
    runner = cortex.reference(build_l2_pipeline(90, 120, 32), mode="balanced")
    video = SyntheticVideo(90, 120)
    for i in range(2):
        encoded, score = runner(video.frame(i))
        assert score.shape == (3, 4) and score.dtype == np.float32
        assert cv2.imdecode(encoded, cv2.IMREAD_COLOR).shape == (90, 120, 3)
        assert encoded.dtype == np.uint8 and encoded.ndim == 1 and encoded.size > 0
