"""The package's levels form a DAG: every import, including those inside functions, runs downward.

`LAYERS` is the declared order, bottom first. A module may import modules of
its own unit (the same folder) and of any unit in a lower layer, never one in
its own layer or above. The graph is read from the source with `ast`, so an
import hidden inside a function counts, and so does a module named as a string
to `import_module` when the string is a literal `cortex.` path (the pass
registry's tables name their modules that way).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

README = ROOT / "README.md"
ROW = re.compile(r"^\| (\d+|—) \| ((?:`[^`]+`(?:, )?)+) \|", re.M)


def unit_name(path: str) -> str:
    """`errors.py` → cortex.errors, `passes/` → cortex.passes, `__init__.py` → cortex."""
    stem = path.removesuffix("/").removesuffix(".py")
    return "cortex" if stem == "__init__" else f"cortex.{stem}"


def declared_layers(text: str) -> tuple[list[list[str]], list[str]]:
    """The README's levels table: (layers bottom first, each a list of units; the paths outside the package)."""
    layers: dict[int, list[str]] = {}
    outside: list[str] = []
    for level, cells in ROW.findall(text):
        paths = re.findall(r"`([^`]+)`", cells)
        if level == "—":
            outside += [p.removesuffix("/") for p in paths]
        else:
            layers.setdefault(int(level), []).extend(unit_name(p) for p in paths)
    assert sorted(layers) == list(range(len(layers))), f"README's levels must be numbered 0..n, got {sorted(layers)}"
    return [layers[k] for k in sorted(layers)], outside


LAYERS, OUTSIDE = declared_layers(README.read_text())
"""Bottom first, read from README.md's table (the one statement of the levels). Units in one layer are independent."""

EXCLUDED = tuple(OUTSIDE)


def unit_of(module: str) -> str:
    """The declared unit a dotted module name belongs to (its longest declared prefix)."""
    units = [u for layer in LAYERS for u in layer]
    best = max((u for u in units if module == u or module.startswith(u + ".")), key=len, default=None)
    if best is None:
        raise AssertionError(f"module {module} belongs to no declared layer: add its folder to LAYERS")
    return best


def layer_of(unit: str) -> int:
    return next(i for i, layer in enumerate(LAYERS) if unit in layer)


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("cortex", *parts))


def package_modules(root: Path = ROOT) -> dict[str, Path]:
    return {
        module_name(p, root): p
        for p in sorted(root.rglob("*.py"))
        if p.relative_to(root).parts[0] not in EXCLUDED and "Output" not in p.parts
    }


def imported_modules(path: Path, module: str, modules: dict[str, Path]) -> list[tuple[int, str]]:
    """(line, module) of every cortex import in the file, at any depth, plus string literals naming a module."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join([*package.split(".")[: len(package.split(".")) - node.level + 1], *filter(None, [base])])
            found.append((node.lineno, base))
            # `from cortex.backends import numpy_arith` imports the submodule
            found += [(node.lineno, f"{base}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("cortex."):
            if node.value in modules:  # a module named for import_module, not an op name like "cortex.add"
                found.append((node.lineno, node.value))
    return sorted({(line, m) for line, m in found if m == "cortex" or m.startswith("cortex.")})


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The package module `name` refers to (a module, or the module defining the imported name)."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def backward_edges(root: Path = ROOT) -> list[str]:
    modules = package_modules(root)
    bad: list[str] = []
    for module, path in modules.items():
        source_unit = unit_of(module)
        for line, target_name in imported_modules(path, module, modules):
            target = resolve(target_name, modules)
            if target is None:
                continue
            target_unit = unit_of(target)
            if target_unit == source_unit:
                continue
            where = f"{path.relative_to(root)}:{line}: "
            if layer_of(target_unit) >= layer_of(source_unit) and not any(b.startswith(where) for b in bad):
                bad.append(f"{path.relative_to(root)}:{line}: {module} imports {target} ({source_unit} may not depend on {target_unit})")
    return bad


def test_every_module_has_a_layer():
    for module in package_modules():
        unit_of(module)


def test_the_levels_table_names_every_top_level_module_and_folder():
    """Nothing falls into the root API's level unnoticed: each top-level .py file and package folder has a row."""
    declared = {u for layer in LAYERS for u in layer}
    top = {unit_name(p.name + ("/" if p.is_dir() else "")) for p in ROOT.iterdir() if not p.name.startswith((".", "_")) or p.name == "__init__.py"}
    python = {u for u in top if (ROOT / u.removeprefix("cortex.")).with_suffix(".py").exists() or (ROOT / u.removeprefix("cortex.") / "__init__.py").exists()}
    assert python - {"cortex"} <= declared, f"add a row to README.md's levels table for: {sorted(python - declared - {'cortex'})}"
    assert {"cortex", "cortex.errors", "cortex.driver"} <= declared


def test_the_levels_table_is_what_the_test_reads():
    """The parser on a small table: levels group units, '—' rows are outside the package."""
    layers, outside = declared_layers(
        "| level | folder | x |\n|---|---|---|\n| 0 | `errors.py` | a |\n| 1 | `semantics/` | b |\n"
        "| 1 | `video/` | c |\n| 2 | `__init__.py` | d |\n| — | `tests/`, `lit/` | e |\n"
    )
    assert layers == [["cortex.errors"], ["cortex.semantics", "cortex.video"], ["cortex"]]
    assert outside == ["tests", "lit"]


def test_imports_run_downward():
    bad = backward_edges()
    assert not bad, "imports against the declared layer order:\n" + "\n".join(bad)


def test_video_depends_only_on_the_leaf():
    modules = package_modules()
    for module, path in modules.items():
        if unit_of(module) != "cortex.video":
            continue
        for line, name in imported_modules(path, module, modules):
            target = resolve(name, modules)
            assert target is None or unit_of(target) in ("cortex.video", "cortex.errors", "cortex"), f"{module}:{line} imports {target}"


@pytest.mark.parametrize(
    "source, statement",
    [
        ("semantics/kernels.py", "from cortex.dialects.tensor_ops import AddOp"),  # a kernel importing the dialect
        ("dialects/folding.py", "    from cortex.backends.runtime import load"),  # hidden inside a function
        ("video/source.py", "from cortex.examples.l2_pipeline import build_l2_pipeline"),
        ("semantics/values.py", "from cortex.video import synthetic"),  # same layer, another unit
        ("passes/registry_like.py", '    TABLE = {"x": ("cortex.lowering.cortex_to_linalg", "P")}'),
    ],
)
def test_a_backward_import_is_caught(tmp_path, source, statement):
    """The checker itself: planting one backward import makes it report exactly that edge."""
    copy = tmp_path / "cortex"
    for p in package_modules().values():
        rel = p.relative_to(ROOT)
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(p.read_text())
    planted = copy / source
    text = planted.read_text() if planted.exists() else ""
    body = f"def _planted():\n{statement}\n" if statement.startswith("    ") else statement + "\n"
    planted.write_text(text + "\n" + body)
    bad = backward_edges(copy)
    assert len(bad) == 1 and bad[0].startswith(source), bad
