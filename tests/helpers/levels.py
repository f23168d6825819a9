"""The package as README.md's levels table declares it: the levels, what lies outside the package, and the
package's modules by dotted name (read by the layer test and the size guard)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

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
