"""Batch on Ray, the two ends of a task's files: its scratch folder on a node (`cortex-video-<pid>-...`: a
task killed with its worker leaves it behind, the next task on that node removes it, a live process's
folder is never touched), and the driver writing what it returned into the video's folder (inside it
only, never through a planted link)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cortex.errors import CortexError
from cortex.tools.batch import SCRATCH_PREFIX, sweep_scratch, write_video_files


def dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid  # reaped: no such process now (a reuse of the number within this test is unlikely)


def test_the_folder_of_a_gone_process_is_removed_and_a_live_ones_kept(tmp_path):
    gone = tmp_path / f"{SCRATCH_PREFIX}{dead_pid()}-abc"
    live = tmp_path / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    for folder in (gone, live):
        (folder / "sub").mkdir(parents=True)
        (folder / "sub" / "scores.jsonl").write_text("{}\n")
    assert sweep_scratch(tmp_path) == [gone]
    assert not gone.exists() and (live / "sub" / "scores.jsonl").exists()


def test_only_scratch_folders_are_swept(tmp_path):
    pid = dead_pid()
    other = tmp_path / f"other-{pid}-x"  # not a scratch name
    odd = tmp_path / f"{SCRATCH_PREFIX}notapid-x"  # a scratch prefix without a process number
    file = tmp_path / f"{SCRATCH_PREFIX}{pid}-file"  # a file, not a folder
    link = tmp_path / f"{SCRATCH_PREFIX}{pid}-link"  # a link to a folder: never followed
    target = tmp_path / "target"
    for folder in (other, odd, target):
        folder.mkdir()
    file.write_text("x")
    link.symlink_to(target, target_is_directory=True)
    assert sweep_scratch(tmp_path) == []
    assert other.exists() and odd.exists() and file.exists() and link.exists() and target.exists()


# ---------------------------------------------------------------- the driver writes what a task returned


def test_a_task_s_files_land_in_the_video_folder(tmp_path):
    folder = tmp_path / "clip"
    folder.mkdir()
    write_video_files(folder, {"scores.jsonl": b"{}\n", "jpeg/frame_00000.jpg": b"\xff\xd8"})
    assert (folder / "scores.jsonl").read_bytes() == b"{}\n"
    assert (folder / "jpeg" / "frame_00000.jpg").read_bytes() == b"\xff\xd8"


@pytest.mark.parametrize("rel", ["../out.jsonl", "/etc/x", "a/../../b"])
def test_a_name_outside_the_folder_is_refused(tmp_path, rel):
    folder = tmp_path / "clip"
    folder.mkdir()
    with pytest.raises(CortexError, match="which is not inside"):
        write_video_files(folder, {rel: b"x"})


def test_a_planted_link_is_refused_not_followed(tmp_path):
    """A subfolder (or a file) of the video's folder that is a symbolic link would carry the write out of
    it: refused, and the place it points to untouched."""
    folder, elsewhere = tmp_path / "clip", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    (folder / "jpeg").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(CortexError, match="is a symbolic link; refusing to follow it"):
        write_video_files(folder, {"jpeg/frame_00000.jpg": b"\xff\xd8"})
    (elsewhere / "victim.jsonl").write_text("keep")
    (folder / "scores.jsonl").symlink_to(elsewhere / "victim.jsonl")
    with pytest.raises(CortexError, match="is a symbolic link; refusing to follow it"):
        write_video_files(folder, {"scores.jsonl": b"{}\n"})
    assert list(elsewhere.iterdir()) == [elsewhere / "victim.jsonl"]
    assert (elsewhere / "victim.jsonl").read_text() == "keep"
