"""The smaller things a user meets in the tools.

`cortex-run --pipeline one_function.mlir` without `--entry`; a missing weight reported by `cortex.compile`,
not the first call; `--list-passes` lines that are whole sentences; the ONNX import error with its file; and
a start-up time that does not count what the process spent blocked before it ran (a shell that slept).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import cortex
from cortex.errors import CortexError
from cortex.tools.cortex_opt import main as opt_main
from cortex.tools.cortex_run import BUNDLED_PIPELINE
from cortex.tools.cortex_run import main as run_main

SMALL = ["--size", "64x96", "--frames", "2", "--quiet", "--no-frame-log", "--dce-frames", "0"]


def renamed(tmp_path: Path, name: str, extra: str = "") -> Path:
    """The bundled pipeline with its entry called `name` (and `extra` text appended inside the module)."""
    text = BUNDLED_PIPELINE.read_text().replace("@l2_frame", f"@{name}")
    if extra:
        text = text.rstrip().removesuffix("}") + extra + "\n}\n"
    path = tmp_path / f"{name}.mlir"
    path.write_text(text)
    return path


def test_a_one_function_pipeline_runs_without_entry(tmp_path, capsys):
    rc = run_main([*SMALL, "--pipeline", str(renamed(tmp_path, "mine"))])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "2 frames" in out


def test_a_pipeline_with_two_functions_asks_for_entry(tmp_path, capsys):
    other = "\n  func.func @other(%x: f32) -> f32 {\n    func.return %x : f32\n  }"
    path = renamed(tmp_path, "mine", other)
    assert "@other" in path.read_text()
    rc = run_main([*SMALL, "--pipeline", str(path)])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{path}: the module has 2 public functions (@mine, @other): say which to run with --entry NAME" in err
    rc = run_main([*SMALL, "--pipeline", str(path), "--entry", "mine"])
    assert rc == 0, capsys.readouterr().err


def test_a_missing_weight_is_reported_by_compile_not_the_first_call(tmp_path):
    """A shape-generic module compiles per frame size on first use; its weights are checked at compile."""
    path = tmp_path / "wzz.mlir"
    path.write_text(BUNDLED_PIPELINE.read_text().replace('cortex.weight "wc"', 'cortex.weight "wzz"'))
    with pytest.raises(CortexError, match=r"weight 'wzz' has no value: known weights \(mode 'balanced'\)"):
        cortex.compile(str(path))
    compiled = cortex.compile(str(path), weights={"wzz": 0.4})
    assert compiled(np.zeros((64, 64, 3), np.uint8)) is not None


def test_list_passes_gives_every_pass_a_whole_sentence(capsys):
    assert opt_main(["--list-passes"]) == 0
    lines = capsys.readouterr().out.splitlines()
    cortex_lines = lines[1:lines.index("xDSL passes:")]
    assert cortex_lines
    for line in lines:
        summary = re.sub(r" \((its options are|it takes no options).*\)$", "", line)
        assert "see module doc" not in summary and "..." not in summary, line  # not cut, not deferred
        assert summary.count("(") == summary.count(")"), line
    for line in cortex_lines:
        name, summary = re.match(r"  (\S+)  (.*?) \((?:its options are|it takes no options)", line).groups()
        assert len(summary.split()) >= 3 and not re.match(rf"`?{re.escape(name)}\b", summary), line  # not syntax


def test_the_onnx_import_error_names_its_file(tmp_path, capsys):
    node = helper.make_node("Cast", ["x"], ["y"], name="to_int", to=TensorProto.UINT8)  # unsigned: refused
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)])
    path = tmp_path / "to_int.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    assert opt_main([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"{path}: error: onnx node 'to_int' (Cast), attribute 'to' = 2"), err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.skipif(not os.path.exists("/proc/self/schedstat"), reason="needs Linux's /proc/<pid>/schedstat")
def test_start_up_does_not_count_a_shell_sleeping_before_exec():
    """`sh -c 'sleep 3; exec python ...'` keeps the shell's pid, so the process is 3 s old when Python starts:
    the clock must not start at the fork. Waits for the process's exit, however loaded the machine."""
    probe = ("import os, time\n"
             "from cortex.tools.run_summary import process_start\n"
             "stat = open('/proc/self/stat').read().rsplit(')', 1)[1].split()\n"
             "uptime = float(open('/proc/uptime').read().split()[0])\n"
             "age = uptime - int(stat[19]) / os.sysconf('SC_CLK_TCK')\n"
             "print(age, time.perf_counter() - process_start())\n")
    done = subprocess.run(["sh", "-c", f'sleep 3; exec "{sys.executable}" -c "$0"', probe], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", "")})
    assert done.returncode == 0, done.stderr
    age, counted = map(float, done.stdout.split())
    assert age >= 3.0 and counted <= age - 2.9, (age, counted)
