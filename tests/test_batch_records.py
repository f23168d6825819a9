"""The batch's records: folder names that stay inside the out-dir and never collide, a manifest updated
under a lock, `running` before a folder is touched, statuses that say what happened, and a key that goes
stale with what changes a result.

Most tests drive `run_batch` with `fake_run_one` (the batch's logic, no compile); the ones marked slow run
cortex-run itself."""

from __future__ import annotations

import fcntl
import functools
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from helpers.batch import fake_run_one, manifest, spawn_held_batch, start_held_batch, wait_started
from hypothesis import given
from hypothesis import strategies as st

from cortex.errors import CortexError
from cortex.tools.batch import claim, folder_names, run_batch
from cortex.tools.manifest import MANIFEST, RESERVED, Manifest, folder_stem, is_folder_name
from cortex.tools.run_args import build_parser

TREE = Path(__file__).resolve().parent.parent


def batch(out: Path, videos: list[str], *options: str, **fake) -> tuple[int, list]:
    """One batch of `videos` into `out` with fake_run_one; (exit code, the videos it ran)."""
    args = build_parser().parse_args([*videos, "--out-dir", str(out), "--quiet", *options])
    calls: list = []
    rc = run_batch(args, videos, functools.partial(fake_run_one, calls=calls, **fake))
    return rc, calls


def video(path: Path, data: bytes = b"frames") -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return str(path)


# ---------------------------------------------------------------- folder names


NAMES = st.text(st.characters(codec="utf-8") | st.sampled_from("./\\\n\0-"), max_size=40)


@given(NAMES)
def test_a_folder_name_from_any_file_name_is_a_plain_visible_name(name):
    stem = folder_stem(name)
    assert is_folder_name(stem) and stem not in (".", "..") and "\n" not in stem
    assert len(stem.encode("utf-8")) <= 120


@pytest.mark.parametrize("name", ["é" * 100 + ".mp4", "カメラ" * 30 + ".avi", "камера" * 20 + ".mkv"])
def test_a_long_non_ascii_name_is_cut_to_the_byte_limit_not_the_character_count(name):
    """File systems limit a name's bytes: 100 two-byte characters are 200 bytes, too long for one folder."""
    stem = folder_stem(name)
    assert 0 < len(stem.encode("utf-8")) <= 120 and name.startswith(stem)
    assert len((stem + name[len(stem)]).encode("utf-8")) > 120  # cut no shorter than it must be


