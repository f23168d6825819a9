"""cortex-run's and cortex-opt's outputs: where they may go, their mode, signals, read-back, empty runs.

- no output inside another output's folder (the --encoded or --overlay PNG
  folder), none that is an input (cortex-opt's -o and --graph-dot too);
- a symlink planted in a frame folder is refused, its target left alone;
- outputs get the user's umask, a replaced file keeps its mode;
- SIGTERM, SIGHUP and SIGINT leave no `.partial-*` file, exit 128 + signal;
- an overlay video whose frames decode to other pictures is a failed write;
- a run of no frame exits 1; stale frame files of a reused folder go; an
  image given as the video is called an image.
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import stat
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.videos import write_video

from cortex.tools import atomic, outputs
from cortex.tools.cortex_opt import main as opt_main
from cortex.tools.cortex_run import main as run_main
from cortex.tools.report_html import THUMB_WIDTH
from cortex.video.overlay import band_height

SMALL = ["--size", "96x128", "--quiet", "--no-frame-log", "--dce-frames", "0", "--frames", "3"]
IR = """func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  func.return %a : tensor<2xf32>
}
"""


def cortex_run(capsys, *argv) -> tuple[int, str]:
    rc = run_main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if ".partial-" in p.name)


# ----------------------------------------------------------------------- where outputs may go


@pytest.mark.slow
@pytest.mark.parametrize("flag, name", [("--report", "frame_00001.jpg"), ("--scores-jsonl", "scores.jsonl"),
                                        ("--summary-json", "sub/summary.json"), ("--overlay", "heat.avi")])
def test_an_output_inside_the_encoded_folder_is_refused(capsys, tmp_path, flag, name):
    encoded = tmp_path / "jpeg"
    encoded.mkdir()
    (encoded / "frame_00001.jpg").write_bytes(b"a frame of an earlier run")
    rc, err = cortex_run(capsys, *SMALL, "--encoded", encoded, flag, encoded / name)
    assert rc == 1
    assert err.strip() == (f"error: {flag} {encoded / name} is inside --encoded {encoded}, whose files this run "
                           "writes: give it a path outside that folder")
    assert (encoded / "frame_00001.jpg").read_bytes() == b"a frame of an earlier run"


def test_an_output_inside_the_overlay_png_folder_is_refused(capsys, tmp_path):
    overlay = tmp_path / "pngs"
    rc, err = cortex_run(capsys, *SMALL, "--overlay", overlay, "--report", overlay / "report.html")
    assert rc == 1 and f"--report {overlay / 'report.html'} is inside --overlay {overlay}" in err


@pytest.mark.slow
def test_a_symlink_planted_in_the_frame_folder_is_not_followed(capsys, tmp_path):
    encoded, outside = tmp_path / "jpeg", tmp_path / "precious.txt"
    encoded.mkdir()
    outside.write_text("keep me")
    (encoded / "frame_00001.jpg").symlink_to(outside)
    rc, err = cortex_run(capsys, *SMALL, "--encoded", encoded)
    assert rc == 1
    assert err.strip() == (f"error: cannot write {encoded / 'frame_00001.jpg'}: it is a symbolic link; "
                           f"refusing to follow it out of {encoded}")
    assert outside.read_text() == "keep me" and (encoded / "frame_00001.jpg").is_symlink()
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_a_symlink_planted_in_the_overlay_folder_is_not_followed(capsys, tmp_path):
    pngs, outside = tmp_path / "pngs", tmp_path / "precious.png"
    pngs.mkdir()
    outside.write_bytes(b"keep me")
    (pngs / "frame_00000.png").symlink_to(outside)
    rc, err = cortex_run(capsys, *SMALL, "--overlay", pngs)
    assert rc == 1 and "it is a symbolic link" in err
    assert outside.read_bytes() == b"keep me"


@pytest.mark.parametrize("flag", ["-o", "--graph-dot"])
def test_cortex_opt_refuses_to_replace_its_input(capsys, tmp_path, flag):
    source = tmp_path / "m.mlir"
    source.write_text(IR)
    rc = opt_main([str(source), flag, str(tmp_path / "." / "m.mlir")])
    err = capsys.readouterr().err
    assert rc != 0 and f"is the same file as the input file {source}: refusing to overwrite an input" in err
    assert source.read_text() == IR


# ----------------------------------------------------------------------- modes


@pytest.fixture
def umask_027():
    old = os.umask(0o027)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.slow
def test_new_outputs_get_the_umask_and_replaced_ones_keep_their_mode(capsys, tmp_path, umask_027):
    jsonl, summary, report, encoded = tmp_path / "s.jsonl", tmp_path / "s.json", tmp_path / "r.html", tmp_path / "jpeg"
    video = tmp_path / "o.avi"
    summary.write_text("{}")
    os.chmod(summary, 0o604)  # an existing file: its mode stays
    rc, err = cortex_run(capsys, *SMALL, "--scores-jsonl", jsonl, "--summary-json", summary, "--report", report,
                         "--encoded", encoded, "--overlay", video)
    assert rc == 0, err
    assert mode(summary) == 0o604
    assert {p.name: mode(p) for p in (jsonl, report, video, *encoded.iterdir())} == {
        p.name: 0o640 for p in (jsonl, report, video, *encoded.iterdir())
    }
    # a second run replaces the frame files: their mode, changed by the user, stays
    first = encoded / "frame_00000.jpg"
    os.chmod(first, 0o600)
    assert cortex_run(capsys, *SMALL, "--encoded", encoded)[0] == 0
    assert mode(first) == 0o600


def test_cortex_opt_output_gets_the_umask(capsys, tmp_path, umask_027):
    source, out = tmp_path / "m.mlir", tmp_path / "out.mlir"
    source.write_text(IR)
    assert opt_main([str(source), "-o", str(out)]) == 0
    assert mode(out) == 0o640


# ----------------------------------------------------------------------- signals


def test_remove_temporaries_removes_only_this_process_partial_files(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    ours = [atomic.Destination(a / "x.jsonl").temporary(), atomic.Destination(b / "y.avi").temporary()]
    theirs = b / f".y.partial-{os.getpid() + 1}-abcd.avi"
    theirs.write_text("another process's")
    kept = a / "x.jsonl"
    kept.write_text("done")
    assert all(p.exists() for p in ours)
    atomic.remove_temporaries()
    assert not any(p.exists() for p in ours) and theirs.exists() and kept.exists()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])
def test_a_signal_mid_run_leaves_no_partial_file(tmp_path, signum):
    """The run is signalled once it has written frames (a JSONL, a video and a frame being written).

    Every wait is for an event the test observes, never a time budget: the run's fourth frame-log line
    on its (unbuffered) standard output, read with a blocking read (by then frame 3's JPEG is written),
    then the process's exit; pytest-timeout is the net for a hang."""
    encoded = tmp_path / "jpeg"
    argv = ["--size", "64x96", "--frames", "100000", "--workers", "1", "--quiet",
            "--dce-frames", "0", "--encoded", encoded, "--scores-jsonl", tmp_path / "s.jsonl",
            "--overlay", tmp_path / "o.avi", "--report", tmp_path / "r.html"]
    proc = subprocess.Popen([sys.executable, "-m", "cortex.tools.cortex_run", *map(str, argv)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        rows = 0
        for line in proc.stdout:  # the frame log: a header, then one row per frame, each after its outputs
            rows += bool(re.match(r"\s*\d+\s", line))
            if rows == 4:
                break
        assert rows == 4, proc.stderr.read() if proc.stderr else ""  # the run ended before its fourth frame
        assert (encoded / "frame_00003.jpg").exists()
        proc.send_signal(signum)
        _, err = proc.communicate()  # the rows that follow are read too: a full pipe must not hold the run up
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signum, err
    assert err.strip().splitlines()[-1] in ("error: interrupted", f"error: terminated by {signum.name}")
    assert leftovers(tmp_path) == []


# ----------------------------------------------------------------------- overlay read-back


class LastFrameLostWriter:
    """cv2.VideoWriter whose last picture's bytes do not land (a black frame in its place): the count is right."""

    def __init__(self, *args):
        self.real = REAL_WRITER(*args)
        self.pending: np.ndarray | None = None

    def isOpened(self):
        return self.real.isOpened()

    def write(self, image):
        if self.pending is not None:
            self.real.write(self.pending)
        self.pending = image

    def release(self):
        if self.pending is not None:
            self.real.write(np.zeros_like(self.pending))
        self.real.release()


REAL_WRITER = cv2.VideoWriter


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".avi", ".mkv"])
def test_an_overlay_video_with_a_damaged_frame_is_an_error(capsys, tmp_path, monkeypatch, suffix):
    dest = tmp_path / f"heat{suffix}"
    monkeypatch.setattr(outputs.cv2, "VideoWriter", LastFrameLostWriter)
    rc, err = cortex_run(capsys, *SMALL, "--overlay", dest)
    assert rc == 1
    assert f"error: cannot write {dest}: frame 2 of the video written reads back as another picture" in err
    assert not dest.exists() and leftovers(tmp_path) == []


@pytest.mark.slow
def test_an_intact_overlay_video_passes_the_read_back(capsys, tmp_path):
    dest = tmp_path / "heat.avi"
    assert cortex_run(capsys, *SMALL, "--frames", "40", "--overlay", dest)[0] == 0
    assert outputs.count_readable_frames(dest, None) == 40


# ----------------------------------------------------------------------- empty runs, reused folders, images


@pytest.mark.slow
def test_a_run_of_no_frame_fails_and_writes_nothing(capsys, tmp_path):
    video = write_video(tmp_path / "clip.avi", frames=4)
    jsonl, summary = tmp_path / "s.jsonl", tmp_path / "s.json"
    rc, err = cortex_run(capsys, video, "--start", "10", "--quiet", "--dce-frames", "0", "--scores-jsonl", jsonl,
                         "--summary-json", summary)
    assert rc == 1
    assert err.strip().splitlines()[-1].startswith("error: no frame processed (")
    assert "starting at frame 10 leaves none" in err
    assert not jsonl.exists() and not summary.exists() and leftovers(tmp_path) == []


@pytest.mark.slow
def test_a_reused_encoded_folder_loses_only_the_stale_frames_this_tool_names(capsys, tmp_path):
    encoded = tmp_path / "jpeg"
    encoded.mkdir()
    for name in ("frame_00007.jpg", "frame_123456.jpg"):
        (encoded / name).write_bytes(b"an earlier run's frame")
    (encoded / "notes.txt").write_text("the user's")
    (encoded / "frame_00008.jpg.bak").write_text("the user's")
    rc, err = cortex_run(capsys, *SMALL, "--encoded", encoded)
    assert rc == 0
    assert sorted(p.name for p in encoded.iterdir()) == [
        "frame_00000.jpg", "frame_00001.jpg", "frame_00002.jpg", "frame_00008.jpg.bak", "notes.txt"
    ]
    assert f"note: removed 2 frame_NNNNN.jpg file(s) from {encoded} that this run did not write" in err


@pytest.mark.parametrize("name", ["photo.png", "photo_001.jpg"])
def test_an_image_is_called_an_image(capsys, tmp_path, name):
    image = tmp_path / name
    cv2.imwrite(str(image), np.zeros((64, 64, 3), np.uint8))
    rc, err = cortex_run(capsys, image, "--quiet")
    assert rc == 1
    assert err.strip() == f"error: {image}: is an image, not a video (cortex-run reads video files: .mp4, .avi, .mkv ...)"


def test_a_file_that_is_not_a_video_is_not_called_missing(capsys, tmp_path):
    text = tmp_path / "notes.mp4"
    text.write_text("not a video")
    rc, err = cortex_run(capsys, text, "--quiet")
    assert rc == 1 and "no such" not in err and "cannot open this video" in err


# ----------------------------------------------------------------------- option checks, padding


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "-1"])
def test_a_blur_threshold_that_is_not_a_number_at_least_zero_is_rejected(capsys, value):
    with pytest.raises(SystemExit) as e:
        run_main([f"--blur-threshold={value}"])
    assert e.value.code == 2
    assert f"argument --blur-threshold: must be >= 0, got '{value}'" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("workers", ["1", "2"])
