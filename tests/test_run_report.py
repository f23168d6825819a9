"""`cortex-run --report`: the HTML run report, its pieces, and the page in a real browser.

The browser test loads the page in headless Chromium (Debian's `chromium`, installed by
scripts/test.sh): no console message at all, and a screenshot in which the plot's line
colours appear. It is skipped, saying why, where Chromium is absent.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

import cortex
from cortex.passes.expose_gate import expose_blur_gate
from cortex.passes.expose_scene_change import expose_scene_change
from cortex.tools.cortex_run import entry_function, main
from cortex.tools.report_html import FrameFacts, plot_svg, stage_graph
from cortex.video.synthetic import SCENE_LENGTH, SyntheticVideo

SMALL = ["--size", "96x128", "--quiet", "--no-frame-log", "--dce-frames", "0"]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> tuple[Path, dict, str]:
    """A 45-frame synthetic run (two scene cuts, gated frames) with --report and --summary-json."""
    folder = tmp_path_factory.mktemp("report")
    page, summary = folder / "report.html", folder / "summary.json"
    rc = main([*SMALL, "--frames", "45", "--workers", "1", "--report", str(page), "--summary-json", str(summary),
               "--side-by-side"])
    assert rc == 0
    return page, json.loads(summary.read_text()), page.read_text()


@pytest.mark.slow
def test_the_report_is_one_self_contained_page(report):
    _, _, text = report
    assert text.startswith("<!DOCTYPE html>") and text.count("<svg") == 2
    # nothing to fetch: no URL but the SVG namespace, no script
    urls = set(re.findall(r"""(?:src|href)\s*=\s*["']?([a-z]+:)""", text)) | set(re.findall(r"url\((?!#)", text))  # url(#id): in-page
    assert urls <= {"data:"} and "<script" not in text and "@import" not in text
    assert set(re.findall(r"https?://[^\s\"')]+", text)) == {"http://www.w3.org/2000/svg"}
    thumbs = re.findall(r'src="data:image/png;base64,([^"]+)"', text)
    assert len(thumbs) == 6  # thumbnails spread over the run
    image = cv2.imdecode(np.frombuffer(base64.b64decode(thumbs[0]), np.uint8), cv2.IMREAD_COLOR)
    assert image.shape[1] == 360 and image.shape[1] > 1.5 * image.shape[0]  # --side-by-side: three 128-px panels


@pytest.mark.slow
def test_the_report_marks_what_the_run_saw(report):
    _, summary, text = report
    video = SyntheticVideo(96, 128)
    gated = [i for i in range(45) if video.is_blurred(i)]
    assert summary["skipped_by_blur_gate"] == len(gated) > 0
    assert f"auto ({len(gated)} frames gated)" in text
    # red bands: one per gated frame in each of the two panels
    assert text.count('fill="#d62728" fill-opacity="0.18"/>') == 2 * len(gated) + 1  # + the legend's swatch
    cuts = text.count('stroke="#9467bd" stroke-width="1.4"')
    # each cut, and not the first frame: it is the start (measured against the all-zeros initial state)
    assert cuts == len(range(SCENE_LENGTH, 45, SCENE_LENGTH)) > 0
    assert text.count('class="tick">start</text>') == 1
    assert f"{cuts} (the first frame is the start, not a cut)" in text
    for stage in ("gray", "text_roi", "encoder", "temporal_smooth"):
        assert f">{stage}</text>" in text and f"<td>{stage}</td>" in text


@pytest.mark.slow
def test_the_scene_probe_reports_the_value_the_pipeline_used_on_every_engine():
    module = cortex.build_l2_pipeline(96, 128)
    expose_blur_gate(module, "l2_frame")
    probe = expose_scene_change(module, entry_function(module, "l2_frame"))
    assert probe is not None and probe.index == 5 and probe.reset_threshold == 0.5
    gate = {"blur_threshold": 0.0, "blur_fraction": 0.5}
    frames = list(SyntheticVideo(96, 128).frames(30))
    reference = cortex.reference(module, mode="balanced", weights=gate)
    compiled = cortex.compile(module, mode="balanced", weights=gate)
    ref = np.array([reference(f)[probe.index] for f in frames], np.float32)
    out = np.array([compiled(f)[probe.index] for f in frames], np.float32)
    np.testing.assert_array_equal(np.isnan(ref), np.isnan(out))  # NaN exactly where the gate skipped scoring
    np.testing.assert_allclose(out[~np.isnan(out)], ref[~np.isnan(ref)], rtol=1e-5, atol=1e-6)
    assert (ref[np.isfinite(ref)] > 0.5).sum() == 2  # the first frame and the cut at 20


