"""A batch task's scratch folder on a Ray node (`cortex-video-<pid>-...`): a task killed with its worker
leaves it behind, and the next task on that node removes it; a live process's folder is never touched."""

from __future__ import annotations

import os
import subprocess
import sys

from cortex.tools.batch import SCRATCH_PREFIX, sweep_scratch


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
