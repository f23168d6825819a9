"""A shape-generic pipeline whose ops score blocks of different sizes: frames are padded to a common
multiple of every block (the least one), so that each op's "side is a multiple of my block" holds.

Blocks that share a factor (8 and 12) are the case where the largest block is not enough: padding to
multiples of 12 leaves sides that are no multiple of 8. The Hypothesis strategy draws such pairs."""

from __future__ import annotations

import json
import math

from hypothesis import example, given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects.shapes import padded_to_block
from cortex.passes.specialize_shapes import specialize_shapes, video_block
from cortex.tools.cortex_run import main


def two_blocks(crop: int, text: int) -> str:
    """Center crop on `crop`-pixel blocks (the encoder's too), text on `text`-pixel blocks (the score map)."""
    t = "tensor<?x?xf32>"
    return f"""builtin.module {{
  func.func @l2_frame(%frame: tensor<?x?x3xui8>) -> (tensor<?xui8>, {t}) {{
    %gray = cortex.gray %frame : tensor<?x?x3xui8> -> {t}
    %a = cortex.center_crop %gray {{block = {crop} : i64}} : {t} -> {t}
    %b = cortex.text_roi %gray {{block = {text} : i64}} : {t} -> {t}
    %encoded = cortex.encoder %frame, %a {{block = {crop} : i64}} : (tensor<?x?x3xui8>, {t}) -> tensor<?xui8>
    func.return %encoded, %b : tensor<?xui8>, {t}
  }}
}}
"""


SIZES = st.sampled_from([4, 6, 8, 10, 12, 16, 18, 20, 24])
SHARED_FACTOR = st.tuples(SIZES, SIZES).filter(lambda p: math.gcd(*p) > 1 and math.lcm(*p) > max(p))
"""Two block sizes with a common factor, neither a multiple of the other: lcm > max."""


@settings(max_examples=12, deadline=None, derandomize=True)
@given(blocks=SHARED_FACTOR, size=st.tuples(st.integers(1, 200), st.integers(1, 200)))
@example(blocks=(8, 12), size=(70, 100))
def test_the_padded_frame_binds_for_every_block(blocks, size):
    crop, text = blocks
    module = cortex.parse(two_blocks(crop, text))
    block = video_block(module, "l2_frame")
    assert block == math.lcm(crop, text)
    h, w = padded_to_block(*size, block)
    assert h >= size[0] and w >= size[1] and h - size[0] < block and w - size[1] < block
    bound = specialize_shapes(module, "l2_frame", [(h, w, 3)])  # raises if a side is no multiple of a block
    fn = next(op for op in bound.ops if getattr(op, "sym_name", None) is not None)
    assert fn.function_type.outputs.data[1].get_shape() == (h // text, w // text)


def test_cortex_run_pads_a_video_for_blocks_8_and_12(tmp_path, capsys):
    pipeline = tmp_path / "blocks.mlir"
    pipeline.write_text(two_blocks(8, 12))
    scores = tmp_path / "scores.jsonl"
    rc = main(["--pipeline", str(pipeline), "--size", "70x100", "--frames", "2", "--quiet", "--scores-jsonl", str(scores)])
    err = capsys.readouterr().err
    assert rc == 0, err
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert len(rows) == 2
    # padded to 72x120 (multiples of 24): a 6x10 map of 12-pixel blocks
    assert [(len(r["score"]), len(r["score"][0])) for r in rows] == [(6, 10), (6, 10)]