def test_outputs_show_the_frame_without_its_padding(capsys, tmp_path, workers):
    """A 100x130 frame is padded to 128x160 for the pipeline; overlays, report pictures and JPEGs are 100x130."""
    pngs, encoded, report = tmp_path / "pngs", tmp_path / "jpeg", tmp_path / "r.html"
    rc, err = cortex_run(capsys, "--size", "100x130", "--frames", "2", "--quiet", "--no-frame-log", "--dce-frames",
                         "0", "--workers", workers, "--overlay", pngs, "--encoded", encoded, "--report", report)
    assert rc == 0, err
    height = 100 + band_height(130)
    assert cv2.imread(str(pngs / "frame_00000.png")).shape == (height, 130, 3)
    assert cv2.imread(str(encoded / "frame_00000.jpg")).shape == (100, 130, 3)
    thumb = re.search(r'src="data:image/png;base64,([^"]+)"', report.read_text()).group(1)
    picture = cv2.imdecode(np.frombuffer(base64.b64decode(thumb), np.uint8), cv2.IMREAD_COLOR)
    assert picture.shape == (round(height * THUMB_WIDTH / 130), THUMB_WIDTH, 3)


# ----------------------------------------------------------------------- a run that stops before its first frame


def failing_at(monkeypatch, index: int) -> None:
    """Outputs.write raises at the run's frame `index` (the frames before it are written whole)."""
    write = outputs.Outputs.write

    def failing(self, at, *args, **kwargs):
        if at == index:
            raise atomic.OutputError(f"cannot write frame {at}: made to fail")
        return write(self, at, *args, **kwargs)

    monkeypatch.setattr(outputs.Outputs, "write", failing)


