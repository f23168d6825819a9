#!/usr/bin/env python3
"""Mutation testing: does the test suite notice small, meaningful edits to the code?

Each mutant is one exact-substring edit of one file (`old` must occur
exactly once, so a stale entry fails loudly instead of testing nothing).
The tree is copied once to a temporary directory (tracked and untracked
files, not `.git`), with its own `PYTHONPATH` directory holding a `cortex`
symlink, so neither the working tree nor anyone's installed package is
touched. For each mutant the edit is applied to the copy, the tests run
there (`pytest -x`), and the file is restored. A mutant is *killed* when the
tests fail, *survives* when they pass, and is an *error* when its edit no
longer applies (its `old` text is missing or not unique): an error is never
counted as killed, and the run exits non-zero.

    python3 scripts/mutate.py                 # every mutant, the test files it names
    python3 scripts/mutate.py --whole-suite   # every mutant, the WHOLE suite, then lit for survivors
    python3 scripts/mutate.py -k transpose    # mutants whose id contains "transpose" (-k a,b: either)
    python3 scripts/mutate.py --fast-first    # each mutant's named tests: the fast tier, then the slow tests
    python3 scripts/mutate.py --list          # the mutants and their tests, no runs
    python3 scripts/mutate.py --check         # only check every edit still applies
    python3 scripts/mutate.py --build-impact-map impact.json           # which test files run which module
    python3 scripts/mutate.py --whole-suite --impact-map impact.json   # those files first, per mutant

`--whole-suite` first runs the whole unmutated suite once (it must pass),
timing each test file; then, per mutant, `pytest -x` over every test file in
three runs: the mutant's named files, then the files that import the mutated
module, then the rest, each fastest first, so that a killed mutant stops early
(and does not pay for collecting the whole suite). With `--no-baseline` the
suite is still collected once, unmutated: a file that cannot be collected in
the copy would otherwise count every mutant as killed.
A mutant pytest cannot kill goes through lit as well. Hypothesis does not
shrink during a mutation run (only pass or fail matters).

The test-impact map (`--build-impact-map FILE [TEST_FILE ...]`) runs the tests
once under coverage.py, its context switched to the test being run (its node
id), and writes JSON: `files` {module: [test files that executed a statement in
one of its functions]} and, per module and line, the tests that executed it.
With `--impact-map FILE`, `--whole-suite` runs, after a mutant's named files,
the tests that executed the mutated lines themselves (by node id, fast and slow
alike, fastest first: a killing slow test runs without the rest of the slow
tier), then the files the map says execute the mutated module, then the files
importing it, then the rest. Code run in a subprocess (the CLI tests) or a Ray
worker is not measured: such files keep the import heuristic.

Not run in CI: a whole-suite run is minutes per surviving mutant on two
cores. The lists live in `scripts/mutants.py` and `scripts/mutant_lists/`; the scores are in
CONTRIBUTING.md ("Mutation testing").
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from mutants import MUTANTS, Mutant  # noqa: E402 - scripts/ is not a package


def tree_files(root: Path) -> list[Path]:
    """Tracked and untracked, not ignored files of the repository (relative paths)."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root, check=True, capture_output=True,
    ).stdout.decode()
    return [Path(p) for p in out.split("\0") if p and (root / p).is_file()]


def copy_tree(root: Path, dest: Path) -> tuple[Path, Path]:
    """A copy of the tree at dest/cortex-copy and a PYTHONPATH dir dest/path with `cortex` → it."""
    tree = dest / "cortex-copy"
    for rel in tree_files(root):
        target = tree / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target)
    path = dest / "path"
    path.mkdir()
    (path / "cortex").symlink_to(tree, target_is_directory=True)
    return tree, path


def check(mutant: Mutant, tree: Path) -> str | None:
    """Why the edit cannot be applied, or None."""
    file = tree / mutant.path
    if not file.is_file():
        return f"no file {mutant.path}"
    count = file.read_text().count(mutant.old)
    if count != 1:
        return f"{mutant.old!r} occurs {count} times in {mutant.path} (must be exactly once)"
    missing = [t for t in mutant.tests if not (tree / t.split("::")[0]).is_file()]
    return f"no test file {missing[0]}" if missing else None