def test_the_stage_graph_follows_values_through_the_blur_gate():
    nodes = stage_graph(cortex.build_l2_pipeline(96, 128), {"gray": 1.0}, removed=("saliency_dft",))
    by_name = {n.name: n for n in nodes}
    names = [n.name for n in nodes]

    def preds(name: str) -> set[str]:
        return {names[p] for p in by_name[name].preds}

    assert preds("blur_detector") == {"gray"}
    assert preds("score_fusion") == {"center_crop", "text_roi", "saliency_dft", "motion_map"}
    assert "temporal_smooth" in preds("encoder")  # through the scf.if's yield
    assert by_name["gray"].ms == 1.0 and by_name["saliency_dft"].removed and not by_name["gray"].removed


def test_the_plot_marks_gated_frames_and_cuts():
    frames = [FrameFacts(10 + i, (10 + i) / 25, 0.2, 0.6, 500.0, 200.0, i in (3, 4), 0.9 if i == 6 else 0.1, i == 6)
              for i in range(10)]
    svg = plot_svg(frames)
    assert svg.count('fill-opacity="0.18"/>') == 2 * 2 + 1 and svg.count('stroke="#9467bd" stroke-width="1.4"') == 1
    assert ">10</text>" in svg and ">19</text>" in svg  # the axis is the source frame number
    assert "no frames" in plot_svg([])


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test.sh installs Debian's chromium)")
def test_the_report_loads_in_chromium_without_console_messages(report, tmp_path):
    page, _, _ = report
    shot = tmp_path / "shot.png"
    done = subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--enable-logging=stderr", "--v=0",
         f"--screenshot={shot}", "--window-size=1200,1800", "--hide-scrollbars", page.as_uri()],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == []
    image = cv2.imread(str(shot))
    assert image is not None and image.shape[:2] == (1800, 1200)

    def has(colour_hex: str) -> bool:
        r, g, b = (int(colour_hex[i : i + 2], 16) for i in (1, 3, 5))
        return bool((np.abs(image.astype(int) - [b, g, r]).sum(axis=2) < 30).sum() > 50)

    for colour in ("#1f77b4", "#d62728", "#2ca02c", "#4c78a8", "#f58518"):  # plot lines, graph boxes
        assert has(colour), colour


@pytest.mark.slow
def test_every_stage_has_its_cpu_time_beside_its_wall_clock(report):
    """The summary and the report give each stage's thread CPU time next to its wall-clock; a
    thread cannot use more CPU than the time it spent in the stage."""
    _, summary, text = report
    stages = summary["stages_ms_per_frame"]
    assert stages and all(s["cpu_ms_per_frame"] is not None for s in stages.values())
    for name, s in stages.items():
        assert 0.0 <= s["cpu_ms_per_frame"] <= 1.05 * s["ms_per_frame"] + 0.05, (name, s)
    assert sum(s["cpu_ms_per_frame"] for s in stages.values()) > 0
    assert "<th>wall ms/frame</th><th>thread CPU ms/frame</th>" in text and "time.thread_time" in text


def test_the_first_frame_is_the_start_not_a_scene_cut():
    """Frame 0's scene measure is taken against the all-zeros initial state: far above any threshold on every
    clip. The recorder marks it as the start; a later frame with the same measure is a cut."""
    from types import SimpleNamespace

    from cortex.passes.expose_scene_change import SceneProbe
    from cortex.tools.report_html import ReportRecorder

    recorder = ReportRecorder(SceneProbe(2, 0.5))
    for index in range(3):
        info = SimpleNamespace(index=10 + index, time=index / 25, sharpness=None, threshold=None, blurred=None)
        recorder(index, info, np.zeros((2, 2)), (None, None, 0.9 if index != 1 else 0.1),
                 lambda: np.zeros((8, 8, 3), np.uint8))
    assert [(f.start, f.cut) for f in recorder.frames] == [(True, False), (False, False), (False, True)]
    svg = plot_svg(recorder.frames)
    assert svg.count('stroke="#9467bd" stroke-width="1.4"') == 1 and ">start</text>" in svg


def test_the_terminal_stage_table_puts_cpu_beside_wall_clock_where_it_was_measured():
    from cortex.frame_runners import StageTimes

    timed = StageTimes()
    timed.add("gray", "compilable", 0.010, calls=None, cpu_seconds=0.004)
    timed.add("text_roi", "external", 0.030, calls=None, cpu_seconds=0.012)
    table = timed.table(10, 0.05)
    head = table.splitlines()[1]
    assert head.split() == ["stage", "kind", "ms/frame", "thread", "CPU", "ms/frame", "share"]
    assert re.search(r"gray\s+compilable\s+1\.000\s+0\.400\s", table)
    assert "time.thread_time" in table
    interpreted = StageTimes()  # the reference interpreter's timer takes no CPU time: no column, no note
    interpreted.add("gray", "compilable", 0.010)
    assert "CPU" not in interpreted.table(10)
