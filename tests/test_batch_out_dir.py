"""cortex-run --out-dir: several videos as a batch job (per-video folders, a manifest, reruns, failures)."""

from __future__ import annotations

import json

import pytest
from helpers.batch import clip, manifest

from cortex.tools.cortex_run import main

pytestmark = pytest.mark.xdist_group("processes")  # one worker: the shared-memory checks see every block

FAST = ["--quiet", "--no-frame-log", "--dce-frames", "0", "--frames", "4"]


def run_cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["threads", "processes"])
def test_out_dir_equals_single_video_runs(capsys, tmp_path, engine):
    a, b = clip(tmp_path / "a.avi"), clip(tmp_path / "b.avi", size=(64, 128))
    out = tmp_path / "out"
    rc, _, err = run_cli(capsys, a, b, *FAST, "--out-dir", str(out), "--engine", engine, "--workers", "2",
                         "--encoded", "jpeg")
    assert rc == 0, err
    for video, stem in ((a, "a"), (b, "b")):
        alone = tmp_path / f"{stem}.jsonl"
        rc, _, err = run_cli(capsys, video, *FAST, "--scores-jsonl", str(alone))
        assert rc == 0, err
        assert (out / stem / "scores.jsonl").read_bytes() == alone.read_bytes()
        assert json.loads((out / stem / "summary.json").read_text())["frames"] == 4
        assert len(list((out / stem / "jpeg").iterdir())) == 4
    entries = manifest(out)
    assert [e["status"] for e in entries] == ["done", "done"] and [e["frames"] for e in entries] == [4, 4]
    assert entries[0]["key"] != entries[1]["key"]  # the key covers each video's own file
    assert entries[0]["error"] is None and entries[0]["warnings"] == []


@pytest.mark.slow
def test_rerun_skips_done_videos_and_force_recomputes(capsys, tmp_path):
    a = clip(tmp_path / "a.avi")
    out = tmp_path / "out"
    assert run_cli(capsys, a, *FAST, "--out-dir", str(out))[0] == 0
    scores = out / "a" / "scores.jsonl"
    before = scores.stat().st_mtime_ns
    rc, stdout, _ = run_cli(capsys, a, *FAST, "--out-dir", str(out))
    assert rc == 0 and "done before" in stdout and scores.stat().st_mtime_ns == before
    rc, _, _ = run_cli(capsys, a, *FAST, "--out-dir", str(out), "--mode", "motion")  # another key: run again
    assert rc == 0 and scores.stat().st_mtime_ns != before
    before = scores.stat().st_mtime_ns
    rc, stdout, _ = run_cli(capsys, a, *FAST, "--out-dir", str(out), "--mode", "motion", "--force")
    assert rc == 0 and "done before" not in stdout and scores.stat().st_mtime_ns != before
    assert len(manifest(out)) == 1


@pytest.mark.slow
def test_a_corrupt_clip_fails_alone(capsys, tmp_path):
    a, c = clip(tmp_path / "a.avi"), clip(tmp_path / "c.avi")
    bad = tmp_path / "bad.avi"
    bad.write_bytes(b"not a video at all" * 100)
    out = tmp_path / "out"
    rc, _, err = run_cli(capsys, a, str(bad), c, *FAST, "--out-dir", str(out))
    assert rc == 1
    assert err.strip().splitlines()[-1].startswith("error: 1 of 3 videos failed: ") and "bad.avi" in err.splitlines()[-1]
    status = {e["folder"]: e["status"] for e in manifest(out)}
    assert status == {"a": "done", "bad": "failed", "c": "done"}
    assert [e["error"] for e in manifest(out) if e["status"] == "failed"][0]
    assert (out / "c" / "scores.jsonl").exists()


@pytest.mark.slow
def test_stem_collisions_get_numbered_folders(capsys, tmp_path):
    one, two = clip(tmp_path / "x" / "clip.avi"), clip(tmp_path / "y" / "clip.avi", size=(64, 128))
    out = tmp_path / "out"
    assert run_cli(capsys, one, two, *FAST, "--out-dir", str(out))[0] == 0
    assert [e["folder"] for e in manifest(out)] == ["clip", "clip-2"]
    assert (out / "clip" / "scores.jsonl").read_bytes() != (out / "clip-2" / "scores.jsonl").read_bytes()


@pytest.mark.parametrize("name", ["../escape", "/tmp/abs"])
def test_outputs_must_stay_in_the_video_folder(capsys, tmp_path, name):
    a = clip(tmp_path / "a.avi")
    rc, _, err = run_cli(capsys, a, *FAST, "--out-dir", str(tmp_path / "out"), "--encoded", name)
    assert rc == 1 and "inside each video's folder" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_cli(capsys, a, *FAST, "--out-dir", str(tmp_path / "out"), "--scores-jsonl", "s.jsonl")
    assert rc == 1 and "--out-dir writes each video's scores.jsonl" in err



@pytest.mark.parametrize("bad", [["--side-by-side"], ["--frames", "-3"], ["--start", "soon"], ["--passes", "no-such-pass"],
                                 ["--weight", "wc"], ["--mode", "turbo"]], ids=" ".join)
def test_bad_options_are_refused_once_before_any_video(capsys, tmp_path, bad):
    a, b = clip(tmp_path / "a.avi"), clip(tmp_path / "b.avi")
    rc, _, err = run_cli(capsys, a, b, *FAST, "--out-dir", str(tmp_path / "out"), *bad)
    assert rc == 1 and len(err.strip().splitlines()) == 1 and "videos failed" not in err, err
    assert not (tmp_path / "out").exists()
