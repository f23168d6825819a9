"""cortex-run end to end on real clips nobody here made: OpenCV's sample videos.

Debian's `opencv-doc` ships them (scripts/test.sh installs it, as it does
mlir-22-tools); the tests skip when they are absent. Checked: the frame
count (a truncated file is reported), the encoder's JPEGs cropped back to
the clip's own size, a sensible gate rate with `--blur-threshold auto` on a
soft film clip where the fixed gate (100) turns the pipeline off, and a
readable overlay video with its legend.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import pytest

from cortex.tools.cortex_run import main
from cortex.video.overlay import band_height

DATA = Path("/usr/share/doc/opencv-doc/examples/data")
pytestmark = pytest.mark.skipif(not (DATA / "Megamind.avi").exists(), reason="opencv-doc's sample videos are not installed")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_tree_clip_is_truncated_cropped_and_overlaid(capsys, tmp_path):
    """tree.avi (320x240) declares 444 frames but only 68 decode: all 68 run, and the user is told."""
    jsonl, jpegs, overlay = tmp_path / "s.jsonl", tmp_path / "jpeg", tmp_path / "tree.mkv"
    rc, out, err = run_cli(capsys, DATA / "tree.avi", "--quiet", "--dce-frames", "0", "--no-frame-log",
                           "--scores-jsonl", jsonl, "--encoded", jpegs, "--overlay", overlay)
    assert rc == 0, err
    assert "240x320 (padded 256x320), 68 frames" in out
    assert "tree.avi ended after 68 frames, but its container declares 444" in err
    rows = records(jsonl)
    assert len(rows) == 68 and len(rows[0]["score"]) == 8 and len(rows[0]["score"][0]) == 10  # 256x320 / 32
    assert sum(r["blurred"] for r in rows) <= 0.2 * len(rows)
    files = sorted(jpegs.glob("*.jpg"))
    assert len(files) == 68 and {cv2.imread(str(p)).shape for p in files[::17]} == {(240, 320, 3)}
    capture = cv2.VideoCapture(str(overlay))
    shapes = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        shapes.append(frame.shape)
    capture.release()
    assert shapes == [(240 + band_height(320), 320, 3)] * 68


@pytest.mark.slow
def test_soft_film_clip_auto_gate_keeps_scoring(capsys, tmp_path):
    """Megamind.avi (720x528) is uniformly soft (sharpness ~35-115): the fixed gate skips nearly
    every frame, `auto` gates under 20 %."""
    frames = 60
    auto, fixed = tmp_path / "auto.jsonl", tmp_path / "fixed.jsonl"
    for setting, path in (("auto", auto), ("100", fixed)):
        rc, out, err = run_cli(capsys, DATA / "Megamind.avi", "--frames", frames, "--blur-threshold", setting,
                               "--mode", "power_save", "--quiet", "--no-frame-log", "--dce-frames", "0",
                               "--scores-jsonl", path)
        assert rc == 0, err
        assert f"528x720 (padded 544x736), {frames} frames" in out and "warning" not in err
    gated_auto = sum(r["blurred"] for r in records(auto))
    gated_fixed = sum(r["blurred"] for r in records(fixed))
    assert gated_auto < 0.2 * frames
    assert gated_fixed > 0.8 * frames
    assert max(max(map(max, r["score"])) for r in records(auto)) > 0  # the score is alive


@pytest.mark.slow
def test_street_clip_start_and_frames(capsys, tmp_path):
    """vtest.avi (768x576, 795 frames): --start and --frames pick a window; sharp footage is never gated."""
    jsonl = tmp_path / "s.jsonl"
    rc, out, err = run_cli(capsys, DATA / "vtest.avi", "--start", "780", "--frames", "30", "--quiet",
                           "--no-frame-log", "--dce-frames", "0", "--scores-jsonl", jsonl)
    assert rc == 0, err
    assert "576x768, 15 frames" in out  # 795 - 780 frames are left
    assert err.strip() == f"warning: {DATA / 'vtest.avi'} ended after 795 frames: 15 of the 30 frames requested from frame 780"
    assert not any(r["blurred"] for r in records(jsonl))


@pytest.mark.slow
@pytest.mark.parametrize("gate", [["--blur-threshold", "auto"], ["--blur-threshold", "2248", "--mode", "motion"]],
                         ids=["auto", "fixed-gating-half"])
def test_tree_clip_workers_2_writes_the_same_scores_jsonl(capsys, tmp_path, gate):
    """Frame-parallel on real footage: the same --scores-jsonl as frame after frame, with either gate."""
    files = {}
    for workers in ("1", "2"):
        jsonl = tmp_path / f"s{workers}.jsonl"
        rc, _, err = run_cli(capsys, DATA / "tree.avi", "--frames", "30", "--workers", workers, *gate, "--quiet",
                             "--dce-frames", "0", "--no-frame-log", "--scores-jsonl", jsonl)
        assert rc == 0, err
        files[workers] = jsonl.read_bytes()
    assert files["1"] == files["2"]
    blurred = [r["blurred"] for r in records(tmp_path / "s1.jsonl")]
    assert len(blurred) == 30 and (gate[1] == "auto" or 0 < sum(blurred) < 30)
