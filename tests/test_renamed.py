"""Renamed names keep working for one release: each former name warns (a DeprecationWarning naming the new
name, pointing at the line that used it) and behaves as the new name does. One helper makes every alias
(`cortex.deprecation`)."""

from __future__ import annotations

import importlib
import json
import warnings

import numpy as np
import pytest

import cortex
from cortex import deprecation
from cortex.runtime.modes import ModeSwitch
from cortex.runtime.pipeline import LoadedProgram

RENAMED_CLASSES = [
    ("cortex.runtime.pipeline", "CompiledPipeline", "LoadedProgram"),
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


# ---------------------------------------------------------------- runtime settings out of the compile's signature

GRAPH = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = cortex.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %z = cortex.mul %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
"""
GENERIC = GRAPH.replace("tensor<4xf32>", "tensor<?x4xf32>")
X = np.array([-2.0, -0.5, 0.5, 3.0], np.float32)


def test_compile_workers_warns_and_sets_stage_threads():
    with pytest.warns(DeprecationWarning, match=r"cortex\.compile\(workers=\) is deprecated: use compiled\.stage_threads") as seen:
        old = cortex.compile(cortex.parse(GRAPH), mode=None, workers=3)
    assert seen[0].filename == __file__
    new = cortex.compile(cortex.parse(GRAPH), mode=None)
    new.stage_threads = 3
    assert old.stage_threads == new.stage_threads == 3
    assert np.array_equal(old(X)[0], new(X)[0]) and np.array_equal(new(X)[0], 2 * X * X)


def test_compile_profile_warns_and_turns_profiling_on():
    with pytest.warns(DeprecationWarning, match=r"cortex\.compile\(profile=\) is deprecated: use compiled\.profiling = True"):
        old = cortex.compile(cortex.parse(GRAPH), mode=None, profile=True)
    assert old.profiling
    old(X)
    assert old.profile().frames == 1
    with pytest.warns(DeprecationWarning):
        assert not cortex.compile(cortex.parse(GRAPH), mode=None, profile=False).profiling


def test_the_compile_takes_no_runtime_setting_without_a_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = cortex.compile(cortex.parse(GRAPH), mode=None)
    assert compiled.stage_threads == 1 and not compiled.profiling


def test_compile_loaded_keywords_warn_too():
    from cortex.driver import compile_loaded

    with pytest.warns(DeprecationWarning, match=r"cortex\.compile_loaded\(workers=\)"):
        assert compile_loaded(cortex.parse(GRAPH), mode=None, workers=2).stage_threads == 2


def test_the_settings_reach_every_shape_and_every_mode():
    with pytest.warns(DeprecationWarning):
        generic = cortex.compile(cortex.parse(GENERIC), mode=None, workers=2, profile=True)
    assert generic.stage_threads == 2 and generic.profiling
    program = generic.specialize((2, 4))
    assert program.stage_threads == 2 and program.profiling
    generic.stage_threads = 3
    assert program.stage_threads == 3 and generic.specialize((3, 4)).stage_threads == 3
    one = cortex.compile(cortex.parse(GRAPH), mode=None).program
    switch = ModeSwitch({"a": LoadedProgram(one), "b": LoadedProgram(one)}, program=one)
    switch.stage_threads = 2
    assert [r.stage_threads for r in switch.runners.values()] == [2, 2] and switch.stage_threads == 2


def test_compiled_workers_attribute_warns_and_is_stage_threads():
    compiled = cortex.compile(cortex.parse(GRAPH), mode=None)
    with pytest.warns(DeprecationWarning, match=r"LoadedProgram\.workers is deprecated: use stage_threads"):
        compiled.workers = 2
    assert compiled.stage_threads == 2
    with pytest.warns(DeprecationWarning, match=r"LoadedProgram\.workers is deprecated"):
        assert compiled.workers == 2


def test_load_workers_warns_and_sets_stage_threads(tmp_path):
    path = cortex.compile(cortex.parse(GRAPH), mode=None).save(tmp_path / "p.cortex")
    with pytest.warns(DeprecationWarning, match=r"cortex\.load\(path, workers=\) is deprecated: use stage_threads="):
        old = cortex.load(path, workers=2)
    new = cortex.load(path, stage_threads=2)
    assert old.stage_threads == new.stage_threads == 2
    assert np.array_equal(old(X)[0], new(X)[0])
    with pytest.warns(DeprecationWarning, match=r"LoadedProgram\(workers=\) is deprecated: use stage_threads="):
        assert LoadedProgram(new.program, workers=3).stage_threads == 3


# ---------------------------------------------------------------- the reference interpreter is a runner, no backend


def test_cortex_run_backend_reference_warns_and_runs_the_reference_interpreter(capsys, tmp_path):
    from cortex.tools.cortex_run import main

    rows = {}
    for spelling in (("--runner", "reference"), ("--backend", "reference")):
        jsonl = tmp_path / f"{spelling[0][2:]}.jsonl"
        rc = main(["--size", "64x96", "--frames", "2", "--quiet", *spelling, "--scores-jsonl", str(jsonl)])
        out, err = capsys.readouterr()
        assert rc == 0, err
        assert "backend reference" in out  # the summary names the runner as before
        rows[spelling[0]] = [json.loads(line)["score"] for line in jsonl.read_text().splitlines()]
        warned = "warning: --backend reference is deprecated: use --runner reference" in err
        assert warned == (spelling[0] == "--backend")
    assert rows["--runner"] == rows["--backend"] and len(rows["--runner"]) == 2


def test_cortex_run_help_names_only_backends_as_backends():
    from cortex.tools.run_args import build_parser

    text = build_parser().format_help()
    assert "--backend {numpy,iree}" in text and "--runner {compiled,reference}" in text


def test_make_backend_warns_and_gives_the_runner_make_runner_gives():
    from cortex import frame_runners

    module = cortex.parse(GRAPH)
    with pytest.warns(DeprecationWarning, match=r"cortex\.frame_runners\.make_backend is deprecated: use make_runner"):
        old = frame_runners.make_backend("reference", module, "main", None, None)
    new = frame_runners.make_runner(None, module, "main", None, None)
    assert type(old) is type(new) is frame_runners.InterpretedRun and old.name == new.name == "reference"
    assert np.array_equal(old(X)[0], new(X)[0])
    with pytest.warns(DeprecationWarning):
        compiled = frame_runners.make_backend("numpy", module, "main", None, None)
    assert isinstance(compiled, frame_runners.CompiledRun) and compiled.name == "numpy"


# ---------------------------------------------------------------- modules with one home


def test_the_dialects_mode_table_path_warns_and_is_the_semantics_table():
    from cortex.semantics import modes

    old = importlib.import_module("cortex.dialects.modes")
    with pytest.warns(DeprecationWarning, match=r"cortex\.dialects\.modes\.MODES is deprecated: use cortex\.semantics\.modes\.MODES"):
        assert old.MODES is modes.MODES
    with pytest.warns(DeprecationWarning):
        from cortex.dialects.modes import DEFAULT_MODE
    assert DEFAULT_MODE == modes.DEFAULT_MODE
    with pytest.raises(AttributeError):
        old.NO_SUCH_NAME  # noqa: B018


def test_the_plain_abi_facts_path_warns_and_is_abi_facts():
    from cortex.semantics import abi_facts

    old = importlib.import_module("cortex.semantics.abi")
    with pytest.warns(DeprecationWarning, match=r"cortex\.semantics\.abi\.Port is deprecated: use cortex\.semantics\.abi_facts\.Port"):
        assert old.Port is abi_facts.Port
    from cortex.dialects import abi

    assert abi.Port is abi_facts.Port  # the ABI on IR re-exports the facts, as before


def test_weights_for_call_moved_to_the_mode_table_and_warns_at_its_former_place():
    from cortex.interpreter import calling
    from cortex.semantics import modes

    with pytest.warns(DeprecationWarning, match=r"cortex\.interpreter\.calling\.weights_for_call is deprecated: "
                                                r"use cortex\.semantics\.modes\.weights_for_call"):
        assert calling.weights_for_call is modes.weights_for_call
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert calling.find_entry  # what stays there is read without a warning
        with pytest.raises(AttributeError):
            calling.MODES  # noqa: B018  (only the moved names are forwarded)


def test_no_module_of_the_package_imports_a_former_path():
    import ast
    from pathlib import Path

    root = Path(cortex.__file__).parent
    former = {"cortex.dialects.modes", "cortex.semantics.abi"}
    moved = {("cortex.interpreter.calling", "weights_for_call")}
    found = []
    for path in root.rglob("*.py"):
        if path.resolve() == Path(__file__).resolve():  # this test imports the former path on purpose
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module in former or
                                                     any((node.module, a.name) in moved for a in node.names)):
                found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert not found, found


@pytest.mark.parametrize("former", ["cortex.dialects.modes", "cortex.semantics.abi"])
def test_documenting_a_former_module_path_warns_nothing(former):
    """Only reading a moved name warns: tools that inspect the module (pydoc, as `help()` does, reading its
    `__all__` and other dunders) see the former module itself, not the new one's names."""
    import pydoc

    mod = importlib.import_module(former)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pydoc.render_doc(mod)
        getattr(mod, "__all__", None)
        with pytest.raises(AttributeError):
            mod.__wrapped__  # noqa: B018
