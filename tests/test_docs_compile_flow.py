"""docs/compile-flow.md's listings are what their commands print today (each is run again here), and its
Python block runs: the page cannot drift from the compiler."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import cortex
from cortex.options import CompileOptions, compile_pipeline_text

ROOT = Path(cortex.__file__).resolve().parent
DOC = ROOT / "docs" / "compile-flow.md"
CORTEX_OPT = [sys.executable, "-c",
              "import sys; sys.argv[0] = 'cortex-opt'; from cortex.tools.entry import cortex_opt; cortex_opt()"]


def listings() -> list[tuple[str, str]]:
    """(command, printed output) of every ```console block: its first line is `$ command`."""
    found = []
    for body in re.findall(r"```console\n(.*?)```", DOC.read_text(), flags=re.DOTALL):
        first, _, shown = body.partition("\n")
        assert first.startswith("$ "), f"a listing starts with its command: {first!r}"
        found.append((first[2:], shown))
    return found


def test_the_doc_has_its_listings():
    commands = [c for c, _ in listings()]
    assert len(commands) >= 7
    assert any(c.endswith("-t numpy") for c in commands) and any(c.endswith("-t iree") for c in commands)
    assert sum("compile_pipeline_text" in c for c in commands) >= 2


def run(command: str) -> subprocess.CompletedProcess:
    """`command` as the doc shows it, with cortex-opt and python3 those of this interpreter's cortex."""
    words = shlex.split(command)
    if words[0] == "cortex-opt":
        words = [*CORTEX_OPT, *words[1:]]
    elif words[0] == "python3":
        words = [sys.executable, *words[1:]]
    else:
        raise AssertionError(f"a listing runs cortex-opt or python3, not {words[0]}")
    return subprocess.run(words, cwd=ROOT, env=dict(os.environ), capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(("command", "shown"), listings(), ids=[c[:60] for c, _ in listings()])
def test_each_listing_is_what_its_command_prints(command, shown):
    done = run(command)
    printed = done.stdout if done.returncode == 0 else done.stderr
    if shown.startswith("error:"):
        assert done.returncode != 0, command
    else:
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    assert printed.rstrip() == shown.rstrip(), f"docs/compile-flow.md is stale for: {command}\nnow it prints:\n{printed}"


def test_the_printed_pipelines_are_the_compiles():
    """The pipelines the doc prints are `compile_pipeline_text` of the options its commands name, in process too."""
    shown = {c: s.strip() for c, s in listings() if "compile_pipeline_text" in c}
    options = {"CompileOptions()": CompileOptions(), 'CompileOptions(mode="power_save")': CompileOptions(mode="power_save")}
    for spelled, made in options.items():
        (text,) = [s for c, s in shown.items() if f"(cortex.{spelled})" in c]
        assert text == compile_pipeline_text(made)


@pytest.mark.slow
def test_the_python_block_runs(tmp_path):
    (block,) = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    script = tmp_path / "flow.py"
    script.write_text(block.replace('"lit/', repr(str(ROOT)).strip("'").join(['"', "/lit/"])).replace(
        '"scores.cortex"', repr(str(tmp_path / "scores.cortex"))))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "def scores(gray, prev):" in done.stdout and "['entry', 'split']" in done.stdout
    assert (tmp_path / "scores.cortex").is_file()
