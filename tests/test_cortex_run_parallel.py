"""cortex-run --workers/--engine and several videos: same outputs as frame after frame."""

from __future__ import annotations

import argparse
import threading

import pytest
from helpers.videos import write_video

from cortex.tools.cortex_run import main

SMALL = ["--size", "96x128", "--quiet", "--dce-frames", "0"]


def run_cli(capsys, *argv):
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.slow
def test_workers_2_writes_the_same_scores_jsonl_and_jpegs_as_workers_1(capsys, tmp_path):
    files = {}
    for workers in ("1", "2", "3"):
        jsonl, jpegs = tmp_path / f"s{workers}.jsonl", tmp_path / f"j{workers}"
        rc, out, err = run_cli(capsys, *SMALL, "--frames", "45", "--workers", workers,
                               "--scores-jsonl", str(jsonl), "--encoded", str(jpegs))
        assert rc == 0, err
        files[workers] = (jsonl.read_bytes(), sorted((p.name, p.read_bytes()) for p in jpegs.iterdir()))
        if workers == "1":
            assert "frame-parallel" not in out
        else:
            assert f"{45} frames (frame-parallel, {workers} workers, threads)" in out
            assert "wall-clock and CPU time per stage" in out and "cores busy" in out
    assert files["1"] == files["2"] == files["3"]
    assert files["1"][0].count(b"\n") == 45 and b'"blurred": true' in files["1"][0]
    assert not [t for t in threading.enumerate() if t.name.startswith("cortex-frame")]


@pytest.mark.slow
def test_parallel_stage_table_lists_the_stages(capsys):
    rc, out, _ = run_cli(capsys, *SMALL, "--frames", "4", "--workers", "2", "--no-frame-log")
    assert rc == 0
    table = out.split("per-stage time")[1]
    for stage in ("gray", "text_roi", "scene_change", "encoder", "temporal_smooth"):
        assert f"  {stage} " in table


@pytest.mark.slow
def test_several_videos_one_after_the_other(capsys, tmp_path):
    paths = []
    for k, size in enumerate(((96, 128), (64, 96))):
        paths.append(str(write_video(tmp_path / f"v{k}.avi", 5, size)))
    rc, out, err = run_cli(capsys, *paths, "--workers", "2", "--quiet", "--no-frame-log", "--dce-frames", "0")
    assert rc == 0, err
    assert "v0.avi: 96x128, 5 frames" in out and "v1.avi: 64x96, 5 frames" in out
    assert "2 videos, 10 frames in" in out and "frames/s overall" in out


def test_parallel_flags_errors_are_one_line(capsys, tmp_path):
    rc, _, err = run_cli(capsys, *SMALL, "--workers", "0")
    assert rc == 1 and err.strip() == "error: --workers must be a whole number from 1 to 4096, got 0"
    rc, _, err = run_cli(capsys, *SMALL, "--runner", "reference", "--workers", "2")
    assert rc == 1 and "need a compiled backend" in err and len(err.strip().splitlines()) == 1
    rc, _, err = run_cli(capsys, "a.avi", "b.avi", "--scores-jsonl", str(tmp_path / "x.jsonl"), "--quiet")
    assert rc == 1 and "--scores-jsonl writes one video's outputs; give one video, not 2" in err


@pytest.mark.parametrize(("engine", "parallel"), [("threads", False), ("processes", True), ("ray", True)])
def test_one_worker_runs_inline_only_on_threads(engine, parallel):
    """`--workers 1 --engine processes|ray` still runs the frames on that engine (one worker process, a Ray
    task); one worker thread is the sequential loop itself."""
    from types import SimpleNamespace

    from cortex.tools.parallel_run import ParallelRunner

    args = argparse.Namespace(workers=1, engine=engine, ray_address=None)
    backend = SimpleNamespace(compiled=object(), labels={})
    runner = ParallelRunner.maybe(args, backend)
    assert (runner is not None) == parallel
    if runner is not None:
        assert (runner.engine, runner.workers) == (engine, 1)
