"""Every package module stays under a reader's span: at most 600 lines a file, 80 lines a function.

The package files are the ones tests/test_layers.py walks (everything outside the README's
"outside the package" paths). Sizes are read with `ast`: a function counts from its `def` line
to its last line, docstring included, nested functions and methods each on their own.

`ALLOWED` names the current offenders with their size today. It only shrinks: an entry fails
when its file or function grows past the recorded size, and when it is back under the limit
(then the entry goes).
"""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.levels import ROOT, package_modules

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80

ALLOWED: dict[str, int] = {}
"""Offender → its size when listed (lines). Shrink or remove entries; never add or raise one."""


def function_sizes(tree: ast.AST) -> dict[str, int]:
    """Qualified name (Class.method, outer.inner) → lines from `def` to the last line, for every function."""
    sizes: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    assert child.end_lineno is not None
                    sizes[name] = child.end_lineno - child.lineno + 1
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sizes


def measured_sizes(root: Path = ROOT) -> dict[str, int]:
    """Every file over MAX_FILE_LINES and every function over MAX_FUNCTION_LINES → its size."""
    found: dict[str, int] = {}
    for path in package_modules(root).values():
        rel = path.relative_to(root).as_posix()
        text = path.read_text()
        lines = len(text.splitlines())
        if lines > MAX_FILE_LINES:
            found[rel] = lines
        for name, size in function_sizes(ast.parse(text, filename=rel)).items():
            if size > MAX_FUNCTION_LINES:
                found[f"{rel}::{name}"] = size
    return found


def test_function_sizes_counts_nested_and_methods() -> None:
    tree = ast.parse("class A:\n    def m(self):\n        def inner():\n            pass\n        return 1\n\ndef f():\n    pass\n")
    assert function_sizes(tree) == {"A.m": 4, "A.m.inner": 2, "f": 2}


def test_measured_sizes_sees_a_long_file_and_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    (tmp_path / "big.py").write_text("def long():\n" + body + "\n" + "\n" * MAX_FILE_LINES)
    (tmp_path / "small.py").write_text("def short():\n    pass\n")
    assert measured_sizes(tmp_path) == {"big.py": MAX_FUNCTION_LINES + 1 + MAX_FILE_LINES, "big.py::long": MAX_FUNCTION_LINES + 1}


def test_no_module_or_function_past_its_limit() -> None:
    found = measured_sizes()
    new = {k: v for k, v in found.items() if k not in ALLOWED}
    assert not new, f"over {MAX_FILE_LINES} lines a file or {MAX_FUNCTION_LINES} a function; split them by job: {new}"


def test_allowlist_only_shrinks() -> None:
    found = measured_sizes()
    grown = {k: (found[k], limit) for k, limit in ALLOWED.items() if found.get(k, 0) > limit}
    assert not grown, f"allowlisted offenders grew (now, recorded): {grown}"
    stale = sorted(k for k in ALLOWED if k not in found)
    assert not stale, f"back under the limit: remove from ALLOWED: {stale}"
