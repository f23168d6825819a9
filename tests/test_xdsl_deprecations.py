"""The project's code uses no API that xDSL marks deprecated: those calls break when the xDSL pin is lifted.

Two checks. Statically, over every Python file of the repository (tests and benchmarks too): no call to a rewriter/builder method xDSL itself
flags deprecated (read from xDSL, so a newly deprecated method is caught without editing this file), and no
name that an xDSL module only serves through its module `__getattr__` shim (how xDSL keeps moved names, e.g.
`from xdsl.dialects.linalg import FillOp`, alive with a DeprecationWarning). Dynamically: a compile of the
small CNN and the IREE legalisation passes, which run the project's own rewrite patterns, warn nothing
deprecated from a file of this tree.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import warnings
from pathlib import Path

import pytest
from xdsl.builder import Builder
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import Rewriter

import cortex
from cortex.backends.iree.compiler import legalized
from cortex.driver import run_passes
from cortex.examples.small_cnn import ENTRY as CNN_ENTRY
from cortex.examples.small_cnn import build_small_cnn, small_cnn_inputs
from cortex.ir import parse_module

ROOT = Path(__file__).resolve().parent.parent
SKIP = {"lit", "docs", "build", "Output", "__pycache__"}


def package_files() -> list[Path]:
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP and not d.startswith(".")]
        files += [Path(dirpath) / f for f in filenames if f.endswith(".py")]
    return sorted(files)


def deprecated_methods(classes: tuple[type, ...] = (PatternRewriter, Builder)) -> set[str]:
    """Methods of xDSL's `classes` that xDSL marks `@deprecated` (properties included)."""
    names = set()
    for cls in classes:
        for name in dir(cls):
            member = inspect.getattr_static(cls, name, None)
            if isinstance(member, (staticmethod, classmethod)):
                member = member.__func__
            func = member.fget if isinstance(member, property) else member
            if getattr(func, "__deprecated__", None) is not None:
                names.add(name)
    return names


def shimmed(module_name: str, name: str) -> bool:
    """True when `name` is not a real attribute or submodule of xDSL's `module_name` (served by a shim or absent)."""
    module = importlib.import_module(module_name)
    if name in vars(module):
        return False
    return not is_submodule(module_name, name)


def is_submodule(module_name: str, name: str) -> bool:
    if not hasattr(importlib.import_module(module_name), "__path__"):
        return False
    return importlib.util.find_spec(f"{module_name}.{name}") is not None


def receiver_text(node: ast.expr) -> str:
    return ast.unparse(node)


def uses_in(path: Path, methods: set[str], static: set[str]) -> list[str]:
    tree = ast.parse(path.read_text(), str(path))
    xdsl_modules: dict[str, str] = {}  # local alias -> xdsl module name
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("xdsl"):
            for alias in node.names:
                if shimmed(node.module, alias.name):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}")
                elif is_submodule(node.module, alias.name):
                    xdsl_modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("xdsl") and alias.asname:
                    xdsl_modules[alias.asname] = alias.name
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        if isinstance(node.value, ast.Name) and node.value.id in xdsl_modules:
            if shimmed(xdsl_modules[node.value.id], node.attr):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value.id}.{node.attr}")
        # `Rewriter.x` is the static helper class (its own deprecations: `static`); other *rewriter/*builder
        # receivers are PatternRewriter/Builder instances.
        receiver = receiver_text(node.value)
        flagged = static if receiver == "Rewriter" else methods
        if node.attr in flagged and receiver.lower().endswith(("rewriter", "builder")):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {receiver}.{node.attr}")
    return found


def test_the_scan_sees_the_known_deprecations():
    """The check itself can fail: xDSL still flags the calls and import the project used to make."""
    assert {"replace_matched_op", "replace_op", "erase_op", "insert_op"} <= deprecated_methods()
    assert shimmed("xdsl.dialects.linalg", "FillOp")
    assert not shimmed("xdsl.dialects.linalg", "ops")


@pytest.mark.slow
def test_no_deprecated_xdsl_api_in_the_repository():
    methods, static = deprecated_methods(), deprecated_methods((Rewriter,))
    found = [use for path in package_files() for use in uses_in(path, methods, static)]
    assert not found, "deprecated xDSL API used:\n" + "\n".join(found)


POW = """func.func @f(%x: tensor<8xf32>, %y: tensor<8xf32>) -> tensor<8xf32> {
  %r = cortex.pow %x, %y : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}"""


def own_deprecations(caught: list[warnings.WarningMessage]) -> list[str]:
    tree = str(ROOT) + os.sep
    return sorted({f"{w.filename}:{w.lineno}: {w.message}" for w in caught
            if issubclass(w.category, DeprecationWarning) and os.path.realpath(w.filename).startswith(tree)})


def test_compile_and_legalisation_warn_nothing_deprecated():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        module = build_small_cnn()
        compiled = cortex.compile(module, entry=CNN_ENTRY, mode=None,
                                  post_passes="cortex-pad-as-tensor-pad,cortex-fuse-linalg-elementwise")
        compiled(small_cnn_inputs(1)[0])
        legalized(cortex.lower(build_small_cnn()))
        legalized(run_passes(parse_module(POW), "convert-cortex-to-linalg"))
    assert not own_deprecations(caught), "\n".join(own_deprecations(caught))


def test_own_deprecations_sees_a_warning_from_this_tree():
    """The dynamic check's filter is not vacuous: a DeprecationWarning raised here, in the tree, is reported."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        warnings.warn("x", DeprecationWarning, stacklevel=1)
    assert len(own_deprecations(caught)) == 1


def test_a_renamed_function_warns_at_its_callers_line():
    """The DeprecationWarning of a former function name points at the code that calls it."""
    from cortex.deprecation import renamed_function

    def new_name(x):
        return x + 1

    old = renamed_function("somewhere.old_name", new_name)
    with pytest.warns(DeprecationWarning, match="somewhere.old_name is deprecated: use new_name") as caught:
        assert old(1) == 2
    assert caught[0].filename == __file__
