"""Negative and mixed-sign fusion weights through canonicalisation, DCE and both backends.

The rule (canonicalization.DropZeroWeightTerms): a score_fusion term is
dropped only when its weight is exactly zero (0.0 or -0.0); any other
weight — negative, tiny, subnormal — keeps its term, and DCE keeps the
stage that feeds it. Mutation testing found that `== 0.0` → `<= 0.0` passed
every test, so a user mode table with a negative weight would have lost
that term and its stage silently. Checked here on a small graph (every
weight sign, as a property test) and on the L2 pipeline specialised from a
user mode table, against the reference interpreter run on the unoptimised
module.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers.numerics import ALGORITHM, REORDERED, assert_f32_close
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects.vision import ScoreFusionOp
from cortex.video.synthetic import SyntheticVideo

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
WEIGHTS = [0.0, -0.0, -0.5, 0.25, -1.0e-30, -1.0e-40, 1.0e-40, -3.0, 2.0]
MAP = "tensor<2x3xf32>"


def fusion_module(weights) -> str:
    n = len(weights)
    args = ", ".join(f"%m{i}: {MAP}" for i in range(n))
    consts = "\n".join(f"  %w{i} = arith.constant {w:.9e} : f32" for i, w in enumerate(weights))
    maps = ", ".join(f"%m{i}" for i in range(n))
    ws = ", ".join(f"%w{i}" for i in range(n))
    terms = ", ".join(f'"t{i}"' for i in range(n))
    return (
        f"func.func @main({args}) -> {MAP} {{\n{consts}\n"
        f"  %f = cortex.score_fusion({maps}) weights({ws}) {{terms = [{terms}]}} : {', '.join([MAP] * n)} -> {MAP}\n"
        f"  func.return %f : {MAP}\n}}\n"
    )


def fused_terms(module) -> list[str] | None:
    ops = [op for op in module.walk() if isinstance(op, ScoreFusionOp)]
    return None if not ops else [t.data for t in ops[0].terms.data]


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.sampled_from(WEIGHTS), min_size=1, max_size=5))
def test_only_exact_zero_weights_drop_a_term(weights):
    text = fusion_module(weights)
    rng = np.random.default_rng(len(weights))
    maps = [rng.uniform(0, 1, (2, 3)).astype(np.float32) for _ in weights]
    (want,) = cortex.reference(cortex.parse(text), entry="main", mode=None)(*maps)
    module = cortex.run_passes(cortex.parse(text), "canonicalize,dce")
    kept = [f"t{i}" for i, w in enumerate(weights) if np.float32(w) != 0]
    assert fused_terms(module) == (kept or None)
    for runner in (cortex.reference(module, entry="main", mode=None), cortex.compile(module, entry="main", mode=None)):
        (got,) = runner(*maps)
        assert_f32_close(got, want, ulps=REORDERED)


def test_negative_weight_terms_change_the_score():
    """A kept negative term is not a no-op: dropping it would change the result."""
    maps = [np.full((2, 3), 0.5, np.float32), np.full((2, 3), 0.25, np.float32)]
    (got,) = cortex.compile(cortex.parse(fusion_module([1.0, -0.5])), entry="main", mode=None)(*maps)
    assert_f32_close(got, np.full((2, 3), 0.375, np.float32), ulps=REORDERED)


# ---------------------------------------------------------------- the L2 pipeline from a user mode table

SIGNED = {"wc": 0.75, "wt": -0.25, "ws": -0.125, "wm": 0.0}
MIXED = {"wc": -0.0, "wt": -0.5, "ws": 0.0, "wm": 1.5}


@pytest.mark.slow
@pytest.mark.parametrize(
    ("row", "kept", "removed"),
    [
        (SIGNED, ["center_crop", "text_roi", "saliency_dft"], {"motion_map"}),
        (MIXED, ["text_roi", "motion_map"], {"saliency_dft", "center_crop"}),
    ],
    ids=["signed", "mixed"],
)
def test_l2_signed_mode_table(tmp_path, row, kept, removed):
    table = tmp_path / "modes.json"
    table.write_text(json.dumps({"user": row}))
    passes = f'cortex-specialize-mode{{mode=user table="{table}"}},canonicalize,dce'
    module = cortex.build_l2_pipeline(96, 128, 32)
    optimised = cortex.run_passes(module.clone(), passes)
    assert fused_terms(optimised) == kept
    names = {op.name.removeprefix("cortex.") for op in optimised.walk()}
    assert not (removed & names)
    assert set(kept) - {"center_crop"} <= names  # center_crop folds to a constant; the others run

    reference = cortex.reference(module, mode=None, weights=row)
    after = cortex.reference(optimised, mode=None)
    compiled = cortex.compile(module, mode=None, weights=row)
    compiled_optimised = cortex.compile(module, mode=None, weights=row, passes=passes)
    lowest = []
    for frame in SyntheticVideo(96, 128).frames(4):
        want_bytes, want = reference(frame)
        lowest.append(float(np.min(want)))
        for runner in (after, compiled, compiled_optimised):
            got_bytes, got = runner(frame)
            assert_f32_close(got, want, ulps=ALGORITHM, scale=1.0)
            np.testing.assert_array_equal(got_bytes, want_bytes)
    assert min(lowest) < 0  # the negative terms reach the score
