"""`cortex-run --help`, `cortex-run --version` and `cortex-opt --version` answer without loading xDSL or the dialect.

Each runs through its console-script entry point in a fresh interpreter, which
then lists the modules it loaded: those commands read no IR, so importing the
compiler (about a second and a half of a two-second start) is the tools'
import structure going wrong, not a cost of the answer.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from cortex.semantics.modes import MODES

SCRIPT = """
import sys
from cortex.tools import entry
sys.argv = [sys.argv[1], *sys.argv[3:]]
code = None
try:
    entry.{entry}()
except SystemExit as e:
    code = e.code
print("LOADED", *sorted(m for m in sys.modules if m.split(".")[0] == "xdsl" or m.startswith("cortex.dialects")))
print("CODE", code)
"""


def start(entry: str, program: str, *args: str) -> tuple[str, list[str], object]:
    """Run the console script `entry` with `args`: (what it printed before the module list, the xDSL/dialect
    modules loaded, the exit code)."""
    done = subprocess.run([sys.executable, "-c", SCRIPT.format(entry=entry), program, "--", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    head, _, tail = done.stdout.rpartition("LOADED")
    loaded_line, _, code_line = tail.partition("\nCODE ")
    return head, loaded_line.split(), code_line.strip()


@pytest.mark.parametrize(
    "entry, program, args, printed",
    [
        ("cortex_run", "cortex-run", ("--help",), "usage: cortex-run"),
        ("cortex_run", "cortex-run", ("--version",), "cortex-run "),
        ("cortex_run", "cortex-run", ("--runner", "reference", "--version"), "; backend reference)"),
        ("cortex_opt", "cortex-opt", ("--version",), "cortex-opt "),
    ],
)
def test_help_and_version_load_no_xdsl(entry, program, args, printed):
    out, loaded, code = start(entry, program, *args)
    assert printed in out and code == "0", (out, code)
    assert not loaded, f"{program} {' '.join(args)} loaded {loaded[:5]}..."


def test_help_still_lists_the_modes():
    """The mode table is read from its xDSL-free home, not dropped from the help."""
    out, _, _ = start("cortex_run", "cortex-run", "--help")
    assert all(mode in out for mode in MODES)


def test_cortex_opt_version_names_xdsl():
    """The short path prints what xDSL's own --version did: cortex-opt and the xDSL it runs on."""
    from importlib.metadata import version

    out, _, _ = start("cortex_opt", "cortex-opt", "--version")
    assert f"xDSL {version('xdsl')}" in out, out