def test_an_error_at_the_first_frame_leaves_no_output_and_no_folder_it_made(capsys, tmp_path, monkeypatch):
    failing_at(monkeypatch, 0)
    jsonl, encoded, overlay = tmp_path / "s.jsonl", tmp_path / "new" / "jpeg", tmp_path / "pngs"
    rc, err = cortex_run(capsys, *SMALL, "--scores-jsonl", jsonl, "--encoded", encoded, "--overlay", overlay)
    assert rc == 1 and "made to fail" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_an_error_at_the_first_frame_leaves_a_folder_that_was_there(capsys, tmp_path, monkeypatch):
    failing_at(monkeypatch, 0)
    encoded = tmp_path / "jpeg"
    encoded.mkdir()
    (encoded / "frame_00009.jpg").write_bytes(b"an earlier run's frame")
    assert cortex_run(capsys, *SMALL, "--encoded", encoded, "--overlay", tmp_path / "o" / "heat.avi")[0] == 1
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == ["jpeg", "jpeg/frame_00009.jpg"]


def test_an_error_after_a_frame_keeps_that_frame_whole(capsys, tmp_path, monkeypatch):
    failing_at(monkeypatch, 1)
    jsonl, encoded = tmp_path / "s.jsonl", tmp_path / "jpeg"
    assert cortex_run(capsys, *SMALL, "--scores-jsonl", jsonl, "--encoded", encoded)[0] == 1
    assert [json.loads(line)["index"] for line in jsonl.read_text().splitlines()] == [0]
    assert sorted(p.name for p in encoded.iterdir()) == ["frame_00000.jpg"]


def test_the_processes_engine_failing_to_start_leaves_no_output(tmp_path):
    """The engine's error comes before the first frame (shared memory unusable): nothing is left behind."""
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "cortex.tools.cortex_run", *SMALL, "--engine", "processes", "--workers", "2",
         "--scores-jsonl", str(tmp_path / "s.jsonl"), "--encoded", str(out / "jpeg")],
        capture_output=True, text=True, timeout=600, env={**os.environ, "CORTEX_SHM_DIR": str(tmp_path / "missing")},
    )
    assert done.returncode == 1 and "shared memory is unusable" in done.stderr, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []
