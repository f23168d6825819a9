"""`profile(reset=True)` starts a new measurement: the next report counts only the frames after it.

The report's ms/frame divides the seconds by its frame count, so a count that survives the reset
(seconds cleared, frames not) shrinks every figure after it."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE, small_l2_text
from helpers.scheduling import frames_of, passes

import cortex
from cortex.driver import compile_loaded

SCALED = """
#id = affine_map<(d0) -> (d0)>
func.func @p(%x: tensor<8xf32>) -> tensor<8xf32> {
  %e = tensor.empty() : tensor<8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<8xf32>) outs(%e : tensor<8xf32>) attrs = {cortex.origin = "first"} {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  func.return %a : tensor<8xf32>
}
"""


def check_reset(runner, call) -> None:
    runner.profiling = True
    for _ in range(3):
        call()
    before = runner.profile(reset=True)
    assert before.frames == 3 and "(3 frames)" in before.table()
    for _ in range(2):
        call()
    after = runner.profile()
    assert after.frames == 2, f"the report after a reset counts {after.frames} frames, 2 ran since"
    assert "(2 frames)" in after.table()
    per_frame = after.per_frame_ms()
    assert all(per_frame[k] == pytest.approx(1000.0 * s / 2) for k, s in after.items())


def test_reset_restarts_the_frame_count():
    runner = compile_loaded(SCALED, entry="p", mode=None)
    x = np.linspace(-1.0, 1.0, 8, dtype=np.float32)
    check_reset(runner, lambda: runner(x))


@pytest.mark.slow
def test_reset_restarts_the_frame_count_of_a_split_program(monkeypatch):
    """A program with state on IREE runs its frame split for every call: the other profile path."""
    pytest.importorskip("iree.runtime")
    for name, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(name, value)
    mode = "balanced"
    runner = cortex.compile(cortex.parse(small_l2_text()), mode=mode, passes=passes(mode), backend="iree")
    assert runner.calls_split
    frames = frames_of((96, 128), n=5)
    it = iter(frames)
    check_reset(runner, lambda: runner(next(it)))
