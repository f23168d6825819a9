"""cortex-run's outputs and inputs as a user meets them.

No output is ever lost silently: every write is atomic, and a failed one
(a full disk, injected here, and on a real 64 kB tmpfs where the test may
mount one) exits 1 with one line naming the file and leaves no
half-written file behind. A user's video runs to its end; an early end and
undecodable frames are reported; `--size` is for the synthetic video only.
"""

from __future__ import annotations

import errno
import json
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest
from helpers.videos import write_video

from cortex.tools import atomic, outputs
from cortex.tools.cortex_run import main
from cortex.video import source as video_source
from cortex.video.overlay import band_height
from cortex.video.synthetic import SyntheticVideo

SMALL = ["--size", "96x128", "--quiet", "--dce-frames", "0"]
CLIP = (100, 150)  # a user video: a size the synthetic one is not


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if ".partial-" in p.name)


def read_frames(path: Path) -> list[np.ndarray]:
    capture = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        frames.append(frame)
    capture.release()
    return frames


# ----------------------------------------------------------------------- a full disk, injected


def enospc_after(monkeypatch, calls: int):
    """Make the atomic writer's low-level write fail with ENOSPC after `calls` successful writes."""
    real = atomic.write_all
    count = {"n": 0}

    def write_all(fd, data):
        count["n"] += 1
        if count["n"] > calls:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(atomic, "write_all", write_all)


def test_jsonl_on_a_full_disk_fails_loudly_and_leaves_no_cut_record(capsys, tmp_path, monkeypatch):
    jsonl = tmp_path / "scores.jsonl"
    jsonl.write_text('{"old": true}\n')  # a previous run's complete file stays as it was
    enospc_after(monkeypatch, 3)
    rc, _, err = run_cli(capsys, "--frames", "6", "--scores-jsonl", jsonl, *SMALL)
    assert rc == 1
    assert err.strip().splitlines()[-1] == f"error: cannot write {jsonl}: No space left on device"
    assert jsonl.read_text() == '{"old": true}\n'
    assert leftovers(tmp_path) == []


def test_jpeg_on_a_full_disk_fails_loudly_and_leaves_no_truncated_jpeg(capsys, tmp_path, monkeypatch):
    encoded = tmp_path / "jpeg"
    enospc_after(monkeypatch, 2)
    rc, _, err = run_cli(capsys, "--frames", "5", "--encoded", encoded, *SMALL)
    assert rc == 1
    assert f"error: cannot write {encoded / 'frame_00002.jpg'}: No space left on device" in err
    jpegs = sorted(encoded.glob("*.jpg"))
    assert [p.name for p in jpegs] == ["frame_00000.jpg", "frame_00001.jpg"]
    assert all(cv2.imread(str(p)) is not None for p in jpegs)  # the ones written are whole
    assert leftovers(tmp_path) == []


class FrameDroppingWriter:
    """cv2.VideoWriter whose writes after the second are lost, as on a full disk (OpenCV does not say)."""

    def __init__(self, *args):
        self.real = REAL_WRITER(*args)
        self.count = 0

    def isOpened(self):
        return self.real.isOpened()

    def write(self, image):
        self.count += 1
        if self.count <= 2:
            self.real.write(image)

    def release(self):
        self.real.release()


REAL_WRITER = cv2.VideoWriter


@pytest.mark.slow
def test_overlay_video_that_does_not_read_back_whole_is_an_error(capsys, tmp_path, monkeypatch):
    dest = tmp_path / "heat.mkv"
    monkeypatch.setattr(outputs.cv2, "VideoWriter", FrameDroppingWriter)
    rc, _, err = run_cli(capsys, "--frames", "5", "--overlay", dest, *SMALL)
    assert rc == 1
    assert f"error: cannot write {dest}: the video written reads back 2 of 5 frames" in err
    assert not dest.exists() and leftovers(tmp_path) == []


