"""cortex-run end to end (both backends, outputs, errors) and a smoke run of the benchmarks.

Behaviour only: no timing is asserted anywhere. Most runs use a small
synthetic video (`--size`), for which cortex-run builds the pipeline itself.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.numerics import ALGORITHM, assert_f32_close

import cortex
from cortex.frame_runners import StageTimes
from cortex.passes.expose_gate import expose_blur_gate
from cortex.tools import cortex_run
from cortex.tools.cortex_run import main
from cortex.tools.report import progress_bar
from cortex.video.overlay import band_height, heat_overlay
from cortex.video.synthetic import SyntheticVideo

ROOT = Path(__file__).resolve().parents[1]
SMALL = ["--size", "96x128", "--quiet"]


ON = {"numpy": ("--backend", "numpy"), "reference": ("--runner", "reference")}
"""The command-line arguments that run the NumPy backend or the reference interpreter."""


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def table_rows(out: str) -> dict[str, list[str]]:
    """The per-stage table as {stage: [kind, runs, ms, share]}."""
    lines = out.split("per-stage time")[1].splitlines()[2:]
    return {line.split()[0]: line.split()[1:] for line in lines if line.startswith("  ") and not line.startswith("   ")}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="module")
def odd_video(tmp_path_factory) -> Path:
    """A 100x150 video (not a multiple of the block) of 4 synthetic frames."""
    path = tmp_path_factory.mktemp("video") / "odd.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (150, 100))
    for frame in SyntheticVideo(100, 150).frames(4):
        writer.write(frame)
    writer.release()
    return path


# ----------------------------------------------------------------------- the two backends


def test_reference_backend_on_the_bundled_pipeline(capsys):
    rc, out, err = run_cli(capsys, "--frames", "3", "--runner", "reference", "--quiet")
    assert rc == 0, err
    assert "synthetic: 480x640, 3 frames, mode balanced, backend reference" in out
    rows = table_rows(out)
    assert rows["gray"][0] == "compilable" and rows["saliency_dft"][0] == "compilable"
    assert rows["text_roi"][0] == "external" and rows["encoder"][0] == "external"
    assert rows["gray"][1] == "3"  # runs: the reference counts every execution
    assert rows["frame"][-1] == "100.0%"
    assert "mode balanced: dead-node elimination removes no stage" in out


@pytest.mark.slow
def test_numpy_backend_power_save_skips_the_dead_stages(capsys):
    rc, out, err = run_cli(capsys, "--frames", "3", "--mode", "power_save", "--quiet")
    assert rc == 0, err
    assert "backend numpy" in out
    rows = table_rows(out)
    assert "saliency_dft" not in rows and "motion_map" not in rows  # specialised away
    assert {"gray", "text_roi", "scene_change", "encoder"} <= rows.keys()
    dce = next(line for line in out.splitlines() if line.startswith("mode power_save:"))
    assert "removes saliency_dft" in dce and "motion_map" in dce and "ms/frame" in dce


def test_reference_prices_the_dce_with_its_own_times(capsys):
    rc, out, _ = run_cli(capsys, "--frames", "2", "--mode", "power_save", "--runner", "reference", *SMALL)
    assert rc == 0
    rows = table_rows(out)
    assert "saliency_dft" in rows  # the reference runs the pipeline as written
    dce = next(line for line in out.splitlines() if line.startswith("mode power_save:"))
    priced = float(dce.split("saliency_dft ")[1].split(" ms")[0])
    assert priced == pytest.approx(float(rows["saliency_dft"][2]), abs=0.006)


def test_jsonl_records_blur_gate_and_scores_and_both_backends_agree(capsys, tmp_path):
    frames, size = 10, (96, 128)
    records = {}
    for backend in ("numpy", "reference"):
        path = tmp_path / f"{backend}.jsonl"
        rc, _, err = run_cli(capsys, "--frames", str(frames), *ON[backend], "--scores-jsonl", str(path), *SMALL)
        assert rc == 0, err
        records[backend] = read_jsonl(path)
    video = SyntheticVideo(*size)
    for backend, rows in records.items():
        assert [r["index"] for r in rows] == list(range(frames))
        assert [r["blurred"] for r in rows] == [video.is_blurred(i) for i in range(frames)], backend
        for r in rows:
            assert np.asarray(r["score"]).shape == (3, 4)
            assert r["encoded_bytes"] > 0 and isinstance(r["sharpness"], float)
            assert (r["sharpness"] < 100.0) == r["blurred"]
        blurred = [i for i in range(frames) if video.is_blurred(i)]
        assert blurred and all(rows[i]["score"] == rows[i - 1]["score"] for i in blurred)  # prev_score kept
    for a, b in zip(records["numpy"], records["reference"]):
        assert_f32_close(a["score"], b["score"], ulps=ALGORITHM, scale=1.0)
        assert a["sharpness"] == pytest.approx(b["sharpness"], rel=1e-5)


def test_scores_match_the_reference_interpreter_run_directly(capsys, tmp_path):
    """The JSONL score is what cortex.reference computes on the same frames."""
    path = tmp_path / "s.jsonl"
    rc, _, _ = run_cli(capsys, "--frames", "3", "--mode", "motion", "--scores-jsonl", str(path), *SMALL)
    assert rc == 0
    runner = cortex.reference(cortex.build_l2_pipeline(96, 128), mode="motion")
    for record, frame in zip(read_jsonl(path), SyntheticVideo(96, 128).frames(3)):
        assert_f32_close(record["score"], runner(frame)[1], ulps=ALGORITHM, scale=1.0)


# ----------------------------------------------------------------------- videos, overlays, encoded frames


@pytest.mark.slow
def test_odd_sized_video_overlays_and_jpegs(capsys, tmp_path, odd_video):
    overlay, encoded = tmp_path / "overlay", tmp_path / "jpeg"
    rc, out, err = run_cli(
        capsys, str(odd_video), "--frames", "3", "--overlay", str(overlay), "--encoded", str(encoded), "--quiet"
    )
    assert rc == 0, err
    assert "100x150 (padded 128x160), 3 frames" in out  # pipeline rebuilt for the padded size
    pngs = sorted(overlay.glob("*.png"))
    assert len(pngs) == 3
    assert all(cv2.imread(str(p)).shape == (100 + band_height(150), 150, 3) for p in pngs)  # the frame, then the legend
    jpegs = sorted(encoded.glob("*.jpg"))
    assert len(jpegs) == 3 and all(cv2.imread(str(p)).shape == (100, 150, 3) for p in jpegs)  # cropped back


def test_overlay_as_a_video(capsys, tmp_path):
    dest = tmp_path / "heat.avi"
    rc, _, err = run_cli(capsys, "--frames", "3", "--overlay", str(dest), *SMALL)
    assert rc == 0, err
    capture = cv2.VideoCapture(str(dest))
    ok, first = capture.read()
    count = 1 + sum(1 for _ in iter(lambda: capture.read()[0], False))
    capture.release()
    assert ok and first.shape == (96 + band_height(128), 128, 3) and count == 3


def test_heat_overlay_marks_the_hottest_block_red():
    frame = np.full((64, 96, 3), 128, np.uint8)
    score = np.zeros((2, 3), np.float32)
    score[1, 2] = 1.0
    image = heat_overlay(frame, score, alpha=1.0)
    assert image.shape == frame.shape
    b, g, r = (int(c) for c in image[60, 90])
    assert r > 100 and b < 50  # JET's top is red
    b, g, r = (int(c) for c in image[2, 2])
    assert b > 100 and r < 50  # a zero score is blue


def test_heat_overlay_of_a_cropped_frame_is_the_padded_overlay_cropped():
    """Cells land on the pixels they scored even when the frame is not a whole number of blocks."""
    padded = np.random.default_rng(0).integers(0, 256, (128, 160, 3), dtype=np.uint8)
    score = np.random.default_rng(1).random((4, 5)).astype(np.float32)
    expected = heat_overlay(padded, score)[:100, :150]
    np.testing.assert_array_equal(heat_overlay(padded[:100, :150], score, block=32), expected)
    with pytest.raises(ValueError, match="give the block size"):
        heat_overlay(padded[:100, :150], score)


# ----------------------------------------------------------------------- pieces


def test_expose_blur_gate_appends_sharpness_and_condition():
    module = cortex.build_l2_pipeline(64, 64)
    assert expose_blur_gate(module, "l2_frame")
    module.verify()
    outputs = cortex_run.entry_function(module, "l2_frame").function_type.outputs.data
    assert [str(t) for t in outputs[2:]] == ["f32", "i1", "f32"]  # sharpness, blurred, threshold


def test_expose_blur_gate_leaves_a_gateless_pipeline_alone():
    module = cortex.parse(
        "func.func @l2_frame(%f: tensor<32x32x3xui8>) -> tensor<1x1xf32> {\n"
        "  %g = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>\n"
        "  %c = cortex.center_crop %g : tensor<32x32xf32> -> tensor<1x1xf32>\n"
        "  func.return %c : tensor<1x1xf32>\n}\n"
    )
    assert not expose_blur_gate(module, "l2_frame")


def test_progress_bar_draws_only_when_enabled():
    stream = io.StringIO()
    bar = progress_bar(3, enabled=True, stream=stream)
    bar.update(3)
    bar.close()
    assert "3/3" in stream.getvalue() and "frame" in stream.getvalue()
    quiet = io.StringIO()  # not a TTY: silent by default
    bar = progress_bar(3, stream=quiet)
    bar.update(3)
    bar.close()
    assert quiet.getvalue() == ""


def test_stage_table_shares_and_totals():
    times = StageTimes()
    times.add("a", "compilable", 0.030)
    times.add("b", "external", 0.010)
    text = times.table(frames=2, frame_seconds=0.050)
    rows = {line.split()[0]: line.split() for line in text.splitlines()[2:]}
    assert rows["a"][-2:] == ["15.000", "60.0%"]
    assert rows["(between"][-2:] == ["5.000", "20.0%"]
    assert rows["frame"][-2:] == ["25.000", "100.0%"]


# ----------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["/no/such/video.mp4"], "error: /no/such/video.mp4: no such video file"),
        (["--mode", "turbo"], "error: unknown mode 'turbo' (known: balanced, motion, power_save)"),
        (["--pipeline", "/no/such/pipeline.mlir"], "error: cannot read /no/such/pipeline.mlir"),
        (["--passes", "no-such-pass"], "error: --passes: unknown pass 'no-such-pass'"),
        (["--frames", "-1"], "error: --frames must be >= 0, got -1"),
        (["--size", "big"], "error: --size must read HxW"),
        (["--entry", "main"], "error: no function '@main' in the module (functions: l2_frame)"),
    ],
)
def test_errors_are_one_line(capsys, argv, message):
    rc, out, err = run_cli(capsys, *argv, "--quiet")
    assert rc != 0
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_a_static_pipeline_of_another_size_says_how_to_make_it_generic(capsys, tmp_path):
    static = tmp_path / "static.mlir"
    static.write_text(cortex.to_text(cortex.build_l2_pipeline(480, 640)))
    rc, out, err = run_cli(capsys, "--pipeline", str(static), "--size", "100x150", "--quiet")
    assert rc != 0 and len(err.strip().splitlines()) == 1
    assert "is built for 480x640 frames, but the video's frames are 100x150:" in err
    assert "tensor<?x?x3xui8>" in err


def test_bad_pipeline_text_is_located(capsys, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @l2_frame(%x: tensor<4xf32>) {\n  %y = cortex.nope %x\n}\n")
    rc, _, err = run_cli(capsys, "--pipeline", str(bad), "--quiet")
    assert rc == 1
    assert err.startswith(f"error: {bad}:2:") and "cortex.nope" in err and "Traceback" not in err


def test_console_script_error_exit(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "cortex.tools.cortex_run", str(tmp_path / "missing.mp4")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"error: {tmp_path / 'missing.mp4'}: no such video file"


# ----------------------------------------------------------------------- benchmarks


@pytest.mark.slow
def test_benchmarks_quick_smoke():
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run_benchmarks.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    ratios = [line for line in proc.stdout.splitlines() if line.startswith("ratio ")]
    names = " ".join(ratios)
    for mode in ("balanced", "power_save", "motion"):
        assert f"pipeline {mode} compilable stages numpy/reference" in names
        assert f"pipeline {mode} whole frame numpy/reference" in names
    assert "speed-up over the xDSL interpreter" in names
    assert "compile total 200/100 ops" in names
    for line in ratios:
        value = float(line.split(":")[1].split()[0])
        assert value > 0 and np.isfinite(value)


@pytest.mark.slow
def test_scaling_benchmark_quick_prints_each_engines_rate_and_work():
    """benchmarks/scaling.py --quick: a row per worker count, each engine's rate and CPU a frame (the processes
    engine's with its workers' and its caller's apart)."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "scaling.py"), "--quick", "--cores", "2"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = [line for line in proc.stdout.splitlines() if line.strip().startswith("workers")]
    assert len(rows) == 2
    for row in rows:
        threads, processes = row.split(" | ")[:2]
        assert "threads" in threads and ", cpu " in threads and "caller" not in threads
        cpu, caller = (float(processes.split(f"{k} ")[1].split(" ms/f")[0]) for k in (", cpu", "caller"))
        assert 0 < caller < cpu  # the workers' share counted in the engine's CPU


def test_the_exposed_gate_keeps_the_results_and_returns_the_gates_values():
    """Equivalence: the reference interpreter before and after the pass gives the same outputs, and the extra
    results are the gate's own (blurred exactly when sharpness < threshold)."""
    from cortex.video.synthetic import SyntheticVideo

    plain = cortex.build_l2_pipeline(64, 64)
    exposed = plain.clone()
    cortex.run_passes(exposed, "cortex-expose-blur-gate")
    a, b = cortex.reference(plain), cortex.reference(exposed)
    for frame in SyntheticVideo(64, 64).frames(10):
        want, got = a(frame), b(frame)
        assert len(got) == len(want) + 3
        for x, y in zip(want, got):
            assert np.asarray(x).tobytes() == np.asarray(y).tobytes()
        sharpness, blurred, threshold = got[len(want):]
        assert bool(blurred) == (sharpness < threshold)
