"""The benchmark scripts: the issue-11 script runs (a smoke run: tiny sizes; no timing is asserted), and the
one interleaved timer they share (benchmarks/timing.py) times what it should, checked on a fake clock."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.mark.slow
def test_quick_run_prints_every_section(capsys):
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import quant_layout_fusion
    finally:
        sys.path.remove(str(BENCHMARKS))
    assert quant_layout_fusion.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for heading in ("(q) int8 vs f32", "(l) NCHW vs NHWC", "(f) fused vs unfused", "peak memory"):
        assert heading in out
    assert "ratio to f32" in out and "ratio to NCHW" in out and "ratio to unfused" in out


# ------------------------------------------------------------- benchmarks/timing.py: the one interleaved timer


def _benchmark(name: str):
    """A module of benchmarks/ (a folder of scripts, not a package), imported by its file name."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCHMARKS))


def _timing():
    return _benchmark("timing")


def test_interleaved_alternates_the_order_and_times_each_call_without_prepare(monkeypatch):
    """A fake clock that only the contenders (1 s) and `prepare` (100 s) advance: every sample is exactly its call."""
    timing = _timing()
    now = [0.0]
    monkeypatch.setattr(timing.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(timing.time, "process_time", lambda: now[0])
    calls: list[str] = []

    def contender(name: str, seconds: float):
        def run():
            calls.append(name)
            now[0] += seconds
        return run

    prepared: list[str] = []

    def reset():
        prepared.append("reset")
        now[0] += 100.0

    samples = timing.interleaved({"a": contender("a", 1.0), "b": contender("b", 2.0)}, rounds=3, block=2,
                                 prepare={"b": reset})
    assert calls == ["a", "a", "b", "b", "b", "b", "a", "a", "a", "a", "b", "b"]
    assert prepared == ["reset"] * 6  # before every call of b, none of a
    assert samples["a"].wall == [1.0] * 6 and samples["a"].cpu == [1.0] * 6
    assert samples["b"].wall == [2.0] * 6 and samples["b"].cpu == [2.0] * 6
    assert samples["b"].median_us() == 2e6 and samples["a"].min_us() == 1e6


def test_interleaved_refuses_an_empty_run():
    timing = _timing()
    for rounds, block in ((0, 1), (1, 0)):
        try:
            timing.interleaved({"a": lambda: None}, rounds, block)
        except ValueError as e:
            assert "at least 1" in str(e)
        else:
            raise AssertionError("no error")


def test_load_line_names_the_cores():
    import re

    assert re.fullmatch(r"load average \d+\.\d\d \d+\.\d\d \d+\.\d\d on \d+ cores", _timing().load())


def test_the_benchmarks_time_with_the_one_timer():
    """The scripts that had their own copy of the interleaved loop now call benchmarks/timing.py."""
    timing = _timing()
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_schedule
        import iree_vs_ort
        import onnx_vs_ort
        import scene_precision
    finally:
        sys.path.remove(str(BENCHMARKS))
    for module in (bench_schedule, iree_vs_ort, onnx_vs_ort, scene_precision):
        assert module.interleaved is timing.interleaved, module.__name__
    assert bench_schedule.load is timing.load and scene_precision.load is timing.load
    from cortex.examples import SCENE_ONLY

    assert bench_schedule.SCENE_ONLY is SCENE_ONLY and scene_precision.SCENE_ONLY is SCENE_ONLY
    calls = {"x": 0}

    def bump():
        calls["x"] += 1

    assert set(iree_vs_ort.timings({"x": bump}, 2, 3)) == {"x"} and calls["x"] == 6
    assert onnx_vs_ort.timings({"x": bump}, 1, 2)["x"][1] >= 0 and calls["x"] == 8


def _onnx_vs_ort():
    return _benchmark("onnx_vs_ort")


def test_onnx_vs_ort_table_has_a_row_per_model_and_thread_count():
    bench = _onnx_vs_ort()
    rows = [bench.Row("cnn", 1, {"onnxruntime": (20.0, 10.0), "cortex iree": (30.0, 12.0)}),
            bench.Row("cnn", 2, {"onnxruntime": (10.0, 8.0), "cortex iree": (10.0, 10.0), "iree alone": (40.0, 16.0)})]
    lines = bench.table(rows)
    assert lines[0].startswith("| model | threads | ONNX Runtime min") and "iree alone / ort" in lines[0]
    assert lines[2] == "| cnn | 1 | 10.0 | 1.20 (1.50) | — |"
    assert lines[3] == "| cnn | 2 | 8.0 | 1.25 (1.00) | 2.00 (4.00) |"


def test_onnx_vs_ort_reads_iree_s_dispatch_rows():
    bench = _onnx_vs_ort()
    rows = """BM_f/process_time/real_time_median    3.06 ms   1.20 ms    3 items_per_second=327.206/s
BM_f/f_dispatch_3_mmt4d_2x64x1024x16x16x1_f32     1.51 ms    1.51 ms   300 calls=1 percent=63.6
BM_f/f_dispatch_0_pack_f32      6.5 us      6.5 us    300 calls=1 percent=0.2"""
    found = [(m.group(1), float(m.group(2)) * bench.UNIT_US[m.group(3)])
             for m in map(bench.DISPATCH_ROW.match, rows.splitlines()) if m]
    assert found == [("f_dispatch_3_mmt4d_2x64x1024x16x16x1_f32", 1510.0), ("f_dispatch_0_pack_f32", 6.5)]
    assert bench.input_spec("tensor<1x16x16x3xf32>") == "1x16x16x3xf32=0.5"


def test_onnx_vs_ort_reads_onnx_runtime_s_node_profile():
    """Per node of ORT's profile: the mean of the calls after the warm-up ones, slowest first; not the
    session's or the model's events."""
    bench = _onnx_vs_ort()

    def kernel(node: str, op: str, dur: int) -> dict:
        return {"cat": "Node", "name": f"{node}_kernel_time", "dur": dur, "args": {"op_name": op}}

    events = [{"cat": "Session", "name": "model_run", "dur": 900, "args": {}},
              *(kernel("r0_nchwc", "Conv", d) for d in (500, 100, 120)),
              *(kernel("Gemm_14", "Gemm", d) for d in (50, 4, 6)),
              {"cat": "Node", "name": "r0_nchwc_fence_before", "dur": 1, "args": {"op_name": "Conv"}}]
    assert bench.node_times(events, skip=1) == [("r0_nchwc", "Conv", 110.0), ("Gemm_14", "Gemm", 5.0)]
    assert bench.node_times(events[:2], skip=1) == [("r0_nchwc", "Conv", 500.0)]


@pytest.mark.slow
def test_onnx_vs_ort_quick_run_prints_the_table_and_the_dispatches(tmp_path):
    """A smoke run of the one table script: every contender's row, the summary table, a dispatch table."""
    pytest.importorskip("iree.runtime")
    pytest.importorskip("onnxruntime")
    env = dict(os.environ, CORTEX_IREE_CACHE=str(tmp_path))
    done = subprocess.run([sys.executable, str(BENCHMARKS / "onnx_vs_ort.py"), "--quick", "--models", "mlp", "--threads", "1",
                           "--dispatches", "--top", "2"], capture_output=True, text=True, env=env, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert re.search(r"^# .*(AVX|SSE|ISA).*load \d", out, re.M)
    for contender in ("onnxruntime", "cortex iree", "iree alone", "cortex numpy"):
        assert re.search(rf"^  {contender} +min +[\d.]+ us", out, re.M), contender
    assert re.search(r"^\| mlp \| 1 \| [\d.]+ \| [\d.]+ \([\d.]+\) \|", out, re.M)
    assert re.search(r"^  onnxruntime \(its profile\): \d+ nodes", out, re.M)
    assert re.search(r"^ +[\d.]+ us +[\d.]+ %  .+ \(\w+\)$", out, re.M)
    assert re.search(r"cortex iree @\w+: \d+ dispatches", out) and re.search(r"^ +[\d.]+ us +[\d.]+ %  \w*dispatch", out, re.M)


def test_bench_schedule_predicts_with_cortex_schedules_bound():
    """bench_schedule's predicted frame-parallel throughput is cortex-schedule's `ThroughputBound` of the part times."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_schedule
    finally:
        sys.path.remove(str(BENCHMARKS))
    parts = {"delayed": 1.0, "parallel": 20.0, "recurrence": 0.5, "tail": 3.0}
    assert bench_schedule.predicted(parts, 2).startswith(
        "predicted 81.63 frames/s (1 frame per max(work/2 12.25 ms, delayed 1.00 ms, recurrence 0.50 ms) = 12.25 ms")
    many = bench_schedule.predicted(parts, 64)
    assert many.startswith("predicted 1000.00 frames/s") and many.endswith("on the caller 666.67)")
    # the batch that ran: 16 frames at 26 CPU ms/frame on 2 workers = 208 ms, plus half the last frame's 24 ms path
    assert bench_schedule.predicted_batch(parts, 2, 16, 26.0) == (
        "for this batch (16 frames at the run's 26.00 CPU ms/frame, and its drain): 72.73 frames/s")
    assert bench_schedule.predicted_batch(parts, 1, 4, 24.5).endswith(f"{4e3 / (4 * 24.5):.2f} frames/s")


def test_bench_schedule_help_says_its_whole_first_sentence(capsys):
    """Regression: --help cut the description at the docstring's first line ("... sequential and")."""
    import pytest

    sys.path.insert(0, str(BENCHMARKS))
    try:
        import bench_schedule
    finally:
        sys.path.remove(str(BENCHMARKS))
    with pytest.raises(SystemExit):
        bench_schedule.main(["--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "sequential and frame-parallel, per mode, at 480×640 and 1080p" in help_text