@pytest.mark.parametrize("workers", ["1", "2"])
def test_an_interrupted_run_keeps_only_whole_outputs(capsys, tmp_path, monkeypatch, workers):
    """A failure mid-run (here: reading frame 3 is interrupted) exits 130; what was written is whole.

    `--workers 2` (the default on two cores) runs frame-parallel: frames are
    read ahead, so fewer than three may have been written when it stops.
    """
    from cortex.tools import cortex_run, parallel_run

    owner, name = (cortex_run, "run_frames") if workers == "1" else (parallel_run.ParallelRunner, "run_frames")
    real = getattr(owner, name)

    def interrupted(frames):
        for i, frame in enumerate(frames):
            if i == 3:
                raise KeyboardInterrupt
            yield frame

    if workers == "1":
        def failing_frames(backend, frames, *args, **kwargs):
            return real(backend, interrupted(frames), *args, **kwargs)
    else:
        def failing_frames(self, frames, *args, **kwargs):
            return real(self, interrupted(frames), *args, **kwargs)

    monkeypatch.setattr(owner, name, failing_frames)
    jsonl, video = tmp_path / "s.jsonl", tmp_path / "o.avi"
    rc, _, err = run_cli(capsys, "--frames", "6", "--workers", workers, "--scores-jsonl", jsonl, "--overlay", video, *SMALL)
    assert rc == 130 and "interrupted" in err
    written = [json.loads(line)["index"] for line in jsonl.read_text().splitlines()] if jsonl.exists() else []
    assert written == [0, 1, 2] if workers == "1" else written == list(range(len(written))) and len(written) <= 3
    if written:
        assert len(read_frames(video)) == len(written)
    else:  # stopped before its first frame was written: no output at all, not an empty one
        assert not jsonl.exists() and not video.exists()
    assert leftovers(tmp_path) == []


# ----------------------------------------------------------------------- a real full disk

@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 kB tmpfs (needs root and a kernel that allows the mount; skipped otherwise)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=False)


@pytest.mark.slow
@pytest.mark.parametrize("flag, name", [("--scores-jsonl", "scores.jsonl"), ("--encoded", "jpeg"),
                                        ("--overlay", "heat.avi"), ("--overlay", "pngs")])
def test_a_real_full_disk_fails_loudly(capsys, tiny_disk, flag, name):
    (tiny_disk / "filler").write_bytes(bytes(60 * 1024))  # about one page is left
    dest = tiny_disk / name
    rc, _, err = run_cli(capsys, "--frames", "100", flag, dest, *SMALL)
    assert rc == 1, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"error: cannot write {dest}") and "\n" not in last
    assert leftovers(tiny_disk) == []
    for path in tiny_disk.rglob("*.jpg"):
        assert cv2.imread(str(path)) is not None, path  # whatever is there is whole
    for path in tiny_disk.rglob("*.png"):
        assert cv2.imread(str(path)) is not None, path
    if dest.is_file() and dest.suffix == ".jsonl":
        pytest.fail("a JSONL that could not be written whole must not appear")


# ----------------------------------------------------------------------- overlays


def test_overlay_mkv_is_a_readable_video_with_a_legend(capsys, tmp_path):
    dest = tmp_path / "x.mkv"
    rc, _, err = run_cli(capsys, "--frames", "4", "--overlay", dest, "--side-by-side", *SMALL)
    assert rc == 0, err
    assert dest.is_file()  # a video file, not a directory named x.mkv
    frames = read_frames(dest)
    assert len(frames) == 4
    assert frames[0].shape == (96 + band_height(3 * 128), 3 * 128, 3)  # original | heat | encoded, then the legend band
    band = frames[0][96:]
    assert band.std() > 10  # the colour bar and text are drawn


@pytest.mark.slow
@pytest.mark.parametrize("suffix", [".mp4", ".avi", ".mkv"])
def test_every_video_container_reads_back(capsys, tmp_path, suffix):
    dest = tmp_path / f"heat{suffix}"
    rc, _, err = run_cli(capsys, "--frames", "3", "--overlay", dest, *SMALL)
    assert rc == 0, err
    assert len(read_frames(dest)) == 3 and leftovers(tmp_path) == []


@pytest.mark.slow
def test_gated_frames_are_marked_on_the_overlay(capsys, tmp_path):
    dest = tmp_path / "pngs"
    rc, _, err = run_cli(capsys, "--frames", "10", "--overlay", dest, *SMALL)
    assert rc == 0, err
    red = []
    for i in range(10):
        image = cv2.imread(str(dest / f"frame_{i:05d}.png"))
        border = image[:3, :, :]  # the top rows of the picture: a red border on gated frames
        red.append(bool((border[..., 2] > 200).mean() > 0.9 and (border[..., 0] < 60).mean() > 0.9))
    video = SyntheticVideo(96, 128)
    assert red == [video.is_blurred(i) for i in range(10)]


def test_an_unknown_overlay_container_is_an_error(capsys, tmp_path):
    rc, _, err = run_cli(capsys, "--frames", "1", "--overlay", tmp_path / "x.mov", *SMALL)
    assert rc == 1 and err.strip() == (
        f"error: --overlay {tmp_path / 'x.mov'}: '.mov' is not a video container cortex-run writes "
        "(use .mp4, .avi, .mkv, or a directory for PNGs)"
    )
    assert not (tmp_path / "x.mov").exists()


# ----------------------------------------------------------------------- inputs


