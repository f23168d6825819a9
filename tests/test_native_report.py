"""What went native: an IREE compile records every run of extern-free ops its cost rule weighed (source ops,
work, boundary elements, native or not) in the executable's meta, and `compiled.native()`, cortex-run's summary
(text and JSON), its HTML report and a stderr warning (when nothing went native) say it in words."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

import cortex
from cortex.examples.l2_pipeline import L2_PIPELINE
from cortex.runtime.native_report import RunChoice, runs_nothing_natively, weighed
from cortex.tools.cortex_run import main

HAVE_IREE = all(importlib.util.find_spec(name) is not None for name in ("iree", "iree.compiler", "iree.runtime"))
needs_iree = pytest.mark.skipif(not HAVE_IREE, reason="iree-base-compiler/iree-base-runtime not installed")

RELU = """builtin.module {
  func.func @f(%x: tensor<256x256xf32>) -> tensor<256x256xf32> {
    %y = cortex.relu %x : tensor<256x256xf32> -> tensor<256x256xf32>
    func.return %y : tensor<256x256xf32>
  }
}"""


@pytest.fixture(autouse=True)
def private_iree_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("CORTEX_IREE_CACHE", str(tmp_path / "iree-cache"))
    for name in ("CORTEX_IREE_MIN_INTENSITY", "CORTEX_IREE_MIN_WORK"):
        monkeypatch.delenv(name, raising=False)  # the measured rule, whatever the caller set


def test_a_choice_says_which_part_of_the_rule_it_fails():
    assert RunChoice("gray", 819_200, 327_680, False).why(32768, 64) == (
        "work 819,200, 2.5 per boundary element (< 64 per boundary element)")
    assert RunChoice("median", 12_288, 24_576, False).why(32768, 64) == (
        "work 12,288, 0.5 per boundary element (work < 32,768; < 64 per boundary element)")
    assert RunChoice("conv", 1_000_000, 100, True).why(32768, 64) == "work 1,000,000, 10000.0 per boundary element"
    assert "cannot cross" in RunChoice("dyn", 1_000_000, 100, False).why(32768, 64)


def test_the_numpy_backend_reports_nothing():
    compiled = cortex.compile(cortex.parse(RELU), mode=None)
    assert compiled.native() == [] and weighed(compiled.program) is None
    assert not runs_nothing_natively(compiled.program)


@needs_iree
def test_the_l2_pipeline_on_iree_says_plainly_that_nothing_went_native():
    compiled = cortex.compile(cortex.parse(L2_PIPELINE), backend="iree")
    compiled.specialize((96, 128, 3))
    compiled(np.zeros((96, 128, 3), np.uint8))
    lines = compiled.native()
    assert lines[0].startswith("IREE runs nothing natively: no run of extern-free ops passes the cost rule "
                               "(work >= 32,768 and >= 64 per boundary element)")
    runs, rule = weighed(compiled.current.program)
    assert rule == {"min_work": 32768.0, "min_intensity": 64.0}
    assert runs and len(lines) == 1 + len(runs)
    assert any(line.strip().startswith("NumPy   gray: work") for line in lines)
    for run in runs:  # each run really fails the rule it is reported against
        assert not run.native and (run.work < rule["min_work"] or run.intensity < rule["min_intensity"])
    assert runs_nothing_natively(compiled.current.program)


@needs_iree
@pytest.mark.slow
def test_a_run_that_passes_the_rule_is_reported_native(monkeypatch):
    monkeypatch.setenv("CORTEX_IREE_MIN_INTENSITY", "0")
    monkeypatch.setenv("CORTEX_IREE_MIN_WORK", "0")
    compiled = cortex.compile(cortex.parse(RELU), mode=None, backend="iree")
    lines = compiled.native()
    assert lines[0].startswith("IREE runs 1 of 1 run(s) of extern-free ops natively (cost rule: work >= 0")
    assert lines[1].strip() == "native  y: work 131,072, 1.0 per boundary element"  # 65,536 elements x 2 body ops
    runs, _ = weighed(compiled.program)
    assert [r.native for r in runs] == [True] and not runs_nothing_natively(compiled.program)


@needs_iree
@pytest.mark.slow
def test_cortex_run_warns_on_stderr_and_reports_in_the_summary_and_the_html(tmp_path, capsys):
    summary, report = tmp_path / "summary.json", tmp_path / "report.html"
    rc = main(["--backend", "iree", "--size", "96x128", "--frames", "2", "--quiet",
               "--summary-json", str(summary), "--report", str(report)])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: IREE runs nothing natively")]
    assert len(warnings) == 1
    assert "  IREE runs nothing natively" in captured.out and "NumPy   gray: work" in captured.out
    native = json.loads(summary.read_text())["native"]
    assert native[0].startswith("IREE runs nothing natively") and len(native) > 1
    assert "native code</td><td>IREE runs nothing natively" in report.read_text()


@pytest.mark.slow
def test_cortex_run_on_numpy_says_nothing_of_native_code(tmp_path, capsys):
    summary = tmp_path / "summary.json"
    assert main(["--size", "96x128", "--frames", "2", "--quiet", "--summary-json", str(summary)]) == 0
    captured = capsys.readouterr()
    assert "natively" not in captured.err + captured.out
    assert json.loads(summary.read_text())["native"] == []


@needs_iree
@pytest.mark.slow
def test_print_pipeline_says_what_goes_native_on_stderr_and_keeps_one_line(capsys):
    assert main(["--backend", "iree", "--size", "96x128", "--print-pipeline", "--quiet"]) == 0
    captured = capsys.readouterr()
    assert len(captured.out.strip().splitlines()) == 1  # the pipeline, still runnable as cortex-opt -p text
    err = captured.err.splitlines()
    assert err[0].startswith("warning: IREE runs nothing natively") and any("NumPy   gray: work" in e for e in err)
