"""The README's and the user guide's Python blocks run verbatim, from a directory that is not the repository, and
every `cortex-opt examples/...` command they show runs as shown."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import cortex

README = Path(cortex.__file__).resolve().parent / "README.md"
GUIDE = sorted((README.parent / "docs").glob("*.md"))
"""The user guide's pages (docs/dialects/ is generated and tested on its own)."""


def python_blocks(page: Path = README) -> list[str]:
    return re.findall(r"```python\n(.*?)```", page.read_text(), flags=re.DOTALL)


@pytest.mark.slow
@pytest.mark.parametrize("page", [README, README.parent / "docs" / "python-api.md"], ids=lambda p: p.name)
def test_the_readme_python_block_runs_from_any_directory(page, tmp_path):
    """The page's Python API block (the one that starts with `import cortex`; others are fragments)."""
    (block,) = [b for b in python_blocks(page) if b.startswith("import cortex\n")]
    script = tmp_path / "readme_block.py"
    script.write_text(block)
    done = subprocess.run(  # the environment as given: an installed cortex, or PYTHONPATH naming one
        [sys.executable, str(script)], cwd=tmp_path, env=dict(os.environ), capture_output=True, text=True, timeout=600, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "def l2_frame" in done.stdout  # compiled.source was printed
    assert "ms/frame" in done.stdout and "saliency" not in done.stdout.split("ms/frame", 1)[1]  # the profile


@pytest.mark.slow
def test_compile_specialises_to_the_mode_by_default():
    module = cortex.parse(cortex.examples.L2_PIPELINE)
    power = cortex.compile(module, mode="power_save").specialize((480, 640, 3))
    assert "saliency" not in power.source and "motion" not in power.source
    agnostic = cortex.compile(module, mode="power_save", specialize=False).specialize((480, 640, 3))
    assert "saliency" in agnostic.source and "def l2_frame(" in agnostic.source
    assert "wc" in agnostic.source.split("def l2_frame(", 1)[1].split(")")[0]  # a weight argument


@pytest.mark.slow
def test_profile_says_how_when_off_and_reports_when_on():
    module = cortex.build_l2_pipeline(64, 64)
    frame = __import__("numpy").zeros((64, 64, 3), "uint8")
    off = cortex.compile(module, mode="balanced")
    off(frame)
    assert "compiled.profiling = True" in str(off.profile()) and not off.profile()
    on = cortex.compile(module, mode="balanced")
    on.profiling = True
    on(frame)
    profile = on.profile()
    assert profile.frames == 1 and profile and "gray" in str(profile)


def test_contributing_adding_a_backend_names_what_exists():
    """Every file CONTRIBUTING's "Adding a backend" cites exists, and every name it cites is defined (or
    imported) in one of those files: the section describes the code as it is."""
    import ast

    root = README.parent
    text = (root / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Adding a backend"):text.index("## Running tests")]
    cited = re.findall(r"`([^`]+)`", section)
    paths = [c for c in cited if re.fullmatch(r"[\w/]+\.py", c)]
    assert {"runtime/executables.py", "runtime/program.py", "runtime/numpy_executable.py",
            "runtime/iree_executable.py"} <= set(paths)
    missing = [p for p in paths if not (root / p).exists()]
    assert not missing, missing
    defined: set[str] = set()
    for p in {*paths, "driver.py"}:
        if p.startswith("tests/"):
            continue
        for node in ast.walk(ast.parse((root / p).read_text())):
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                defined.add(node.target.id)
            elif isinstance(node, ast.Assign):
                defined |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                defined |= {(a.asname or a.name).split(".")[0] for a in node.names}
    names = [c.removesuffix("()") for c in cited if re.fullmatch(r"[A-Za-z_]\w*(\(\))?", c)]
    names = [n for n in names if n not in ("backends", "runtime")]
    assert len(names) >= 15
    undefined = sorted({n for n in names if n not in defined})
    assert not undefined, f"names the section cites that its files do not define: {undefined}"


@pytest.mark.slow
def test_contributing_adding_a_backend_cites_every_file_that_names_a_backend():
    """Each module that names the "iree" backend in code (not in a docstring) is a file a new backend touches
    too: the section cites it, unless it is one of the IREE backend's own files (`backends/iree/`, the runtime's
    `iree_*.py`)."""
    import ast

    root = README.parent
    text = (root / "CONTRIBUTING.md").read_text()
    section = text[text.index("## Adding a backend"):text.index("## Running tests")]
    naming = []
    for path in sorted(root.rglob("*.py")):
        relative = path.relative_to(root)
        if relative.parts[0] in ("tests", "benchmarks", "scripts") or path.name.startswith("iree_") \
                or relative.parts[:2] == ("backends", "iree"):
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
        if any(isinstance(n, ast.Constant) and n.value == "iree" and id(n) not in docstrings for n in ast.walk(tree)):
            naming.append(str(relative))
    assert "runtime/executables.py" in naming  # the loader's row: the scan sees what it must
    uncited = [p for p in naming if f"`{p}`" not in section]
    assert not uncited, f"files that name a backend, which CONTRIBUTING's \"Adding a backend\" does not cite: {uncited}"


def fenced_blocks(languages: tuple[str, ...]) -> list[str]:
    """The bodies of the README's and the guide's fenced blocks whose language is one of `languages` ("" for none)."""
    blocks, body, language = [], None, ""
    for line in "\n".join(p.read_text() for p in (README, *GUIDE)).splitlines():
        if line.startswith("```"):
            if body is None:
                body, language = [], line[3:].strip()
            else:
                if language in languages:
                    blocks.append("\n".join(body) + "\n")
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def readme_commands() -> list[tuple[str, str | None]]:
    """Every `cortex-opt examples/...` command of the README's and the guide's shell blocks and `$` transcripts (continuation
    lines joined, comments dropped), with the error a transcript shows it printing (None: it succeeds)."""
    found: list[tuple[str, str | None]] = []
    for body in fenced_blocks(("", "sh")):
        lines = body.replace("\\\n", " ").splitlines()
        for k, line in enumerate(lines):
            transcript = line.startswith("$ ")
            command = line.removeprefix("$ ").split("  #", 1)[0].strip()
            if not command.startswith("cortex-opt examples/"):
                continue
            shown = lines[k + 1] if transcript and k + 1 < len(lines) else ""
            found.append((command, shown if shown.startswith("error:") else None))
    return found


def test_the_readme_finds_its_commands():
    commands = [c for c, _ in readme_commands()]
    assert len(commands) >= 10 and any("cortex-schedule" in c for c in commands) and any("turbo" in c for c in commands)


def installed_tool(name: str) -> list[str]:
    """How to run console script `name` of the cortex this interpreter imports, PATH or not.

    The script installed beside this interpreter (its environment's scripts directory, where pip puts
    `[project.scripts]`), else what that script runs: the entry point in `cortex.tools.entry`, under
    this interpreter. Never a `name` found elsewhere on PATH: that may belong to another environment
    (another Python, another cortex)."""
    for directory in (Path(sysconfig.get_path("scripts")), Path(sys.executable).parent):
        script = directory / name
        if script.is_file() and os.access(script, os.X_OK):
            return [str(script)]
    return entry_point(name)


def entry_point(name: str) -> list[str]:
    """What console script `name` runs (pyproject's `[project.scripts]`), under this interpreter."""
    function = name.replace("-", "_")
    return [sys.executable, "-c", f"import sys; sys.argv[0] = {name!r}; from cortex.tools.entry import {function}; {function}()"]


@pytest.mark.slow
@pytest.mark.parametrize("find", [installed_tool, entry_point], ids=["installed", "entry-point"])
def test_the_tool_runs_without_path(find, tmp_path):
    """With PATH holding no cortex tools at all, the command found for cortex-opt still runs."""
    env = dict(os.environ, PATH=str(tmp_path))
    done = subprocess.run([*find("cortex-opt"), "--help"], env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0 and "cortex-opt" in done.stdout, done.stderr[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize(("command", "error"), readme_commands(), ids=lambda v: v if isinstance(v, str) else "ok")
def test_every_readme_cortex_opt_command_runs_as_shown(command, error):
    """The bundled pipeline became shape-generic and three README commands (cortex-profile on it, the frame
    split, the lowering) failed with it, one as a crash: each command now runs as the README shows it
    (`cortex-opt` being the one installed with this cortex, found even when it is not on PATH)."""
    tool = shlex.join(installed_tool("cortex-opt"))
    command = re.sub(r"(^|\|\s*)cortex-opt\b", lambda m: m.group(1) + tool, command)  # each stage of a pipe
    done = subprocess.run(command, shell=True, cwd=README.parent, env=dict(os.environ), capture_output=True, text=True,
                          timeout=300, check=False)
    if error is None:
        assert done.returncode == 0, f"{command}\n{done.stderr[-2000:]}"
    else:
        assert done.returncode != 0 and error in done.stderr, f"{command}\n{done.stderr[-2000:]}"
