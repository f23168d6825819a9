"""In the driver "pipeline" is a pass pipeline only: `run_passes` applies one and `compile_loaded` compiles
and loads a program. The former names keep working for one release, each with a DeprecationWarning."""

from __future__ import annotations

import numpy as np
import pytest

from cortex import driver
from cortex.ir import parse_module, to_text

GRAPH = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = cortex.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = cortex.mul %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""


def test_run_pipeline_warns_and_does_what_run_passes_does():
    want = to_text(driver.run_passes(parse_module(GRAPH), "canonicalize,dce"))
    with pytest.warns(DeprecationWarning, match=r"run_pipeline is deprecated: use run_passes"):
        got = to_text(driver.run_pipeline(parse_module(GRAPH), "canonicalize,dce"))
    assert got == want


def test_compile_pipeline_warns_and_gives_the_program_compile_loaded_gives():
    x = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)
    with pytest.warns(DeprecationWarning, match=r"compile_pipeline is deprecated: use compile_loaded"):
        old = driver.compile_pipeline(parse_module(GRAPH), mode=None)
    new = driver.compile_loaded(parse_module(GRAPH), mode=None)
    assert np.array_equal(old(x)[0], new(x)[0])
    assert np.array_equal(new(x)[0], 2 * x * x)


def test_the_old_names_are_not_exported():
    assert "run_pipeline" not in driver.__all__ and "compile_pipeline" not in driver.__all__
    assert {"run_passes", "compile_loaded"} <= set(driver.__all__)
