"""The entry function is resolved in one place (`interpreter.calling`): the runners, calibration, profiling,
translation validation and cortex-run pick the same function and refuse with the same words."""

from __future__ import annotations

import numpy as np
import pytest

import cortex
from cortex.errors import CortexError
from cortex.interpreter.calling import resolve_entry
from cortex.passes.calibrate import calibrate
from cortex.passes.profile import profile_module
from cortex.passes.translation_validation import SemanticsCallback
from cortex.tools.cortex_run import entry_function as cortex_run_entry

TWO = """
func.func @a(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @b(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = cortex.exp %x : tensor<4xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
"""

ONE = TWO.split("func.func @b")[0]

SAMPLES = [(np.ones(4, np.float32),)]

PATHS = {
    "calibrate": lambda m, e: calibrate(m, SAMPLES, entry=e),
    "profile": lambda m, e: profile_module(m, frames=1, mode=None, entry=e),
    "translation validation": lambda m, e: SemanticsCallback(m, entry=e),
}


def message(call) -> str:
    with pytest.raises(CortexError) as excinfo:
        call()
    return str(excinfo.value)


@pytest.mark.parametrize("path", PATHS)
def test_several_public_functions_are_listed_alike(path):
    module = cortex.parse(TWO)
    expected = message(lambda: resolve_entry(module, None))
    assert "2 public functions (@a, @b)" in expected
    assert message(lambda: PATHS[path](module, None)) == expected


@pytest.mark.parametrize("path", [*PATHS, "cortex-run"])
def test_a_missing_entry_is_refused_alike(path):
    module = cortex.parse(TWO)
    expected = message(lambda: resolve_entry(module, "nope"))
    assert expected == "no function '@nope' in the module (functions: a, b)"
    call = (lambda: cortex_run_entry(module, "nope")) if path == "cortex-run" else (lambda: PATHS[path](module, "nope"))
    assert message(call) == expected


@pytest.mark.parametrize("path", PATHS)
def test_the_only_public_function_is_the_entry(path):
    PATHS[path](cortex.parse(ONE), None)  # no error: @a is picked
