"""Temporal reuse's derived states take scene change's precision: float32 under `precision="f32"` (half the
bytes each frame in flight carries), float64 by default — and the f32 pipeline's outputs stay within the
1e-4 that `precision="f32"` keeps scene change to (tests/test_frame_work.py)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import SMALL
from helpers.scheduling import frames_of

import cortex
from cortex.runtime.parts import LoadedSplit


def _derived_dtypes(compiled) -> dict[str, np.dtype]:
    split = LoadedSplit(compiled.program)
    state = split.internal_state(compiled.state)
    derived = [n for n in state if ":" in n]
    assert derived, "temporal reuse carried nothing"
    return {n: state[n].dtype for n in derived}


@pytest.mark.slow
def test_derived_states_are_float32_under_f32_and_float64_by_default():
    h, w = SMALL
    assert set(_derived_dtypes(cortex.compile(cortex.build_l2_pipeline(h, w), precision="f32")).values()) == {np.dtype(np.float32)}
    assert np.dtype(np.float64) in set(_derived_dtypes(cortex.compile(cortex.build_l2_pipeline(h, w))).values())


@pytest.mark.slow
def test_f32_outputs_within_the_f32_tolerance():
    h, w = SMALL
    f32 = cortex.compile(cortex.build_l2_pipeline(h, w), precision="f32")
    f64 = cortex.compile(cortex.build_l2_pipeline(h, w), precision="f64")
    for frame in frames_of(SMALL, 24):  # the synthetic video cuts scene at frame 20
        for a, b in zip(f32(frame), f64(frame)):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape and a.dtype == b.dtype
            if a.dtype.kind == "f":
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-4)
            else:
                assert a.tobytes() == b.tobytes()
    for name, value in f32.state.items():
        np.testing.assert_allclose(np.asarray(value, np.float64), np.asarray(f64.state[name], np.float64), rtol=0, atol=1e-4)
