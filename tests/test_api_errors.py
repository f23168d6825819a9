"""The Python API (parse, run_passes, compile, both runners) raises CortexError for bad arguments and
bad state, never a raw exception (the issue-9 regression corpus, class 4)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import cortex
from cortex.ir import CortexError, InvalidIRError, to_text, verify_located

ROOT = Path(__file__).resolve().parent.parent
L2_TEXT = cortex.to_text(cortex.build_l2_pipeline(480, 640))  # the static form of the bundled (shape-generic) pipeline
FRAME = np.zeros((64, 64, 3), np.uint8)



@pytest.mark.parametrize("bad", [None, b"builtin.module {}", 5, ["x"]])
def test_parse_rejects_what_is_not_text_or_a_path(bad):
    with pytest.raises(CortexError, match="cortex.parse takes MLIR text"):
        cortex.parse(bad)


def test_parse_takes_text_paths_and_files_of_any_extension(tmp_path):
    other = tmp_path / "pipeline.txt"
    other.write_text(L2_TEXT)
    for source in (L2_TEXT, other, str(other)):
        assert to_text(cortex.parse(source)) == to_text(cortex.parse(L2_TEXT))
    bundled = ROOT / "examples" / "l2_pipeline.mlir"
    assert to_text(cortex.parse(bundled)) == to_text(cortex.parse(bundled.read_text()))
    with pytest.raises(CortexError, match="cannot read .*missing.mlir"):
        cortex.parse(str(tmp_path / "missing.mlir"))


def test_parse_errors_are_one_located_line():
    with pytest.raises(InvalidIRError) as info:
        cortex.parse("func.func @f(")
    assert str(info.value) == "<string>:1:14: error: Expected argument or type"
    assert info.value.span is not None


def test_run_passes_errors_are_cortex_errors_and_leave_the_module_untouched():
    module = cortex.build_l2_pipeline(64, 64)
    before = to_text(module)
    for pipeline in ("nope", "canonicalize{", 5, "cortex-profile{frames=x}"):
        with pytest.raises(CortexError):
            cortex.run_passes(module, pipeline)
    # canonicalize changes the module, then specialisation fails: nothing of it may stay.
    with pytest.raises(CortexError, match="unknown mode 'turbo'"):
        cortex.run_passes(module, "cortex-specialize-mode{mode=power_save},canonicalize,cortex-specialize-mode{mode=turbo}")
    assert to_text(module) == before
    assert cortex.run_passes(module, "cortex-specialize-mode{mode=power_save},canonicalize,dce") is module
    assert to_text(module) != before
    verify_located(module)


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"weights": [1, 2]}, "weights must be a mapping"),
        ({"passes": 5}, "pass pipeline is a string|passes must be a pipeline string"),
        ({"weights": {"wc": "x"}}, "weight 'wc' must be a number"),
        ({"mode": "turbo"}, "unknown mode 'turbo'"),
    ],
)
def test_compile_argument_errors(kwargs, message):
    with pytest.raises(CortexError, match=message):
        cortex.compile(cortex.build_l2_pipeline(64, 64), **kwargs)


@pytest.fixture(scope="module")
def runners():
    module = cortex.build_l2_pipeline(64, 64)
    return {"reference": cortex.reference(module), "compiled": cortex.compile(module)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["reference", "compiled"])
@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda s: s.pop("prev_gray"), "state 'prev_gray' is missing from runner.state"),
        (lambda s: s.__setitem__("prev_gray", np.zeros((64, 64))), "state 'prev_gray': expected a float32 array of shape (64, 64), got"),
        (lambda s: s.__setitem__("prev_score", np.zeros((1, 2), np.float32)), "state 'prev_score': expected a float32 array of shape (2, 2)"),
    ],
    ids=["missing", "float64", "wrong-shape"],
)
def test_both_runners_reject_the_same_damaged_state(runners, kind, damage, message):
    runner = runners[kind]
    runner.reset()
    damage(runner.state)
    with pytest.raises(CortexError, match=re.escape(message)):
        runner(FRAME)
    runner.reset()
    runner(FRAME)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["reference", "compiled"])
def test_both_runners_reject_masked_frames_and_non_dict_state(runners, kind):
    runner = runners[kind]
    runner.reset()
    with pytest.raises(CortexError, match="masked arrays are not accepted"):
        runner(np.ma.masked_array(FRAME, mask=np.zeros_like(FRAME, bool)))
    runner.state = None
    with pytest.raises(CortexError, match="runner.state must be a dict"):
        runner(FRAME)
    runner.reset()
