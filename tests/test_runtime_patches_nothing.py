"""Importing the runtime changes nothing in xDSL: where the compiler is installed beside it, a host
process that uses xDSL itself keeps xDSL's own behaviour (the compiler's patches come with the compiler)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

RUNTIME = sorted(f"cortex.runtime.{p.stem}" for p in (Path(__file__).resolve().parents[1] / "runtime").glob("*.py")
                 if p.stem not in ("__init__", "ray_executor"))  # ray_executor: Ray itself is optional

SCRIPT = """
import sys
from importlib import import_module
from xdsl import builder
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr
from xdsl.ir import Operation
from xdsl.utils.mlir_lexer import MLIRLexer

def xdsl_state():
    return (Operation.__post_init__, builder._override_operation_post_init, DenseIntOrFPElementsAttr.is_splat,
            MLIRLexer._unescaped_characters_regex)

before = xdsl_state()
for name in sys.argv[1:]:
    import_module(name)
assert xdsl_state() == before, "importing the runtime patched xDSL"
compiler = sorted(m for m in sys.modules if m.startswith(("cortex.dialects", "cortex.ir", "cortex.passes", "cortex.driver")))
assert not compiler, compiler
"""


def test_importing_the_runtime_patches_no_xdsl():
    assert "cortex.runtime.pipeline" in RUNTIME and "cortex.runtime.externs" in RUNTIME
    done = subprocess.run([sys.executable, "-c", SCRIPT, *RUNTIME], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_check_sees_a_patch():
    """The same script with the compiler's IR module among the imports: it patches xDSL, and the check says so."""
    done = subprocess.run([sys.executable, "-c", SCRIPT, "cortex.ir"], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "importing the runtime patched xDSL" in done.stderr, done.stderr
