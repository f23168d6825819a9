"""scripts/mutate.py's kill-fast order: with a test-impact map, a test that executed the mutated lines runs
right after the mutant's named tests, whatever its tier (a slow test) or file, before any whole file; the map
records each test by node id, so one slow test is run, not its file's or the suite's whole slow tier."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def mutate():
    spec = importlib.util.spec_from_file_location("cortex_mutate_script", SCRIPTS / "mutate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


MODULE = "def f(x):\n    y = x + 1\n    return y * 2\n\n\ndef g(x):\n    return -x\n"
TESTS = {
    "tests/test_named.py": "def test_named():\n    pass\n",
    "tests/test_near.py": "import cortex.mod\n\n\ndef test_near():\n    pass\n",
    "tests/test_far.py": "def test_quick():\n    pass\n\n\ndef test_slow_on_the_line():\n    pass\n",
    "tests/test_other.py": "def test_other():\n    pass\n",
}


def _tree(root: Path) -> list[str]:
    (root / "tests").mkdir()
    (root / "mod.py").write_text(MODULE)
    for name, text in TESTS.items():
        (root / name).write_text(text)
    return sorted(TESTS)


def test_a_slow_test_on_the_mutated_line_runs_before_any_whole_file(mutate, tmp_path):
    files = _tree(tmp_path)
    impact = mutate.Impact({
        "files": {"mod.py": ["tests/test_far.py", "tests/test_near.py"]},
        "tests": ["tests/test_far.py::test_slow_on_the_line", "tests/test_near.py::test_near",
                  "tests/test_far.py::test_quick", "tests/test_named.py::test_named"],
        "lines": {"mod.py": {"2": [0, 3], "3": [0, 2], "7": [1]}},
    })
    mutant = mutate.Mutant("plus-is-minus", "mod.py", "y = x + 1\n    return y * 2", "y = x - 1\n    return y * 2",
                           ("tests/test_named.py",))
    assert mutate.mutated_lines(mutant, tmp_path) == range(2, 4)
    seconds = {"tests/test_far.py": 40.0, "tests/test_near.py": 1.0, "tests/test_other.py": 0.5}
    per_test = {"tests/test_far.py::test_slow_on_the_line": 39.0, "tests/test_far.py::test_quick": 0.1}
    groups = mutate.suite_order(mutant, tmp_path, files, seconds, impact, per_test)
    assert groups == (
        ("tests/test_named.py",),  # the named file: its own tests are not repeated by node id
        ("tests/test_far.py::test_quick", "tests/test_far.py::test_slow_on_the_line"),  # on the lines, fastest first
        ("tests/test_near.py", "tests/test_far.py"),  # files that run the module, fastest first
        ("tests/test_other.py",),
    )


def test_an_older_map_of_files_alone_orders_as_before(mutate, tmp_path):
    files = _tree(tmp_path)
    mutant = mutate.Mutant("negate", "mod.py", "return -x", "return x", ("tests/test_named.py",))
    groups = mutate.suite_order(mutant, tmp_path, files, {}, mutate.Impact({"mod.py": ["tests/test_far.py"]}))
    assert groups == (("tests/test_named.py",), ("tests/test_far.py", "tests/test_near.py"), ("tests/test_other.py",))


def test_the_durations_table_gives_each_tests_seconds(mutate):
    table = ("============ slowest durations ============\n"
             "12.50s call     tests/test_far.py::test_slow_on_the_line[a b-1]\n"
             "0.50s setup    tests/test_far.py::test_slow_on_the_line[a b-1]\n"
             "0.01s teardown tests/test_near.py::test_near\n")
    assert mutate.test_seconds(table) == {"tests/test_far.py::test_slow_on_the_line[a b-1]": 13.0,
                                          "tests/test_near.py::test_near": 0.01}
    assert mutate.file_seconds(table) == {"tests/test_far.py": 13.0, "tests/test_near.py": 0.01}


def test_the_impact_map_names_the_tests_that_ran_each_line(mutate, tmp_path):
    """A real coverage run over a small tree: the line only one test executes maps to that test alone."""
    root, path = tmp_path / "tree", tmp_path / "path"
    root.mkdir()
    path.mkdir()
    (root / "tests").mkdir()
    (root / "mod.py").write_text(MODULE)
    (root / "tests" / "test_mod.py").write_text(
        "import sys\nfrom pathlib import Path\n\nsys.path.insert(0, str(Path(__file__).resolve().parents[1]))\n"
        "import mod  # noqa: E402\n\n\ndef test_f():\n    assert mod.f(1) == 4\n\n\ndef test_g():\n    assert mod.g(1) == -1\n")
    data = mutate.build_impact_map(root, path, ["tests/test_mod.py"], 120.0)
    impact = mutate.Impact(data)
    assert impact.files == {"mod.py": ["tests/test_mod.py"]}
    assert impact.tests_of("mod.py", range(2, 4)) == ["tests/test_mod.py::test_f"]
    assert impact.tests_of("mod.py", range(7, 8)) == ["tests/test_mod.py::test_g"]


@pytest.mark.slow
def test_fast_first_runs_the_slow_tier_after_the_fast_one_and_an_empty_tier_is_no_kill(mutate, tmp_path):
    tree, path = tmp_path / "tree", tmp_path / "path"
    (tree / "tests").mkdir(parents=True)
    path.mkdir()
    (path / "cortex_mutation_plugin.py").write_text(mutate.PLUGIN)
    (tree / "tests" / "test_tiers.py").write_text(
        "import pytest\n\n\ndef test_fast():\n    pass\n\n\n@pytest.mark.slow\ndef test_slow():\n    assert False\n")
    (tree / "tests" / "test_fast_only.py").write_text("def test_fast():\n    pass\n")
    mutant = mutate.Mutant("tiers", "mod.py", "a", "b", ("tests/test_tiers.py",))
    assert mutate.named_groups(mutant, False) == ((("tests/test_tiers.py",), ()),)
    groups = mutate.named_groups(mutant, True)
    assert groups == ((("tests/test_tiers.py",), ("-m", "not slow")), (("tests/test_tiers.py",), ("-m", "slow")))
    assert [mutate.run_tests(tests, tree, path, 120, extra)[0] for tests, extra in groups] == ["survived", "killed"]
    # a file without slow tests: its slow tier selects nothing, which fails nothing
    assert mutate.run_tests(("tests/test_fast_only.py",), tree, path, 120, ("-m", "slow"))[0] == "survived"