@pytest.mark.slow
def test_a_user_video_runs_to_its_end_and_start_skips(capsys, tmp_path):
    video = write_video(tmp_path / "clip.avi", 7, CLIP)
    rc, out, err = run_cli(capsys, video, "--quiet", "--dce-frames", "0", "--scores-jsonl", tmp_path / "s.jsonl")
    assert rc == 0, err
    assert "100x150 (padded 128x160), 7 frames" in out and "warning" not in err
    rc, out, err = run_cli(capsys, video, "--quiet", "--dce-frames", "0", "--start", "5")
    assert rc == 0 and "2 frames" in out


def test_a_video_shorter_than_requested_warns(capsys, tmp_path):
    video = write_video(tmp_path / "clip.avi", 3, CLIP)
    rc, out, err = run_cli(capsys, video, "--frames", "10", "--quiet", "--dce-frames", "0")
    assert rc == 0 and "3 frames" in out
    assert f"warning: {video} ended after 3 frames: 3 of the 10 frames requested" in err


@pytest.mark.slow
def test_a_truncated_video_warns(capsys, tmp_path):
    video = write_video(tmp_path / "clip.avi", 12, CLIP)
    data = video.read_bytes()
    cut = tmp_path / "cut.avi"
    cut.write_bytes(data[: len(data) // 2])  # the header still declares 12 frames
    assert int(cv2.VideoCapture(str(cut)).get(cv2.CAP_PROP_FRAME_COUNT)) == 12
    rc, out, err = run_cli(capsys, cut, "--quiet", "--dce-frames", "0")
    assert rc == 0
    assert "but its container declares 12: the file is truncated or damaged" in err


class FlakyCapture:
    """A capture whose frames 2 and 3 fail to decode; 6 frames declared."""

    def __init__(self):
        self.position = 0

    def read(self):
        i, self.position = self.position, self.position + 1
        if i >= 6 or i in (2, 3):
            return False, None
        return True, np.full((64, 64, 3), i, np.uint8)

    def get(self, prop):
        return {cv2.CAP_PROP_FPS: 25.0, cv2.CAP_PROP_FRAME_COUNT: 6}.get(prop, 0)

    def release(self):
        pass


def test_decode_failures_are_skipped_and_counted(monkeypatch):
    monkeypatch.setattr(video_source.FileSource, "open", lambda self: FlakyCapture())
    source = video_source.FileSource("flaky.avi", frames=None)
    values = [int(frame[0, 0, 0]) for frame in source]
    assert values == [0, 1, 4, 5] and source.decode_failures == 2
    assert source.warnings() == ["flaky.avi: 2 frame(s) failed to decode and were skipped"]


def test_size_is_for_the_synthetic_video_and_raw_frames_only(capsys, tmp_path):
    video = write_video(tmp_path / "clip.avi", 2, CLIP)
    rc, _, err = run_cli(capsys, video, "--size", "96x128")
    assert rc == 1
    assert err.strip() == ("error: --size sizes the synthetic video, or raw frames on standard input ('-'); "
                           "a video file is run at its own size")


# ----------------------------------------------------------------------- what the user reads


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("cortex-run ")
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for needle in ("the score grid", "row r, column c", "--blur-threshold auto", "encoded_bytes", "threshold:"):
        assert needle in text, needle


@pytest.mark.slow
def test_frame_log_has_a_header_with_units(capsys):
    rc, out, _ = run_cli(capsys, "--frames", "2", *SMALL)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["frame", "sharpness", "<"] and "jpeg kB" in lines[0]
    assert "(row, col)" in lines[1]
    assert lines[2].split()[0] == "0" and lines[3].split()[0] == "1"
    _, out, _ = run_cli(capsys, "--frames", "2", "--no-frame-log", *SMALL)
    assert "sharpness" not in out.splitlines()[0]


@pytest.mark.slow
def test_blur_threshold_fixed_and_auto(capsys, tmp_path):
    jsonl = tmp_path / "s.jsonl"
    rc, out, _ = run_cli(capsys, "--frames", "10", "--blur-threshold", "1e9", "--scores-jsonl", jsonl, *SMALL)
    assert rc == 0 and "10 skipped by the blur gate (1e9)" in out
    assert {json.loads(line)["threshold"] for line in jsonl.read_text().splitlines()} == {1e9}
    rc, out, _ = run_cli(capsys, "--frames", "10", "--scores-jsonl", jsonl, *SMALL)
    assert rc == 0 and "1 skipped by the blur gate (auto)" in out
    with pytest.raises(SystemExit) as done:
        main(["--blur-threshold", "soft"])
    assert done.value.code == 2 and "expected 'auto' or a number" in capsys.readouterr().err