PLUGIN = '''"""Loaded by scripts/mutate.py (pytest -p): no shrinking, no example database."""
from hypothesis import Phase, settings

settings.register_profile("mutation", phases=[Phase.explicit, Phase.reuse, Phase.generate], database=None)
settings.load_profile("mutation")
'''


IMPACT_PLUGIN = '''"""Loaded by scripts/mutate.py --build-impact-map (pytest -p): the coverage context is the test file."""
import coverage
import pytest


def _switch(context):
    cov = coverage.Coverage.current()
    if cov is not None:
        cov.switch_context(context)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    if isinstance(collector, pytest.Module):  # module-level code runs while the file is collected
        _switch(collector.nodeid)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _switch(item.nodeid)  # fixtures' setup and teardown included
    yield
'''


def function_lines(source: str) -> set[int]:
    """Lines of statements inside functions: what a test exercises (module-level lines run once, at the
    first import, whichever test file that was)."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines |= {n.lineno for stmt in node.body for n in ast.walk(stmt) if isinstance(n, ast.stmt)}
    return lines


def build_impact_map(tree: Path, path: Path, tests: list[str], timeout: float) -> dict[str, object]:
    """One coverage run of `tests` in the copy, each test its own coverage context: `files` {module path:
    sorted test files that executed it}, `tests` [node ids] and `lines` {module path: {line: [indices into
    `tests`]}}, the tests that executed each line inside a function (see `impact_order`)."""
    (path / "cortex_impact_plugin.py").write_text(IMPACT_PLUGIN)
    data_file = path / "impact.coverage"
    cmd = [sys.executable, "-m", "coverage", "run", f"--data-file={data_file}", f"--source={tree}", "-m", "pytest", "-q",
           "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "cortex_impact_plugin", *tests]
    returncode, out = run_group(cmd, tree, path, timeout)
    if returncode is None or not data_file.exists():
        raise SystemExit(f"the coverage run did not finish:\n{out[-2000:]}")
    from coverage import CoverageData

    data = CoverageData(basename=str(data_file))
    data.read()
    covering: dict[str, list[str]] = {}
    node_ids: dict[str, int] = {}
    lines: dict[str, dict[str, list[int]]] = {}
    for measured in data.measured_files():
        module = Path(measured).resolve()
        if not module.is_relative_to(tree.resolve()):
            continue
        rel = str(module.relative_to(tree.resolve()))
        if rel.startswith("tests/"):
            continue
        inside = function_lines(module.read_text())
        by_line = {line: sorted(c for c in cs if c.startswith("tests/") and "::" in c)
                   for line, cs in data.contexts_by_lineno(measured).items() if line in inside}
        files = sorted({c.split("::")[0] for cs in by_line.values() for c in cs})
        if files:
            covering[rel] = files
            lines[rel] = {str(line): [node_ids.setdefault(c, len(node_ids)) for c in cs]
                          for line, cs in sorted(by_line.items()) if cs}
    return {"files": covering, "tests": list(node_ids), "lines": lines}


class Impact:
    """A test-impact map as `build_impact_map` writes it (the older form, {module: [test files]}, is read as
    `files` alone)."""

    def __init__(self, data: dict | None = None):
        data = data or {}
        if "files" not in data and all(isinstance(v, list) for v in data.values()):
            data = {"files": data}
        self.files: dict[str, list[str]] = data.get("files", {})
        self.tests: list[str] = data.get("tests", [])
        self.lines: dict[str, dict[str, list[int]]] = data.get("lines", {})

    def tests_of(self, module: str, lines: range) -> list[str]:
        """The tests that executed any of `lines` of `module`, as the map saw them."""
        by_line = self.lines.get(module, {})
        found = {i for line in lines for i in by_line.get(str(line), ())}
        return [self.tests[i] for i in sorted(found)]


def mutated_lines(mutant: Mutant, tree: Path) -> range:
    """The lines of `mutant.path` its `old` text spans (empty when it does not apply)."""
    text = (tree / mutant.path).read_text()
    at = text.find(mutant.old)
    if at < 0:
        return range(0)
    first = text.count("\n", 0, at) + 1
    return range(first, first + mutant.old.rstrip("\n").count("\n") + 1)


def environment(path: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"}


def run_tests(tests: tuple[str, ...], tree: Path, path: Path, timeout: float,
              extra: tuple[str, ...] = ()) -> tuple[str, float, str, str]:
    """('killed' | 'survived' | 'timeout', seconds, last output line, whole output) of pytest -x on `tests`."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
           "-p", "cortex_mutation_plugin", *extra, *tests]
    start = time.perf_counter()
    returncode, stdout = run_group(cmd, tree, path, timeout)
    if returncode is None:
        return "timeout", time.perf_counter() - start, "", stdout
    lines = [line for line in stdout.strip().splitlines() if line.strip()]
    # 5: no test selected (a tier of `--fast-first` the files do not have): nothing failed
    outcome = "survived" if returncode in (0, NO_TESTS) else "killed"
    return outcome, time.perf_counter() - start, (lines[-1] if lines else ""), stdout


