"""Output paths that must not destroy what they name.

Every output -- cortex-run's --scores-jsonl, --overlay (a video or a folder
of PNGs), --encoded, cortex-opt's -o and --graph-dot, cortex-import-onnx's -o
-- goes through `cortex.tools.atomic`. These tests make scratch device nodes
(`mknod` of /dev/null's 1,3 and /dev/full's 1,7), FIFOs and symlinks in
tmp_path: never the machine's own /dev nodes (as root, a bad writer would
replace them). Where mknod is not allowed the device tests are skipped.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import onnx
import pytest
from helpers.videos import write_video
from onnx import helper

from cortex.examples.l2_pipeline import L2_PIPELINE
from cortex.tools import atomic
from cortex.tools.cortex_opt import main as opt_main
from cortex.tools.cortex_run import main as run_main
from cortex.tools.import_onnx import main as import_main

SMALL = ["--size", "96x128", "--quiet", "--dce-frames", "0", "--frames", "3"]
IR = """func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %b = arith.addf %a, %a : tensor<2xf32>
  func.return %b : tensor<2xf32>
}
"""


def device(tmp_path: Path, name: str, minor: int) -> Path:
    """A scratch character device: minor 3 behaves as /dev/null, 7 as /dev/full."""
    path = tmp_path / name
    try:
        os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, minor))
        os.close(os.open(path, os.O_WRONLY))  # a nodev mount refuses to open it
    except OSError as e:
        pytest.skip(f"cannot make a device node here: {e.strerror}")
    return path


def is_device(path: Path) -> bool:
    return stat.S_ISCHR(os.lstat(path).st_mode)


def onnx_model(path: Path) -> Path:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    onnx.save(helper.make_model(graph), path)
    return path


def cortex_run(capsys, *argv) -> tuple[int, str]:
    rc = run_main([str(a) for a in argv])
    return rc, capsys.readouterr().err


def leftovers(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.rglob("*") if ".partial-" in p.name)


# ------------------------------------------------------------------ devices: written into, never replaced


@pytest.mark.slow
@pytest.mark.parametrize("flag, name", [("--scores-jsonl", "null"), ("--overlay", "null.avi")])
def test_cortex_run_writes_into_a_null_device_and_leaves_it_a_device(capsys, tmp_path, flag, name):
    null = device(tmp_path, name, 3)
    rc, err = cortex_run(capsys, flag, null, *SMALL)
    assert rc == 0, err
    assert is_device(null)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("flag, name", [("--scores-jsonl", "full"), ("--overlay", "full.mkv")])
def test_cortex_run_into_a_full_device_exits_1_naming_it(capsys, tmp_path, flag, name):
    full = device(tmp_path, name, 7)
    rc, err = cortex_run(capsys, flag, full, *SMALL)
    assert rc == 1
    last = err.strip().splitlines()[-1]
    assert last == f"error: cannot write {full}: No space left on device"
    assert is_device(full)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_png_and_jpeg_files_that_are_devices_are_written_into(capsys, tmp_path):
    pngs, jpegs = tmp_path / "pngs", tmp_path / "jpegs"
    pngs.mkdir()
    jpegs.mkdir()
    png = device(pngs, "frame_00001.png", 3)
    jpeg = device(jpegs, "frame_00000.jpg", 7)
    rc, err = cortex_run(capsys, "--overlay", pngs, *SMALL)
    assert rc == 0, err
    assert is_device(png) and (pngs / "frame_00000.png").is_file()
    rc, err = cortex_run(capsys, "--encoded", jpegs, *SMALL)
    assert rc == 1 and err.strip().endswith(f"cannot write {jpeg}: No space left on device")
    assert is_device(jpeg)


@pytest.mark.slow
def test_an_overlay_folder_that_is_a_device_is_refused(capsys, tmp_path):
    null = device(tmp_path, "null", 3)
    rc, err = cortex_run(capsys, "--overlay", null, *SMALL)
    assert rc == 1 and "is not a directory" in err
    assert is_device(null)


def test_cortex_opt_and_import_onnx_write_into_devices(capsys, tmp_path):
    null, full = device(tmp_path, "null", 3), device(tmp_path, "full", 7)
    source = tmp_path / "in.mlir"
    source.write_text(IR)
    model = onnx_model(tmp_path / "m.onnx")
    assert opt_main([str(source), "-o", str(null)]) == 0
    assert import_main([str(model), "-o", str(null)]) == 0
    assert opt_main([str(source), "-o", str(full)]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert import_main([str(model), "-o", str(full)]) == 1
    assert capsys.readouterr().err == f"error: cannot write {full}: No space left on device\n"
    assert opt_main([str(source), "--graph-dot", str(tmp_path / "full")]) == 1
    assert "No space left on device" in capsys.readouterr().err
    assert is_device(null) and is_device(full)
    assert leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("tool", ["cortex_opt", "import_onnx", "cortex_run"])
def test_a_full_standard_output_is_one_line_and_exit_1(tmp_path, tool):
    full = device(tmp_path, "full", 7)
    argv = {
        "cortex_opt": [str(onnx_model(tmp_path / "m.onnx"))],
        "import_onnx": [str(onnx_model(tmp_path / "m.onnx"))],
        "cortex_run": SMALL,
    }[tool]
    with open(full, "w") as stdout:
        proc = subprocess.run([sys.executable, "-m", f"cortex.tools.{tool}", *argv], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == "error: cannot write standard output: No space left on device\n"


# ------------------------------------------------------------------ FIFOs: written into


@pytest.mark.slow
def test_a_fifo_output_is_written_into_for_its_reader(capsys, tmp_path):
    fifo = tmp_path / "scores.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    rc, err = cortex_run(capsys, "--scores-jsonl", fifo, *SMALL)
    reader.join(timeout=30)
    if reader.is_alive():  # nobody wrote into the FIFO (the old writer replaced it): release the reader
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    assert rc == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert len(received[0].decode().splitlines()) == 3


# ------------------------------------------------------------------ symlinks: followed, kept


@pytest.mark.slow
@pytest.mark.parametrize("flag, name", [("--scores-jsonl", "s.jsonl"), ("--overlay", "o.avi")])
def test_a_symlinked_output_replaces_the_target_and_keeps_the_link(capsys, tmp_path, flag, name):
    real_dir = tmp_path / "real"
    real_dir.mkdir()
    target = real_dir / name
    target.write_text("old")
    link = tmp_path / name
    link.symlink_to(target)
    rc, err = cortex_run(capsys, flag, link, *SMALL)
    assert rc == 0, err
    assert link.is_symlink() and link.resolve() == target
    assert target.read_bytes() != b"old" and target.stat().st_size > 100
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_a_dangling_symlink_output_creates_its_target(capsys, tmp_path):
    link = tmp_path / "s.jsonl"
    link.symlink_to(tmp_path / "made.jsonl")
    rc, err = cortex_run(capsys, "--scores-jsonl", link, *SMALL)
    assert rc == 0, err
    assert link.is_symlink() and len((tmp_path / "made.jsonl").read_text().splitlines()) == 3


def test_cortex_opt_output_through_a_symlink_keeps_the_link(tmp_path):
    source, target, link = tmp_path / "in.mlir", tmp_path / "out.mlir", tmp_path / "link.mlir"
    source.write_text(IR)
    link.symlink_to(target)
    assert opt_main([str(source), "-o", str(link)]) == 0
    assert link.is_symlink() and "arith.addf" in target.read_text()


# ------------------------------------------------------------------ an output that is an input or another output


def spellings(video: Path, tmp_path: Path) -> list[Path]:
    """The same file by other names: a ../ detour, a symlink, a hard link."""
    (tmp_path / "sub").mkdir(exist_ok=True)
    link, hard = tmp_path / "link.avi", tmp_path / "hard.avi"
    link.symlink_to(video)
    os.link(video, hard)
    return [video, tmp_path / "sub" / ".." / video.name, link, hard]


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--scores-jsonl", "--overlay"])
def test_an_output_that_is_the_input_video_is_refused_and_the_video_kept(capsys, tmp_path, flag):
    video = write_video(tmp_path / "clip.avi")
    before = video.read_bytes()
    for spelling in spellings(video, tmp_path):
        rc, err = cortex_run(capsys, video, flag, spelling, "--quiet", "--dce-frames", "0")
        assert rc == 1
        assert "is the same file as the input video" in err and "refusing to overwrite" in err, err
        assert video.read_bytes() == before
    assert leftovers(tmp_path) == []


@pytest.mark.slow
def test_an_output_that_is_the_pipeline_is_refused(capsys, tmp_path):
    pipeline = tmp_path / "p.mlir"  # a copy of the bundled pipeline, which the bug would replace
    pipeline.write_text(L2_PIPELINE.read_text())
    rc, err = cortex_run(capsys, "--pipeline", pipeline, "--scores-jsonl", pipeline, *SMALL[2:])
    assert rc == 1 and "is the same file as --pipeline" in err
    assert pipeline.read_text() == L2_PIPELINE.read_text()


@pytest.mark.slow
def test_two_outputs_naming_one_file_are_refused(capsys, tmp_path):
    rc, err = cortex_run(capsys, "--scores-jsonl", tmp_path / "o.avi", "--overlay", tmp_path / "." / "o.avi", *SMALL)
    assert rc == 1 and "are the same file" in err
    assert not (tmp_path / "o.avi").exists()
    rc, err = cortex_run(capsys, "--overlay", tmp_path / "d", "--encoded", tmp_path / "d", *SMALL)
    assert rc == 1 and "are the same file" in err


@pytest.mark.slow
def test_two_outputs_into_one_null_device_are_fine(capsys, tmp_path):
    null = device(tmp_path, "null.avi", 3)
    rc, err = cortex_run(capsys, "--scores-jsonl", null, "--overlay", null, *SMALL)
    assert rc == 0, err


@pytest.mark.slow
def test_a_frame_file_that_is_the_input_video_is_refused(capsys, tmp_path):
    jpegs = tmp_path / "jpegs"
    jpegs.mkdir()
    video = write_video(tmp_path / "clip.avi").rename(jpegs / "frame_00001.jpg")  # an unlucky name and place
    before = video.read_bytes()
    rc, err = cortex_run(capsys, video, "--encoded", jpegs, "--quiet", "--dce-frames", "0")
    assert rc == 1 and "it is an input of this run" in err
    assert video.read_bytes() == before


# ------------------------------------------------------------------ the module itself


def test_a_directory_target_is_refused(tmp_path):
    with pytest.raises(atomic.OutputError, match="it is a directory"):
        atomic.write_bytes_atomic(tmp_path, b"x")


def test_concurrent_writers_of_one_target_do_not_share_a_temporary_file(tmp_path):
    target = tmp_path / "t.bin"
    first, second = atomic.AtomicFile(target), atomic.AtomicFile(target)
    first.write(b"a" * 10)
    second.write(b"b" * 5)
    first.commit()
    assert target.read_bytes() == b"a" * 10
    second.commit()
    assert target.read_bytes() == b"b" * 5
    assert leftovers(tmp_path) == []


@pytest.mark.slow
@pytest.mark.parametrize("flag", ["--summary-json", "--report"])
def test_the_summary_and_report_may_not_be_the_input_video(capsys, tmp_path, flag):
    video = write_video(tmp_path / "clip.avi")
    before = video.read_bytes()
    rc, err = cortex_run(capsys, video, flag, tmp_path / "." / "clip.avi", "--quiet", "--dce-frames", "0")
    assert rc == 1 and "is the same file as the input video" in err
    assert video.read_bytes() == before
