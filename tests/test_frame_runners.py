"""The frame runners (`cortex.frame_runners`): one object per backend that runs a pipeline frame by frame and
reports per-stage times — what cortex-run and benchmarks/run_benchmarks.py run, in the library, not the tool."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from helpers.pipelines import SMALL, small_l2_text

import cortex
from cortex.frame_runners import (
    UNSPECIALISED,
    CompiledRun,
    InterpretedRun,
    StageTimes,
    make_runner,
    stage_table,
)
from cortex.video.synthetic import SyntheticVideo

ROOT = Path(cortex.__file__).resolve().parent


@pytest.mark.slow
def test_the_compiled_runner_compiles_with_the_compile_steps_of_the_mode():
    """No second driver: the compiled runner's program is `cortex.compile`'s for the mode (same generated
    code), and `--passes` replace the specialisation (the weights stay runtime inputs)."""
    module = cortex.parse(small_l2_text())
    text = str(module)
    runner = make_runner("numpy", module, "l2_frame", "motion", None)
    assert runner.compiled.source == cortex.compile(module, entry="l2_frame", mode="motion").source
    assert str(module) == text  # the module itself is never changed
    assert not set(runner.compiled.program.weights) & {"wc", "wt"}  # baked in
    unspecialised = make_runner("numpy", module, "l2_frame", "motion", UNSPECIALISED["numpy"])
    assert {"wc", "wt"} <= set(unspecialised.compiled.program.weights)
    assert set(UNSPECIALISED) == {"numpy", "iree", None}  # None: the reference interpreter
    assert all("specialize-mode" not in p for p in UNSPECIALISED.values())


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["balanced", "power_save"])
def test_the_compiled_and_interpreted_runners_agree_and_time_the_stages(mode):
    module = cortex.parse(small_l2_text())
    compiled = make_runner("numpy", module, "l2_frame", mode, None)
    reference = make_runner(None, module, "l2_frame", mode, None)
    assert isinstance(compiled, CompiledRun) and compiled.name == "numpy"
    assert isinstance(reference, InterpretedRun) and reference.name == "reference"
    video = SyntheticVideo(*SMALL)
    for i in range(3):
        frame = video.frame(i)
        (_, got), (_, want) = compiled(frame), reference(frame)
        assert_f32_close(np.asarray(got), np.asarray(want), ulps=ACCUMULATED)
    for runner in (compiled, reference):
        times = runner.stage_times(reset=True)
        assert isinstance(times, StageTimes) and "gray" in times.stages
        assert times.stages["gray"].kind == "compilable" and times.stages["gray"].seconds > 0
        assert not runner.stage_times().stages  # reset
    assert stage_table(module)["cortex.gray"] == ("gray", "compilable")


def test_the_tool_calls_the_library_runners():
    """tools/cortex_run.py defines no runner and no pass policy of its own: it imports them."""
    tree = ast.parse((ROOT / "tools" / "cortex_run.py").read_text())
    defined = {n.name for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    assert not defined & {"InterpretedRun", "CompiledRun", "default_passes", "make_runner", "UNSPECIALISED", "stage_table"}
    imported = {alias.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module == "cortex.frame_runners"
                for alias in n.names}
    assert "make_runner" in imported  # (inside the functions that run a pipeline: --help loads no compiler)
