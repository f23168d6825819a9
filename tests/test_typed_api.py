"""The public API is typed: `cortex.X`, imported lazily through the package's `__getattr__` (typed `Any`),
is also imported under `TYPE_CHECKING` from its home, so a type checker sees the real signature. A name
added to `_API_HOMES` without that import would silently be `Any` to every user's type checker."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import cortex
import cortex.options

INIT = Path(cortex.__file__).resolve()


def typed_names(source: str) -> dict[str, str]:
    """name -> module of each `from M import X as X` inside `if TYPE_CHECKING:` at the top of `source`."""
    names = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom) and stmt.module:
                    names |= {(a.asname or a.name): stmt.module for a in stmt.names}
    return names


def test_every_lazy_api_name_is_imported_for_type_checkers_from_its_home():
    assert typed_names(INIT.read_text()) == cortex._API_HOMES


def test_a_lazy_name_without_its_typed_import_is_caught():
    source = INIT.read_text().replace("    from cortex.driver import quantize as quantize\n", "")
    assert "quantize" not in typed_names(source)


def test_compile_fields_are_the_compile_options():
    """`cortex.compile(module, **fields)` is typed by `CompileFields`: the same names as `CompileOptions`."""
    fields = typing.get_type_hints(cortex.options.CompileFields)
    assert tuple(fields) == cortex.options.COMPILE_OPTION_NAMES
    assert not cortex.options.CompileFields.__required_keys__
