"""cortex-run as users meet it: honest rates, readable heat maps, frame numbers and times,
warnings and errors from generated code, versions.

Behaviour only; the one timing check compares the summary with the process's own wall-clock
under a generous bound (they measure the same interval, so load moves both).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path
from types import SimpleNamespace

import cv2
import numpy as np
import pytest

import cortex
from cortex.runtime.generated import GeneratedCodeError, call_generated, generated_origin
from cortex.runtime.numpy_executable import run_source
from cortex.tools.cortex_run import main
from cortex.tools.run_summary import RunClock, RunSummary, process_start
from cortex.video.overlay import (
    TEMPLATES,
    FrameInfo,
    band_layout,
    heat_levels,
    heat_overlay,
    legend_band,
    overlay_picture,
    wrap,
)
from cortex.video.source import Seconds, open_video, parse_position
from cortex.video.synthetic import SyntheticVideo

SMALL = ["--size", "96x128", "--quiet", "--no-frame-log", "--dce-frames", "0"]
DATA = Path("/usr/share/doc/opencv-doc/examples/data")


ON = {"numpy": ("--backend", "numpy"), "reference": ("--runner", "reference")}
"""The command-line arguments that run the NumPy backend or the reference interpreter."""


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# ----------------------------------------------------------------------- 1. throughput


@pytest.mark.slow
def test_summary_labels_three_rates_and_the_json_agrees(capsys, tmp_path):
    summary = tmp_path / "summary.json"
    rc, out, err = run_cli(capsys, *SMALL, "--frames", "8", "--workers", "1", "--summary-json", summary,
                           "--overlay", tmp_path / "o.mkv")
    assert rc == 0, err
    for label in ("end to end", "frame loop", "pipeline"):
        assert re.search(rf"^  {label} +[0-9.]+ frames/s", out, re.M), label
    assert "from cortex-run's start to every output written" in out and "the progress bar's rate" in out
    data = json.loads(summary.read_text())
    assert data["frames"] == 8 and data["mode"] == "balanced" and data["backend"] == "numpy"
    rates, seconds = data["frames_per_second"], data["seconds"]
    # the intervals nest: pipeline within the frame loop within end to end
    assert seconds["pipeline"] <= seconds["frame_loop"] <= seconds["end_to_end"]
    assert rates["end_to_end"] <= rates["frame_loop"] <= rates["pipeline"]
    assert rates["end_to_end"] == pytest.approx(8 / seconds["end_to_end"])
    parts = ("startup", "compile", "frame_loop", "closing_outputs")
    assert sum(seconds[p] for p in parts) <= seconds["end_to_end"] + 1e-6
    assert data["threads"]["opencv"] >= 1 and "gray" in data["stages_ms_per_frame"]
    printed = float(re.search(r"^  end to end +([0-9.]+)", out, re.M).group(1))
    assert printed == pytest.approx(rates["end_to_end"], abs=0.051)


def test_summary_names_the_threads_that_ran(capsys):
    rc, out, err = run_cli(capsys, *SMALL, "--frames", "4", "--workers", "2")
    assert rc == 0, err
    line = next(x for x in out.splitlines() if "threads:" in x)
    assert "2 frame workers" in line and re.search(r"OpenCV \d+", line) and "BLAS" in line


def test_summary_text_without_frames_or_threads_says_so():
    clock = RunClock(origin=0.0, compile_start=1.0, compile_end=2.0, loop_start=2.0, loop_end=4.0,
                     outputs_closed=5.0, pipeline_seconds=1.0)
    s = RunSummary("v", (4, 4), (4, 4), 10, "balanced", "numpy", clock)
    assert s.rates() == {"end_to_end": 2.0, "frame_loop": 5.0, "pipeline": 10.0}
    assert "threads: not sampled" in s.text()
    assert RunSummary("v", (4, 4), (4, 4), 0, "balanced", "numpy", clock).rates()["end_to_end"] is None


def test_process_start_is_before_now_and_after_boot():
    start = process_start()
    assert start <= time.perf_counter()


@pytest.mark.slow
def test_progress_bar_rate_agrees_with_the_summary(capsys):
    rc, out, err = run_cli(capsys, "--size", "96x128", "--no-frame-log", "--dce-frames", "0", "--frames", "30",
                           "--workers", "1", "--progress")
    assert rc == 0, err
    bar = [float(m) for m in re.findall(r"([0-9.]+)frame/s", err)]
    loop = float(re.search(r"^  frame loop +([0-9.]+)", out, re.M).group(1))
    assert bar and bar[-1] == pytest.approx(loop, rel=0.35)  # tqdm averages since the first frame too


@pytest.mark.slow
@pytest.mark.skipif(not (DATA / "Megamind.avi").exists(), reason="opencv-doc's Megamind.avi is not installed")
def test_end_to_end_time_runs_from_the_process_start_and_within_its_wall_clock(tmp_path):
    """Megamind.avi with an overlay: the summary's end-to-end clock starts at the process's start (before
    the script's first line, a second of the script's own work before cortex is imported) and ends within
    the process's wall-clock. Bounds on one clock, not a ratio of two timings: a loaded machine stretches a
    run, never reorders it. (The second is CPU work, not a sleep: time the process spends blocked is not
    start-up, tests/test_tools_smalls.py.)"""
    summary = tmp_path / "s.json"
    script = (
        "import time; first_line = time.perf_counter()\n"
        "while time.thread_time() < 1.0: pass\n"
        "import runpy, sys\n"
        "import cortex.tools.run_summary as rs\n"
        "real = rs.process_start\n"
        "def spy():\n"
        "    origin = real()\n"
        "    print(f'ORIGIN {origin!r} FIRST_LINE {first_line!r}', file=sys.stderr)\n"
        "    return origin\n"
        "rs.process_start = spy\n"
        "sys.argv[0] = 'cortex-run'\n"
        "runpy.run_module('cortex.tools.cortex_run', run_name='__main__')\n"
    )
    begin = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, str(DATA / "Megamind.avi"), "--frames", "40",
         "--overlay", str(tmp_path / "o.mkv"), "--side-by-side", "--quiet", "--no-frame-log",
         "--summary-json", str(summary)],
        capture_output=True, text=True, stdin=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - begin
    assert done.returncode == 0, done.stderr
    spied = re.findall(r"^ORIGIN (\S+) FIRST_LINE (\S+)$", done.stderr, re.M)
    assert len(spied) == 1, done.stderr  # the clock's origin is process_start(), read once
    origin, first_line = (float(v) for v in spied[0])
    assert origin <= first_line  # the process started before its first line ran (perf_counter is system-wide)
    report = json.loads(summary.read_text())
    seconds = report["seconds"]
    assert seconds["since"] == "process start"
    assert seconds["startup"] >= 1.0  # the second of work before the import is in it
    assert seconds["end_to_end"] <= wall  # never slower than the truth: it leaves out only the exit
    assert seconds["closing_outputs"] >= 0.0 and seconds["frame_loop"] > 0.0
    parts = seconds["startup"] + seconds["compile"] + seconds["frame_loop"] + seconds["closing_outputs"]
    assert seconds["end_to_end"] >= parts - 1e-9  # the parts follow one another inside it
    assert report["frames_per_second"]["end_to_end"] == pytest.approx(40 / seconds["end_to_end"])


# ----------------------------------------------------------------------- 2. heat maps


def test_absolute_scale_keeps_a_dull_frame_dull():
    score = np.full((2, 3), 0.1, np.float32)
    assert heat_levels(score, "absolute").max() == pytest.approx(0.1)
    assert heat_levels(score, "frame").max() == 1.0
    frame = np.zeros((64, 96, 3), np.uint8)
    absolute = heat_overlay(frame, score, alpha=1.0)
    per_frame = heat_overlay(frame, score, alpha=1.0, scale="frame")
    assert absolute[..., 2].max() < 60  # 0.1 on JET is dark blue, not red
    assert per_frame[..., 2].min() > 100  # the frame's own max stretched to red
    with pytest.raises(ValueError, match="unknown heat-map scale"):
        heat_levels(score, "log")


def test_kept_blocks_are_outlined_and_the_keep_cut_is_on_the_bar():
    frame = np.full((64, 96, 3), 90, np.uint8)
    score = np.array([[0.0, 0.8, 0.0], [0.0, 0.0, 0.0]], np.float32)
    kept = score >= 0.5 * score.max()
    info = FrameInfo(3, "balanced", keep=0.4, keep_ratio=0.5)
    plain = overlay_picture(frame, score, info, block=32)
    outlined = overlay_picture(frame, score, info, block=32, kept=kept)
    diff = np.any(plain != outlined, axis=2)[:64]
    ys, xs = np.nonzero(diff)
    assert 30 <= xs.min() <= 34 and 62 <= xs.max() <= 66 and ys.max() <= 34  # around block (0, 1) only
    band = legend_band(640, score, info)
    x, y, bar_w = band_layout(640).bar
    column = x + round(0.4 * (bar_w - 1))
    assert (band[y + 7, column] == 255).all()  # the white tick at 0.4 of the 0..1 bar
    assert not (band[y + 7, x + bar_w // 2 + 10] == 255).all()


@pytest.mark.parametrize("width", [160, 200, 320, 399, 400, 640, 2160])
def test_legend_fits_any_width(width):
    layout = band_layout(width)
    for line in wrap(list(TEMPLATES), layout.text_width, layout.font):
        if len(line) > 1:  # a slot alone on its line may only be cut at the right edge, not overlap
            used = sum(cv2.getTextSize(TEMPLATES[i] + "   ", cv2.FONT_HERSHEY_SIMPLEX, layout.font, 1)[0][0] for i in line)
            assert used <= layout.text_width + cv2.getTextSize("   ", cv2.FONT_HERSHEY_SIMPLEX, layout.font, 1)[0][0]
    for template in TEMPLATES:
        w = cv2.getTextSize(template, cv2.FONT_HERSHEY_SIMPLEX, layout.font, 1)[0][0]
        assert layout.text_x + w <= width, (width, template)
    info = FrameInfo(123456, "power_save", blurred=True, sharpness=99999, threshold=99999, time=9999.99, keep=0.5)
    band = legend_band(width, np.ones((2, 2), np.float32), info)
    assert band.shape == (layout.height, width, 3)
    assert band[:, -3:].max() == 32  # nothing drawn into the right margin


def test_side_by_side_panels_are_labelled():
    frame = np.full((96, 128, 3), 128, np.uint8)
    picture = overlay_picture(frame, np.zeros((3, 4), np.float32), FrameInfo(0, "balanced"), block=32,
                              encoded=cv2.imencode(".jpg", frame)[1].reshape(-1), side_by_side=True)
    for panel in range(3):
        corner = picture[70:96, panel * 128 : panel * 128 + 60]
        assert (corner == 0).any() and (corner > 200).any()  # a dark label box with white text


@pytest.mark.slow
def test_the_overlay_frame_is_named_and_stamped_with_its_source_number(capsys, tmp_path):
    dest = tmp_path / "png"
    rc, _, err = run_cli(capsys, *SMALL, "--frames", "2", "--start", "10", "--overlay", dest, "--heat-scale", "frame")
    assert rc == 0, err
    assert sorted(p.name for p in dest.iterdir()) == ["frame_00010.png", "frame_00011.png"]


# ----------------------------------------------------------------------- 3. frame numbers and time


def test_positions_parse_as_frames_or_times():
    assert parse_position("120") == 120
    assert parse_position("12.5s") == Seconds(12.5)
    assert parse_position("800ms") == Seconds(0.8)
    assert Seconds(1.0).first_frame(23.976) == 24 and Seconds(1.0).frame_count(25.0) == 25
    assert Seconds(0.04).first_frame(25.0) == 1  # exactly on a frame's timestamp: that frame
    for bad in ("1.5", "-3", "12x", "s", ""):
        with pytest.raises(ValueError):
            parse_position(bad)


@pytest.mark.slow
def test_jsonl_records_carry_the_source_frame_and_its_time(capsys, tmp_path):
    jsonl, jpegs = tmp_path / "s.jsonl", tmp_path / "jpg"
    rc, _, err = run_cli(capsys, *SMALL, "--start", "0.4s", "--frames", "0.2s", "--scores-jsonl", jsonl,
                         "--encoded", jpegs)
    assert rc == 0, err
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    fps = open_video(None).fps
    first = int(np.ceil(0.4 * fps - 1e-6))
    assert [r["index"] for r in rows] == list(range(round(0.2 * fps)))
    assert [r["frame"] for r in rows] == [first + i for i in range(len(rows))]
    assert all(r["time"] == pytest.approx(r["frame"] / fps) for r in rows)
    assert sorted(p.name for p in jpegs.iterdir()) == [f"frame_{r['frame']:05d}.jpg" for r in rows]


@pytest.mark.slow
def test_a_file_numbers_frames_from_its_start(capsys, tmp_path):
    path = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 64))
    for i in range(8):
        writer.write(np.full((64, 64, 3), 30 * i, np.uint8))
    writer.release()
    jsonl = tmp_path / "s.jsonl"
    rc, _, err = run_cli(capsys, path, "--quiet", "--no-frame-log", "--dce-frames", "0", "--start", "5",
                         "--scores-jsonl", jsonl)
    assert rc == 0, err
    rows = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert [(r["index"], r["frame"], r["time"]) for r in rows] == [(0, 5, 0.5), (1, 6, 0.6), (2, 7, 0.7)]


@pytest.mark.parametrize(("start", "frames", "count"), [(5, None, 3), (5, 2, 2), (2, 20, 6), (9, None, 0)])
def test_a_files_frame_count_is_what_its_start_and_frames_leave(tmp_path, start, frames, count):
    """The count the progress bar and the summary use: the frames after --start, at most --frames."""
    path = tmp_path / "v.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (32, 32))
    for i in range(8):
        writer.write(np.full((32, 32, 3), 30 * i, np.uint8))
    writer.release()
    source = open_video(path, frames=frames, start=start)
    assert source.frame_count == count and sum(1 for _ in source) == count


@pytest.mark.parametrize(("flag", "value", "message"), [
    ("--start", "-2", "error: --start must be >= 0, got -2"),
    ("--frames", "1.5", "error: --frames: a frame count is a whole number; for a time write '1.5s'"),
    ("--start", "soon", "error: --start: expected a frame count (120) or a time (12.5s, 800ms), got 'soon'"),
])
def test_bad_positions_are_one_line_errors(capsys, flag, value, message):
    rc, _, err = run_cli(capsys, *SMALL, flag, value)
    assert rc == 1 and err.strip() == message


# ----------------------------------------------------------------------- 5. generated code: warnings, errors


def test_a_black_frame_raises_no_warning_from_generated_code():
    compiled = cortex.compile(cortex.build_l2_pipeline(64, 96), mode="balanced")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(2):
            compiled(np.zeros((64, 96, 3), np.uint8))


def test_an_error_inside_generated_code_names_its_cortex_op():
    source = "def f(x):\n    y = x + 1  # gray: linalg.generic\n    return y.nope  # saliency: linalg.matmul\n"
    namespace = run_source(source, {}, "<cortex-numpy test>")
    with pytest.raises(GeneratedCodeError) as raised:
        call_generated(namespace["f"], (np.zeros(2),), "@frame")
    message = str(raised.value)
    assert message.startswith("@frame: AttributeError in the code generated for %saliency (linalg.matmul):")
    assert "<cortex-numpy" not in message
    assert generated_origin(source, 2) == "%gray (linalg.generic)"
    assert generated_origin(source, 1) == "line 1 of the generated source"
    with pytest.raises(KeyError):  # not from generated code: left as it is
        call_generated(lambda: {}["k"], (), "@frame")


def test_a_failing_compiled_pipeline_names_the_op_on_every_engine(monkeypatch):
    """An exception inside the compiled entry (here: a NumPy function of the generated code replaced by a
    failing one) names the op whose code raised it, called frame after frame or frames in flight."""
    compiled = cortex.compile(cortex.build_l2_pipeline(64, 96), mode="balanced")
    frames = list(SyntheticVideo(64, 96).frames(3))  # sharp: the gate lets them through to motion_map

    def broken(*args, **kwargs):
        raise FloatingPointError("injected")

    namespace = compiled._plain.__globals__  # the entry's own generated code
    monkeypatch.setitem(namespace, "np", SimpleNamespace(**{**vars(np), "abs": broken}))
    expected = (r"FloatingPointError in the code generated for %motion \(linalg.generic\): injected "
                r"\(line \d+ of the generated source")
    with pytest.raises(GeneratedCodeError, match=rf"^@l2_frame: {expected}"):
        for f in frames:
            compiled(f)
    split = compiled.loaded_split().parts["parallel"].fn.__globals__  # the frame split's own code
    monkeypatch.setitem(split, "np", SimpleNamespace(**{**vars(np), "abs": broken}))
    with pytest.raises(cortex.CortexError, match=rf"^frame \d+: the parallel part: {expected}"):
        list(compiled.run_video(iter(frames), workers=2))


def test_generated_code_runs_under_the_float_policy():
    source = "def f(x):\n    return x / x  # score: linalg.generic\n"
    f = run_source(source, {}, "<cortex-numpy test>")["f"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert np.isnan(call_generated(f, (np.zeros(2, np.float32),), "@frame")).all()


# ----------------------------------------------------------------------- 7. versions


def test_version_names_cortex_its_libraries_and_the_backend(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--runner", "reference", "--version"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.startswith(f"cortex-run {cortex.__version__} (xDSL ")
    for name in ("NumPy", "OpenCV", "backend reference"):
        assert name in out


def test_package_version_comes_from_pyproject():
    import tomllib

    root = Path(cortex.__file__).resolve().parent
    assert cortex.__version__ == tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


# ----------------------------------------------------------------------- 4. the pipeline, checked up front


def small_pipeline(tmp_path: Path, replace: tuple[str, str] | None = None) -> Path:
    text = cortex.to_text(cortex.build_l2_pipeline(96, 128))
    if replace:
        assert replace[0] in text
        text = text.replace(*replace)
    path = tmp_path / "p.mlir"
    path.write_text(text)
    return path


def test_a_wrong_entry_signature_is_one_error_before_any_frame(capsys, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text(
        "func.func @l2_frame(%frame: tensor<96x128x3xui8>) -> (f32, tensor<3x4xf32>) {\n"
        "  %gray = cortex.gray %frame : tensor<96x128x3xui8> -> tensor<96x128xf32>\n"
        "  %s = cortex.blur_detector %gray : tensor<96x128xf32> -> f32\n"
        "  %c = cortex.center_crop %gray : tensor<96x128xf32> -> tensor<3x4xf32>\n"
        "  func.return %s, %c : f32, tensor<3x4xf32>\n}\n"
    )
    rc, out, err = run_cli(capsys, "--pipeline", bad, *SMALL, "--frames", "2")
    assert rc == 1 and out == ""  # no table header, no frame
    assert err.strip() == (
        f"error: @l2_frame in {bad} has the signature (tensor<96x128x3xui8>) -> (f32, tensor<3x4xf32>), but "
        "cortex-run needs (tensor<HxWx3xui8>) -> (tensor<?xui8>, tensor<RxCxf32>, ...): result #0 must be the "
        "encoded JPEG's bytes, a 1-D ui8 tensor (it is f32)"
    )


def test_a_weight_the_mode_lacks_fails_before_any_frame_and_weight_sets_it(capsys, tmp_path):
    pipeline = small_pipeline(tmp_path, ('"ws"', '"wsal"'))
    jsonl = tmp_path / "s.jsonl"
    for backend in ("numpy", "reference"):
        rc, out, err = run_cli(capsys, "--pipeline", pipeline, *SMALL, "--frames", "2", *ON[backend],
                               "--scores-jsonl", jsonl)
        assert rc == 1 and out == "" and not jsonl.exists()
        assert err.strip() == (
            "error: mode 'balanced' has no value for the pipeline's weight 'wsal' (the mode sets: wc, wm, ws, wt): "
            "give it with --weight wsal=VALUE"
        )
    rc, out, err = run_cli(capsys, "--pipeline", pipeline, *SMALL, "--frames", "2", "--weight", "wsal=0.2",
                           "--scores-jsonl", jsonl)
    assert rc == 0, err
    assert len(jsonl.read_text().splitlines()) == 2


@pytest.mark.slow
def test_weight_overrides_the_mode_on_both_backends(capsys, tmp_path):
    scores = {}
    for backend in ("numpy", "reference"):
        for weights in ((), ("--weight", "wc=0", "--weight", "wt=0", "--weight", "ws=0", "--weight", "wm=0")):
            jsonl = tmp_path / f"{backend}{len(weights)}.jsonl"
            rc, _, err = run_cli(capsys, *SMALL, "--frames", "3", "--blur-threshold", "0", *ON[backend],
                                 *weights, "--scores-jsonl", jsonl)
            assert rc == 0, err
            scores[backend, bool(weights)] = np.array([json.loads(x)["score"] for x in jsonl.read_text().splitlines()])
    for backend in ("numpy", "reference"):
        assert scores[backend, False].max() > 0 and scores[backend, True].max() == 0  # every term weighed 0
    np.testing.assert_allclose(scores["numpy", True], scores["reference", True])


@pytest.mark.parametrize(("weight", "message"), [
    ("wcc=1", "error: --weight wcc: the pipeline reads no weight 'wcc' (it reads: blur_fraction, blur_threshold, wc, wm, "
             "ws, wt); did you mean 'wc'?"),
    ("wc", "error: --weight must read NAME=VALUE (e.g. --weight wc=0.4), got 'wc'"),
    ("wc=lots", "error: --weight wc: 'lots' is not a number"),
    ("wc=nan", "error: --weight wc: must be a finite number, got 'nan'"),
])
def test_bad_weights_are_one_line_errors(capsys, weight, message):
    rc, out, err = run_cli(capsys, *SMALL, "--frames", "1", "--weight", weight)
    assert rc == 1 and err.strip() == message and out == ""


def test_a_typo_in_score_fusion_terms_fails_the_verifier(tmp_path):
    text = cortex.to_text(cortex.build_l2_pipeline(96, 128)).replace('"text_roi", "saliency', '"text_rio", "saliency')
    with pytest.raises(cortex.CortexError, match=r"term #1 is 'text_rio', but its map is made by cortex.text_roi: "
                                                 r"the term must be 'text_roi'"):
        cortex.parse(text)
    swapped = cortex.to_text(cortex.build_l2_pipeline(96, 128)).replace(
        '"saliency_dft", "motion_map"', '"motion_map", "saliency_dft"')
    with pytest.raises(cortex.CortexError, match="term #2 is 'motion_map', but its map is made by cortex.saliency_dft"):
        cortex.parse(swapped)


def test_debug_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "--debug" in out and "--weight NAME=VALUE" in out and "--summary-json FILE" in out


# ----------------------------------------------------------------------- 7. cortex-opt as mlir-opt users type it


L2 = str(Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir")


def opt(capsys, *argv: str) -> tuple[int, str, str]:
    from cortex.tools.cortex_opt import main as opt_main

    rc = opt_main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_pass_pipeline_and_pass_flags_mean_the_same_as_p(capsys):
    spelled = [
        ["-p", "cortex-specialize-mode{mode=power_save},canonicalize,dce"],
        ["--pass-pipeline=builtin.module(cortex-specialize-mode{mode=power_save},canonicalize,dce)"],
        ["--pass-pipeline", "builtin.module(cortex-specialize-mode{mode=power_save},canonicalize,dce)"],
        ["--cortex-specialize-mode=mode=power_save", "--canonicalize", "--dce"],
        ["--cortex-specialize-mode='mode=power_save'", "--canonicalize", "--dce"],
    ]
    outputs = []
    for argv in spelled:
        rc, out, err = opt(capsys, L2, *argv)
        assert rc == 0, (argv, err)
        outputs.append(out)
    assert all(o == outputs[0] for o in outputs) and "saliency_dft" not in outputs[0]
    assert cortex.to_text(cortex.run_passes(cortex.parse(L2), "builtin.module(canonicalize)")) == cortex.to_text(
        cortex.run_passes(cortex.parse(L2), "canonicalize"))


def test_pass_flags_and_p_together_are_a_usage_error(capsys):
    rc, _, err = opt(capsys, L2, "--canonicalize", "-p", "cse")
    assert rc == 2 and "the pass pipeline is given 2 times" in err and "give it once" in err


def test_no_pass_is_shadowed_by_a_cortex_opt_option(capsys):
    from cortex.registry import all_passes

    rc, help_text, _ = opt(capsys, "--help")
    assert rc == 0
    options = set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", help_text))
    assert "pass-pipeline" in help_text
    assert not (options & set(all_passes())) - {"canonicalize", "cse", "cortex-dce"}  # named in the epilog's example


def test_a_type_mismatch_notes_the_prior_use(capsys, tmp_path):
    later = tmp_path / "later.mlir"
    later.write_text('func.func @f() -> i32 {\n  %b = arith.addi %c, %c : i32\n  %c = "test.op"() : () -> f32\n'
                     "  func.return %b : i32\n}\n")
    rc, _, err = opt(capsys, str(later), "--allow-unregistered-dialect")
    assert rc == 1
    lines = err.splitlines()
    assert lines[0] == f"{later}:3:3: error: Result %c is defined with type f32, but used with type i32"
    assert lines[3] == f"{later}:2:19: note: previously used here with type 'i32'"
    earlier = tmp_path / "earlier.mlir"
    earlier.write_text("func.func @f(%a: f32) -> i32 {\n  // %a is f32\n  %b = arith.addi %a, %a : i32\n"
                       "  func.return %b : i32\n}\n")
    rc, _, err = opt(capsys, str(earlier))
    lines = err.splitlines()
    assert rc == 1 and lines[3] == f"{earlier}:1:14: note: prior use here" and "func.func @f(%a" in lines[4]


def test_former_backend_reference_runs_the_interpreter(capsys):
    """`--backend reference` (the former spelling) warns and is `--runner reference`."""
    from cortex.tools.run_args import backend_of, build_parser

    args = build_parser().parse_args(["--backend", "reference"])
    assert args.runner == "reference" and backend_of(args) is None
    assert "--backend reference is deprecated: use --runner reference" in capsys.readouterr().err
    assert build_parser().parse_args(["--backend", "numpy"]).runner == "compiled"
