"""Renamed names keep working for one release: each former name warns (a DeprecationWarning naming the new
name, pointing at the line that used it) and behaves as the new name does. One helper makes every alias
(`cortex.deprecation`)."""

from __future__ import annotations

import importlib
import warnings

import pytest

from cortex import deprecation

RENAMED_CLASSES = [
    ("cortex.passes.schedule", "Stage", "StageNode"),
    ("cortex.reports.graph_view", "Stage", "StageRow"),
    ("cortex.frame_runners", "Stage", "StageTime"),
]


@pytest.mark.parametrize(("module", "old", "new"), RENAMED_CLASSES)
def test_a_renamed_class_warns_and_is_the_new_class(module, old, new):
    mod = importlib.import_module(module)
    with pytest.warns(DeprecationWarning, match=rf"{module}\.{old} is deprecated: use {module}\.{new}") as seen:
        alias = getattr(mod, old)
    assert alias is getattr(mod, new)
    assert seen[0].filename == __file__  # the warning names the line that used the old name
    assert old not in getattr(mod, "__all__", ()) and (not hasattr(mod, "__all__") or new in mod.__all__)


@pytest.mark.parametrize(("module", "old", "new"), RENAMED_CLASSES)
def test_the_three_stage_classes_have_three_names(module, old, new):
    mod = importlib.import_module(module)
    assert old not in vars(mod)  # only reachable through the warning alias
    assert getattr(mod, new).__module__ == module


def test_a_name_never_defined_is_still_an_attribute_error():
    mod = importlib.import_module("cortex.passes.schedule")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="has no attribute 'Stages'"):
            mod.Stages  # noqa: B018


def test_renamed_function_warns_at_the_call_site_and_forwards_everything():
    def add(a: int, b: int = 1) -> int:
        """Adds."""
        return a + b

    old = deprecation.renamed_function("somewhere.plus", add)
    with pytest.warns(DeprecationWarning, match=r"somewhere\.plus is deprecated: use add") as seen:
        assert old(2, b=5) == 7
    assert seen[0].filename == __file__
    assert old.__name__ == "plus" and old.__doc__ == "Adds."