NO_TESTS = 5
"""pytest's exit status when no test was selected."""

TIERS = (("-m", "not slow"), ("-m", "slow"))
"""`--fast-first`: the named tests in two runs, the development loop's tier (`-m "not slow"`) then the slow tests."""


def named_groups(mutant: Mutant, fast_first: bool) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """(tests, pytest options) runs, one after the other, of a mutant's named tests: one run, or with
    `fast_first` the fast tier and then the slow one (a mutant the fast tests kill never pays for the slow)."""
    if not fast_first:
        return ((mutant.tests, ()),)
    return tuple((mutant.tests, tier) for tier in TIERS)


def run_group(cmd: list[str], tree: Path, path: Path, timeout: float) -> tuple[int | None, str]:
    """(exit status or None on timeout, stdout + stderr) of `cmd` in its own process group, which a
    timeout kills whole (a mutant that hangs a Ray test leaves no Ray processes behind)."""
    proc = subprocess.Popen(cmd, cwd=tree, env=environment(path), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        return None, out


def run_lit(tree: Path, path: Path, timeout: float) -> tuple[str, float, str]:
    """('killed' | 'survived' | 'timeout', seconds, failing tests) of the lit suite in the copy."""
    cmd = [sys.executable, "-c", "import lit.main; lit.main.main()", "-q", "--timeout=300", "lit"]
    start = time.perf_counter()
    returncode, out = run_group(cmd, tree, path, timeout)
    if returncode is None:
        return "timeout", time.perf_counter() - start, ""
    failed = re.findall(r"(?:FAIL|TIMEOUT|UNRESOLVED): Cortex :: (\S+)", out)
    return ("survived" if returncode == 0 else "killed"), time.perf_counter() - start, " ".join(failed[:3])


def test_files(tree: Path) -> list[str]:
    return sorted(str(p.relative_to(tree)) for p in (tree / "tests").rglob("test_*.py"))


def file_seconds(output: str) -> dict[str, float]:
    """Seconds per test file from pytest's `--durations=0` table (setup, call and teardown summed)."""
    seconds: dict[str, float] = {}
    for match in re.finditer(r"^\s*([0-9.]+)s \w+\s+(\S+?\.py)(?:::|\s)", output, re.M):
        seconds[match.group(2)] = seconds.get(match.group(2), 0.0) + float(match.group(1))
    return seconds


def test_seconds(output: str) -> dict[str, float]:
    """Seconds per test (node id) from pytest's `--durations=0` table (setup, call and teardown summed)."""
    seconds: dict[str, float] = {}
    for match in re.finditer(r"^\s*([0-9.]+)s \w+\s+(tests/\S+?\.py::.+?)\s*$", output, re.M):
        seconds[match.group(2)] = seconds.get(match.group(2), 0.0) + float(match.group(1))
    return seconds


def suite_order(mutant: Mutant, tree: Path, files: list[str], seconds: dict[str, float],
                covering: dict[str, list[str]] | Impact | None = None,
                per_test: dict[str, float] | None = None) -> tuple[tuple[str, ...], ...]:
    """Every test file once, in groups run one after the other (each its own pytest, so a mutant its named
    tests kill does not pay for collecting the whole suite): the mutant's named tests; the tests the impact
    map says executed the mutated lines themselves (node ids, whatever their tier or file: a slow test that
    runs the line comes before any whole file), fastest first by `per_test`; the files the map says execute
    its module and the files importing it; the rest. Files fastest first by `seconds`."""
    impact = covering if isinstance(covering, Impact) else Impact({"files": covering or {}})
    named = list(dict.fromkeys(mutant.tests))
    named_files = {t.split("::")[0] for t in named}
    on_line = [t for t in impact.tests_of(mutant.path, mutated_lines(mutant, tree))
               if t.split("::")[0] not in named_files and t.split("::")[0] in files]
    on_line.sort(key=lambda t: (per_test or {}).get(t, 0.0))
    module = "cortex." + mutant.path.removesuffix(".py").replace("/", ".")
    stem = module.rsplit(".", 1)[1]

    def imports(f: str) -> bool:
        text = (tree / f).read_text()
        return module in text or re.search(rf"\bimport\b[^\n]*\b{re.escape(stem)}\b", text) is not None

    rest = [f for f in files if f not in named_files]
    measured = set(impact.files.get(mutant.path, ()))
    covers = sorted((f for f in rest if f in measured), key=lambda f: seconds.get(f, 0.0))
    near = sorted((f for f in rest if f not in measured and imports(f)), key=lambda f: seconds.get(f, 0.0))
    far = sorted((f for f in rest if f not in measured and f not in near), key=lambda f: seconds.get(f, 0.0))
    return tuple(group for group in (tuple(named), tuple(on_line), (*covers, *near), tuple(far)) if group)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="select", default="",
                        help="run only mutants whose id contains this text (several: comma-separated, any matches)")
    parser.add_argument("--list", action="store_true", help="list the mutants and their tests")
    parser.add_argument("--check", action="store_true", help="only check that every edit applies")
    parser.add_argument("--whole-suite", action="store_true",
                        help="run every test file per mutant (named ones first), then lit for survivors")
    parser.add_argument("--fast-first", action="store_true",
                        help="run each mutant's named tests in two runs: -m 'not slow' first, then -m slow")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of the selected tests")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds per mutant (a timeout counts as killed; default 600, 1800 with --whole-suite)")
    parser.add_argument("--json", type=Path, help="also write the results here (one record per mutant)")
    parser.add_argument("--durations-from", type=Path,
                        help="order test files by a saved `pytest --durations=0` output (e.g. check.sh's) "
                             "instead of timing a baseline run")
    parser.add_argument("--build-impact-map", type=Path, metavar="FILE",
                        help="run the test files given (default: all) once under coverage, write which test files "
                             "execute which module to FILE (JSON), and exit (needs coverage, in the test extra)")
    parser.add_argument("--impact-map", type=Path, metavar="FILE",
                        help="with --whole-suite: per mutant, the test files FILE says execute its module run first")
    parser.add_argument("tests", nargs="*", help="test files for --build-impact-map (default: every test file)")
    parser.add_argument("--shard", default="1/1", help="i/n: run every n-th selected mutant from the i-th (n processes)")
    args = parser.parse_args(argv)
    timeout = args.timeout or (1800.0 if args.whole_suite else 600.0)

    wanted = [k for k in args.select.split(",") if k] or [""]
    mutants = [m for m in MUTANTS if any(k in m.id for k in wanted)]
    shard, shards = (int(v) for v in args.shard.split("/"))
    mutants = mutants[shard - 1 :: shards]
    if args.list:
        for m in mutants:
            print(f"{m.id:40} {m.path}: {m.old!r} -> {m.new!r}\n{'':40} tests: {' '.join(m.tests)}")
        return 0
    results: list[dict[str, object]] = []
    covering = Impact(json.loads(args.impact_map.read_text()) if args.impact_map else None)
    with tempfile.TemporaryDirectory(prefix="cortex-mutate-") as tmp:
        tree, path = copy_tree(ROOT, Path(tmp))
        (path / "cortex_mutation_plugin.py").write_text(PLUGIN)
        if args.build_impact_map:
            tests = args.tests or test_files(tree)
            impact = build_impact_map(tree, path, tests, timeout * 10)
            args.build_impact_map.write_text(json.dumps(impact, sort_keys=True) + "\n")
            print(f"impact map of {len(tests)} test file(s) over {len(Impact(impact).files)} module(s): {args.build_impact_map}")
            return 0
        stale = {m.id: why for m in mutants if (why := check(m, tree))}
        seen: set[str] = set()
        for m in MUTANTS:
            if m.id in seen:
                stale[m.id] = "the id is used by another mutant (ids must be unique across the lists)"
            seen.add(m.id)
        for m in mutants:
            if m.id in stale:
                print(f"ERROR    {m.id}: {stale[m.id]}", flush=True)
        if args.check:
            print(f"{len(mutants) - len(stale)}/{len(mutants)} edits apply")
            return 1 if stale else 0
        runnable = [m for m in mutants if m.id not in stale]
        files = test_files(tree)
        durations = args.durations_from.read_text() if args.durations_from else ""
        seconds, per_test = file_seconds(durations), test_seconds(durations)
        tests = tuple(files) if args.whole_suite else tuple(dict.fromkeys(t for m in runnable for t in m.tests))
        if args.no_baseline:
            # Still collect once: with -x a file that cannot be collected in the copy stops every
            # mutant's run with "1 error", which would count every mutant as killed.
            returncode, output = run_group([sys.executable, "-m", "pytest", "-q", "--collect-only", "-p", "no:cacheprovider",
                                            "-p", "no:randomly", "-p", "cortex_mutation_plugin", *tests],
                                           tree, path, timeout)
            if returncode != 0:
                print(output[-3000:])
                print("the unmutated tree does not collect: fix that first")
                return 1
        else:
            outcome, took, last, output = run_tests(tests, tree, path, timeout * 4, ("--durations=0",))
            print(f"baseline ({len(tests)} test files, {took:.0f}s): {last}", flush=True)
            if outcome != "survived":
                print("the unmutated tree fails its tests: fix that first")
                return 1
            seconds, per_test = seconds or file_seconds(output), per_test or test_seconds(output)
            if args.whole_suite:
                lit_outcome, lit_took, failed = run_lit(tree, path, timeout)
                print(f"baseline lit ({lit_took:.0f}s): {lit_outcome} {failed}", flush=True)
                if lit_outcome != "survived":
                    print("the unmutated tree fails lit: fix that first")
                    return 1
        killed, survived = 0, []
        for m in runnable:
            file = tree / m.path
            original = file.read_text()
            file.write_text(original.replace(m.old, m.new, 1))
            by = "pytest"
            try:
                groups = (tuple((g, ()) for g in suite_order(m, tree, files, seconds, covering, per_test))
                          if args.whole_suite else named_groups(m, args.fast_first))
                outcome, took, last = "survived", 0.0, ""
                for group, extra in groups:
                    outcome, group_took, last, _ = run_tests(group, tree, path, max(timeout - took, 1.0), extra)
                    took += group_took
                    if outcome != "survived":
                        break
                if outcome == "survived" and args.whole_suite:
                    outcome, lit_took, failed = run_lit(tree, path, timeout)
                    took, by, last = took + lit_took, "lit", failed or "lit passes"
            finally:
                file.write_text(original)
            if outcome == "survived":
                survived.append(m)
            else:
                killed += 1
            results.append({"id": m.id, "outcome": outcome, "by": by, "seconds": round(took, 1), "last": last})
            print(f"{outcome.upper():9} {m.id:40} {took:5.0f}s  {by:6} {last[:70]}", flush=True)
    total = len(runnable)
    scope = "whole suite + lit" if args.whole_suite else "named tests"
    print(f"\nmutation score ({scope}): {killed}/{total} killed ({100.0 * killed / max(total, 1):.1f} %)"
          + (f"; {len(stale)} mutant(s) in error (edit does not apply), not counted" if stale else ""))
    for m in survived:
        print(f"  survived: {m.id} ({m.path}: {m.old!r} -> {m.new!r})")
    if args.json:
        errors = [{"id": i, "outcome": "error", "why": w} for i, w in stale.items()]
        args.json.write_text(json.dumps({"scope": scope, "killed": killed, "total": total, "results": results + errors},
                                        indent=1))
    return 1 if survived or stale else 0


if __name__ == "__main__":
    sys.exit(main())
