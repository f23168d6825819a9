"""`cortex-opt -t` lists and accepts only targets that work on cortex IR and on its lowering."""

from __future__ import annotations

import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE, L2_TEXT

import cortex
from cortex.tools.cortex_opt import main

LOWER = "convert-cortex-to-linalg,convert-cortex-to-extern"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def test_help_lists_only_working_targets(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    line = " ".join(out.split("--target TARGET", 1)[1].split("\n  -o", 1)[0].split())
    assert line == "output: mlir (default) or numpy, iree"


@pytest.mark.parametrize(
    "target, expect", [("mlir", "func.func @l2_frame"), ("numpy", "def l2_frame("), ("iree", "func.func @l2_frame__seg0(")]
)
def test_every_listed_target_works_on_lowered_ir(capsys, tmp_path, monkeypatch, target, expect):
    for name, value in EVERY_RUN_ON_IREE.items():  # the cost rule keeps all of the L2 frame on the host
        monkeypatch.setenv(name, value)
    static = tmp_path / "l2_480x640.mlir"  # lowering needs static shapes: the bundled pipeline is shape-generic
    static.write_text(L2_TEXT)
    rc, out, err = run(capsys, str(static), "-p", LOWER, "-t", target)
    assert rc == 0, err
    assert expect in out


@pytest.mark.parametrize("target", ["llvm", "x86-asm", "wgsl", "riscv-asm", "arm-asm", "wat", "csl", "mps"])
def test_other_targets_are_a_one_line_error(capsys, target):
    rc, out, err = run(capsys, str(cortex.examples.L2_PIPELINE), "-t", target)
    assert rc == 2 and out == ""
    assert err.count("\n") == 1
    assert err.startswith(f"cortex-opt: error: argument -t/--target: invalid choice: '{target}' (choose from mlir, numpy, iree)")
