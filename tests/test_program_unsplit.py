"""A program compiled without the frame split (`split=False`) saves, loads and runs like the one compiled:
its states are recorded as `unclassified`, a class the loader accepts."""

from __future__ import annotations

import numpy as np
import pytest

import cortex
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.video.synthetic import SyntheticVideo


@pytest.mark.slow
def test_unsplit_program_with_state_round_trips(tmp_path):
    compiled = cortex.compile(build_l2_pipeline(64, 64), split=False)
    assert {s.kind for s in compiled.program.states} == {"unclassified"}
    path = tmp_path / "unsplit.cortex"
    compiled.save(path)
    loaded = cortex.load(path)
    for frame in SyntheticVideo(64, 64).frames(4):
        want, got = compiled(frame), loaded(frame)
        for a, b in zip(want, got, strict=True):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
