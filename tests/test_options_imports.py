"""`options.py` reads each fact at its one home, at the lowest level that has it: the weight table a call
binds (`semantics.modes.weights_for_call`), the scene-change precisions (`semantics.defaults`), the backend
table, the pass registry (to parse the user's pipelines) and the one pass whose option text it writes
(`specialize_mode.weight_values_text`). It imports no interpreter module."""

from __future__ import annotations

import ast
import typing
from pathlib import Path

import cortex
from cortex import options
from cortex.passes.decompose_scene_change import PRECISIONS
from cortex.semantics.defaults import SCENE_PRECISIONS

OPTIONS = Path(cortex.__file__).parent / "options.py"


def imported_modules() -> set[str]:
    tree = ast.parse(OPTIONS.read_text())
    return {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}


def test_options_imports_its_facts_from_their_homes():
    cortex_modules = {m for m in imported_modules() if m.startswith("cortex.")}
    assert cortex_modules == {
        "cortex.backends.backend",
        "cortex.errors",
        "cortex.passes.specialize_mode",
        "cortex.registry",
        "cortex.semantics.defaults",
        "cortex.semantics.modes",
    }
    assert not any(m.startswith("cortex.interpreter") for m in cortex_modules)


def test_the_precision_names_agree_everywhere():
    assert set(SCENE_PRECISIONS) == set(PRECISIONS) == set(typing.get_args(options.Precision))
    assert SCENE_PRECISIONS[0] == "f64"  # the default: scene change computed as written
