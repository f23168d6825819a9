"""The test suite's own rules: no test module imports another (shared code lives in tests/helpers/),
and nothing imports through `tests.` (plain `pytest` cannot resolve it; `python -m pytest` can)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def imported_names(path: Path) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.lineno, node.module))
    return found


def bad_imports(tests: Path = TESTS) -> list[str]:
    test_modules = {p.stem for p in tests.glob("test_*.py")}
    bad = []
    for path in sorted(tests.rglob("*.py")):
        for line, name in imported_names(path):
            top = name.split(".")[0]
            if top == "tests" or top in test_modules or top == "conftest":
                bad.append(f"{path.relative_to(tests)}:{line}: imports {name} (move what is shared to tests/helpers/)")
    return bad


def test_no_test_module_imports_another():
    assert not bad_imports(), "\n".join(bad_imports())


def test_the_rule_catches_both_forms(tmp_path):
    (tmp_path / "test_a.py").write_text("X = 1\n")
    (tmp_path / "test_b.py").write_text("from test_a import X\nfrom tests.helpers.numerics import EPS32\n")
    (tmp_path / "test_c.py").write_text("from helpers.numerics import EPS32\nimport numpy\n")
    assert [b.split(":")[0] for b in bad_imports(tmp_path)] == ["test_b.py", "test_b.py"]