@given(st.lists(NAMES, min_size=1, max_size=6), st.lists(NAMES, min_size=1, max_size=6))
def test_folders_of_two_batches_are_distinct_and_inside_the_out_dir(first, second):
    """Two batches' claims (the batch's own `claim`, under the manifest's lock): every video its own folder,
    a plain name inside the out-dir, never the manifest's or its lock's, never one given before."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        out.mkdir()
        given_out: dict[str, str] = {}
        for names in (first, second):
            records = Manifest(out)
            paths = [os.path.join(tmp, "videos", name) for name in names]
            try:
                for ident, _, folder, _ in claim(records, paths, ["key"] * len(paths), force=True):
                    assert given_out.setdefault(ident, folder) == folder  # the same video keeps its folder
            finally:
                records.release_all()
        folders = {e["folder"] for e in Manifest(out).read().values()}
        assert {e["path"]: e["folder"] for e in Manifest(out).read().values()} == given_out
        assert len({f.casefold() for f in folders}) == len(folders)
        for folder in folders:
            assert (out / folder).resolve().parent == out.resolve() and folder.casefold() not in RESERVED


def test_a_dotted_name_stays_in_the_out_dir(tmp_path):
    out = tmp_path / "work" / "out"
    dots = video(tmp_path / "in" / "...avi")
    rc, calls = batch(out, [dots, video(tmp_path / "in" / "..avi")])
    assert rc == 0 and len(calls) == 2
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["out"]  # nothing written beside out/
    assert all((out / e["folder"] / "scores.jsonl").exists() and e["folder"] not in (".", "..") for e in manifest(out))


def test_a_video_named_like_the_manifest_gets_another_folder(tmp_path):
    out = tmp_path / "out"
    for round_ in range(2):
        rc, _ = batch(out, [video(tmp_path / f"{round_}" / "manifest.jsonl.avi"), video(tmp_path / f"{round_}" / ".manifest.lock")])
        assert rc == 0
    assert (out / MANIFEST).is_file() and len(manifest(out)) == 4
    assert {e["folder"] for e in manifest(out)} == {"manifest.jsonl-2", "manifest.jsonl-3", "manifest", "manifest-2"}


def test_a_later_batch_never_reuses_an_earlier_video_s_folder(tmp_path):
    out = tmp_path / "out"
    a, b = video(tmp_path / "a" / "x.avi", b"A"), video(tmp_path / "b" / "x.avi", b"B")
    assert batch(out, [a])[0] == 0
    assert batch(out, [b])[0] == 0
    folders = {e["path"]: e["folder"] for e in manifest(out)}
    assert folders == {os.path.abspath(a): "x", os.path.abspath(b): "x-2"}
    assert json.loads((out / "x" / "scores.jsonl").read_text())["video"] == a
    rc, calls = batch(out, [a])  # a's results are still there: skipped
    assert rc == 0 and calls == []


def test_a_folder_on_disk_that_the_manifest_does_not_know_is_not_taken(tmp_path):
    out = tmp_path / "out"
    (out / "x").mkdir(parents=True)
    (out / "x" / "mine.txt").write_text("the user's")
    assert batch(out, [video(tmp_path / "x.avi")])[0] == 0
    assert [e["folder"] for e in manifest(out)] == ["x-2"] and (out / "x" / "mine.txt").exists()


def test_folder_names_number_repeated_stems():
    assert folder_names(["a/clip.avi", "b/clip.avi", "c/CLIP.mp4", None]) == ["clip", "clip-2", "CLIP-3", "synthetic"]


# ---------------------------------------------------------------- the record's life: running, then done


def test_the_entry_says_running_before_the_folder_is_touched(tmp_path):
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    seen = []

    def run_one(args):
        seen.append(([(e["status"], e["folder"]) for e in manifest(out)], sorted(os.listdir(out / "a"))))
        return fake_run_one(args)

    args = build_parser().parse_args([a, "--out-dir", str(out), "--quiet"])
    assert run_batch(args, [a], run_one) == 0
    assert seen == [([("running", "a")], [])] and manifest(out)[0]["status"] == "done"


def test_a_killed_rerun_with_other_options_is_not_done_and_never_mixes_jpegs(tmp_path):
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    assert batch(out, [a], "--encoded", "jpeg", jpegs=2)[0] == 0
    child = start_held_batch(out, a, "--encoded", "jpeg", "--mode", "motion", jpegs=4)  # 4 JPEGs written
    child.kill()
    child.wait()
    assert [e["status"] for e in manifest(out)] == ["running"]
    rc, calls = batch(out, [a], "--encoded", "jpeg", jpegs=2)  # the first options again: run, not skipped
    assert rc == 0 and calls == [a] and [e["status"] for e in manifest(out)] == ["done"]
    jpegs = sorted((out / "a" / "jpeg").iterdir())
    assert [p.name for p in jpegs] == ["frame_00000.jpg", "frame_00001.jpg"]
    assert all(p.read_bytes().startswith(b"balanced") for p in jpegs)


def test_a_video_another_live_batch_is_running_is_left_alone(tmp_path):
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    child = start_held_batch(out, a)
    try:
        rc, calls = batch(out, [a], "--force")
        assert rc == 0 and calls == []
    finally:
        child.communicate("go\n")
    assert child.returncode == 0 and [e["status"] for e in manifest(out)] == ["done"]


def test_two_concurrent_batches_lose_no_line(tmp_path):
    out = tmp_path / "out"
    a, b = video(tmp_path / "a.avi"), video(tmp_path / "b.avi")
    first = start_held_batch(out, a)
    second = start_held_batch(out, b)  # both have read the manifest and are running their video
    first.communicate("go\n")
    second.communicate("go\n")
    assert first.returncode == second.returncode == 0
    assert sorted((e["folder"], e["status"]) for e in manifest(out)) == [("a", "done"), ("b", "done")]
    assert sorted(p.name for p in out.iterdir() if p.is_dir()) == ["a", "b"]  # every folder is a video's


def blocked_on_a_lock(pid: int) -> bool:
    """Whether process `pid` waits for a file lock (a `->` line of /proc/locks names the waiters)."""
    return any(line.split()[5:6] == [str(pid)] for line in Path("/proc/locks").read_text().splitlines()
               if line.split()[1:2] == ["->"])


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="needs Linux's /proc/locks to see a waiter")
def test_a_batch_waits_for_the_manifest_lock_and_merges_what_its_holder_wrote(tmp_path):
    """The test holds the manifest's lock, as another batch mid-update would: the batch waits for it (seen in
    /proc/locks), and the line written meanwhile survives the batch's own update."""
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    out.mkdir()
    fd = os.open(out / ".manifest.lock", os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        child = spawn_held_batch(out, a)
        while not blocked_on_a_lock(child.pid):
            ready, _, _ = select.select([child.stdout], [], [], 0.05)
            assert not ready and child.poll() is None, "the batch went on without the manifest's lock"
        other = {"path": "/elsewhere/b.avi", "folder": "b", "status": "done", "key": "k", "frames": 1}
        (out / MANIFEST).write_text(json.dumps(other) + "\n")
    finally:
        os.close(fd)
    wait_started(child)
    child.communicate("go\n")
    assert child.returncode == 0
    assert [(e["folder"], e["status"]) for e in manifest(out)] == [("b", "done"), ("a", "done")]


def test_a_folder_the_manifest_lists_is_not_given_again_even_when_deleted(tmp_path):
    out = tmp_path / "out"
    a, b = video(tmp_path / "a" / "x.avi", b"A"), video(tmp_path / "b" / "x.avi", b"B")
    assert batch(out, [a])[0] == 0
    shutil.rmtree(out / "x")  # the user cleared it; the record still names it
    assert batch(out, [b])[0] == 0
    assert {e["path"]: e["folder"] for e in manifest(out)} == {os.path.abspath(a): "x", os.path.abspath(b): "x-2"}


# ---------------------------------------------------------------- a damaged manifest


@pytest.mark.parametrize("damage", [b"{not json\n", b'{"path": "/x\xff\xfe"}\n', b"[1, 2]\n",
                                    b'{"path": "/v.avi", "folder": "..", "status": "done"}\n',
                                    b'{"path": "/v.avi", "folder": "v", "status": "finished"}\n'], ids=repr)
def test_a_damaged_line_is_reported_once_and_skipped(tmp_path, capsys, damage):
    out, a, b = tmp_path / "out", video(tmp_path / "a.avi"), video(tmp_path / "b.avi")
    assert batch(out, [a])[0] == 0
    (out / MANIFEST).write_bytes((out / MANIFEST).read_bytes() + damage)
    capsys.readouterr()
    rc, calls = batch(out, [a, b])
    err = capsys.readouterr().err
    assert rc == 0 and calls == [b]  # a: done before; b: run
    assert err.count("warning:") == 1 and f"{out / MANIFEST} line 2: " in err and "skipped" in err
    assert [e["folder"] for e in manifest(out)] == ["a", "b"]


# ---------------------------------------------------------------- options refused once, up front


@pytest.mark.parametrize("options", [["--report", "summary.json"], ["--encoded", "scores.jsonl"],
                                     ["--encoded", "jpeg", "--report", "jpeg/r.html"],
                                     ["--overlay", "pics", "--encoded", "PICS"]], ids=" ".join)
def test_colliding_output_names_are_refused_before_any_video(tmp_path, options):
    out = tmp_path / "out"
    with pytest.raises(CortexError, match="in each video's folder") as info:
        batch(out, [video(tmp_path / "a.avi"), video(tmp_path / "b.avi")], *options)
    assert "videos failed" not in str(info.value) and not out.exists()


# ---------------------------------------------------------------- what makes "done" stale


def test_the_key_goes_stale_with_what_changes_a_result(tmp_path, monkeypatch):
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    pipeline = tmp_path / "mine.mlir"
    pipeline.write_text("// one\n")
    base = ["--pipeline", str(pipeline)]

    def runs(*options: str) -> bool:
        rc, calls = batch(out, [a], *base, *options)
        assert rc == 0
        return calls == [a]

    assert runs() and not runs()
    pipeline.write_text("// two\n")  # edited at the same path
    assert runs() and not runs()
    assert runs("--weight", "wc=0.5") and not runs("--weight", "wc=0.5") and runs("--weight", "wc=0.6")
    assert runs("--mode", "motion") and runs("--blur-threshold", "5") and runs()
    assert runs("--runner", "reference") and not runs("--runner", "reference")  # another runner
    assert not runs("--backend", "reference") and runs()  # its former spelling: the same run, the same key
    Path(a).write_bytes(b"another video")  # replaced at the same path
    assert runs() and not runs()
    os.utime(a, ns=(0, 10**18))  # the same size, touched
    assert runs() and not runs()
    monkeypatch.setattr("cortex.package_version", lambda: "999.0")  # an upgrade
    assert runs() and not runs()


def test_a_run_that_returns_non_zero_is_failed_and_the_batch_too(tmp_path):
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    with pytest.raises(CortexError, match=r"1 of 1 videos failed: .*a\.avi: exit 1"):
        batch(out, [a], rc=1)
    assert [(e["status"], e["error"]) for e in manifest(out)] == [("failed", "exit 1")]
    rc, calls = batch(out, [a])
    assert rc == 0 and calls == [a]  # run again, not skipped


# ---------------------------------------------------------------- statuses and warnings


def test_a_warned_run_is_done_with_warnings(tmp_path, capsys):
    out, a, b = tmp_path / "out", video(tmp_path / "a.avi"), video(tmp_path / "b.avi")
    rc, _ = batch(out, [a], warnings=("a.avi ended after 3 frames, but its container declares 9",))
    assert rc == 0 and batch(out, [b])[0] == 0
    entries = {e["folder"]: e for e in manifest(out)}
    assert entries["a"]["status"] == "done-with-warnings" and entries["b"]["status"] == "done"
    assert entries["a"]["warnings"] == ["a.avi ended after 3 frames, but its container declares 9"]
    assert "1 of 1 videos finished with warnings" in capsys.readouterr().err


def test_a_rerun_skips_a_video_done_with_warnings_and_says_so(tmp_path, capsys):
    """Its outputs are complete: the warning (a clip shorter than its container says) is the video's, and a
    rerun would warn again."""
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    assert batch(out, [a], warnings=("a.avi ended after 3 frames, but its container declares 9",))[0] == 0
    capsys.readouterr()
    rc, calls = batch(out, [a])
    assert rc == 0 and calls == []
    assert "skipped (it finished with warnings)" in capsys.readouterr().out
    assert [e["status"] for e in manifest(out)] == ["done-with-warnings"]


def test_a_batch_error_names_the_video_once(tmp_path):
    from cortex.tools.batch import named

    assert named("in/x.avi", "in/x.avi: no such video file") == "in/x.avi: no such video file"
    assert named("in/x.avi", "no frame processed") == "in/x.avi: no frame processed"
    assert named(None, "boom") == "synthetic: boom"


# ---------------------------------------------------------------- cortex-run itself, on a damaged real clip

VTEST = Path("/usr/share/doc/opencv-doc/examples/data/vtest.avi")
needs_vtest = pytest.mark.skipif(not VTEST.exists(), reason="opencv-doc's sample videos are not installed")


def truncated_clip(tmp_path: Path) -> Path:
    """vtest.avi's first 300 KB: 16 frames decode of the 795 its header declares, and FFmpeg complains."""
    path = tmp_path / "in" / "cut.avi"
    path.parent.mkdir(parents=True, exist_ok=True)
    with VTEST.open("rb") as whole:
        path.write_bytes(whole.read(300_000))
    return path


@pytest.mark.slow
@needs_vtest
@pytest.mark.parametrize("engine", ["threads", "processes"])
def test_a_truncated_clip_is_recorded_with_its_warning_and_ffmpeg_says_nothing(tmp_path, engine):
    cut, out = truncated_clip(tmp_path), tmp_path / "out"
    missing = tmp_path / "in" / "gone.avi"
    proc = subprocess.run([sys.executable, "-m", "cortex.tools.cortex_run", str(cut), str(missing), "--out-dir", str(out),
                           "--quiet", "--no-frame-log", "--dce-frames", "0", "--engine", engine, "--workers", "2"],
                          capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert proc.returncode == 1, proc.stderr
    assert " @ 0x" not in proc.stderr and "msmpeg4" not in proc.stderr  # FFmpeg's own lines
    assert f"{missing}: no such video file" in proc.stderr and f"{missing}: {missing}" not in proc.stderr
    entries = {e["folder"]: e for e in manifest(out)}
    assert entries["gone"]["status"] == "failed"
    cut_entry = entries["cut"]
    assert cut_entry["status"] == "done-with-warnings" and cut_entry["frames"] == 16
    assert len(cut_entry["warnings"]) == 1 and "declares 795" in cut_entry["warnings"][0]
    summary = json.loads((out / "cut" / "summary.json").read_text())
    assert summary["status"] == "done-with-warnings" and summary["warnings"] == cut_entry["warnings"]
    assert f"warning: {cut_entry['warnings'][0]}" in proc.stderr


@pytest.mark.slow
@needs_vtest
def test_a_ray_task_hands_its_warnings_back(tmp_path):
    """A Ray task's stderr reaches no one: `run_video_task` returns the source's warnings for the driver to
    print and record (run here in-process: the task's body, without Ray)."""
    from cortex.tools.batch import video_args
    from cortex.tools.cortex_run import run_one
    from cortex.tools.parallel_run import run_video_task

    cut, folder = truncated_clip(tmp_path), tmp_path / "v"
    folder.mkdir()
    args = build_parser().parse_args([str(cut), "--quiet", "--no-frame-log", "--dce-frames", "0"])
    rc, _, frames, warnings = run_video_task(video_args(args, str(cut), folder), run_one)
    assert (rc, frames) == (0, 16) and len(warnings) == 1 and "declares 795" in warnings[0]


@pytest.mark.slow
def test_an_image_named_as_a_video_is_read_with_a_warning(tmp_path):
    import cv2
    import numpy as np

    from cortex.video.source import open_video

    still = tmp_path / "still.avi"
    ok, data = cv2.imencode(".png", np.full((40, 50, 3), 90, np.uint8))
    still.write_bytes(data.tobytes())
    source = open_video(still)
    assert len(list(source)) == 1
    assert source.warnings() == [f"{still}: is a still image, not a video: read as a video of one frame"]


@needs_vtest
def test_a_clip_cut_inside_its_first_frame_warns(tmp_path):
    """vtest.avi cut 20 KB into its frame data: one damaged frame decodes of the 795 declared; the source says
    so (a batch records it done-with-warnings, not done)."""
    from cortex.video.source import open_video

    data = VTEST.read_bytes()
    cut = tmp_path / "head.avi"
    cut.write_bytes(data[:data.index(b"movi") + 20_000])
    source = open_video(cut)
    assert len(list(source)) == 1
    assert source.warnings() == [f"{cut} ended after 1 frames, but its container declares 795: the file is truncated "
                                 "or damaged"]


def test_a_video_given_twice_runs_once(tmp_path, capsys):
    out, a, b = tmp_path / "out", video(tmp_path / "a.avi"), video(tmp_path / "b.avi")
    same_a = str(tmp_path / "." / "a.avi")  # the same file, spelled another way
    rc, calls = batch(out, [a, b, same_a])
    assert rc == 0 and calls == [a, b] and "a.avi: given twice, run once" in capsys.readouterr().out
    assert sorted(e["folder"] for e in manifest(out)) == ["a", "b"]


def test_a_failed_video_records_no_frames_done(tmp_path):
    """Frames a failed run got through before it failed are not results: its record says 0."""
    out, a = tmp_path / "out", video(tmp_path / "a.avi")
    with pytest.raises(CortexError, match=r"1 of 1 videos failed: .*a\.avi: exit 1"):
        batch(out, [a], rc=1)
    (entry,) = manifest(out)
    assert (entry["status"], entry["frames"], entry["error"]) == ("failed", 0, "exit 1")
