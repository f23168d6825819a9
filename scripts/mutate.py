#!/usr/bin/env python3
"""Mutation testing: does the test suite notice small, meaningful edits to the code?

Each mutant is one exact-substring edit of one file (`old` must occur
exactly once, so a stale entry fails loudly instead of testing nothing).
The tree is copied once to a temporary directory (tracked and untracked
files, not `.git`), with its own `PYTHONPATH` directory holding a `cortex`
symlink, so neither the working tree nor anyone's installed package is
touched. For each mutant the edit is applied to the copy, only the test
files named for that mutant run there (`pytest -x`), and the file is
restored. A mutant is *killed* when pytest fails, *survives* when it passes.

    python3 scripts/mutate.py                 # every mutant, prints the score
    python3 scripts/mutate.py -k transpose    # mutants whose id contains "transpose"
    python3 scripts/mutate.py --list          # the mutants and their tests, no runs
    python3 scripts/mutate.py --check         # only check every edit still applies

Not run in CI: it runs the selected tests once per mutant (minutes on two
cores). The list lives in `scripts/mutants.py`; the score is in
CONTRIBUTING.md ("Mutation testing").
"""

from __future__ import annotations

import argparse
import os
import shutil
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


def run_tests(tests: tuple[str, ...], tree: Path, path: Path, timeout: float) -> tuple[str, float, str]:
    """('killed' | 'survived' | 'timeout', seconds, last output line) of pytest -x on `tests`."""
    env = {**os.environ, "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=tree, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, ""
    lines = [line for line in proc.stdout.strip().splitlines() if line.strip()]
    return ("survived" if proc.returncode == 0 else "killed"), time.perf_counter() - start, (lines[-1] if lines else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-k", dest="select", default="", help="run only mutants whose id contains this text")
    parser.add_argument("--list", action="store_true", help="list the mutants and their tests")
    parser.add_argument("--check", action="store_true", help="only check that every edit applies")
    parser.add_argument("--no-baseline", action="store_true", help="skip the unmutated run of the selected tests")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per mutant (a timeout counts as killed)")
    args = parser.parse_args(argv)

    mutants = [m for m in MUTANTS if args.select in m.id]
    if args.list:
        for m in mutants:
            print(f"{m.id:40} {m.path}: {m.old!r} -> {m.new!r}\n{'':40} tests: {' '.join(m.tests)}")
        return 0
    with tempfile.TemporaryDirectory(prefix="cortex-mutate-") as tmp:
        tree, path = copy_tree(ROOT, Path(tmp))
        stale = [(m, why) for m in mutants if (why := check(m, tree))]
        for m, why in stale:
            print(f"STALE    {m.id}: {why}")
        if stale or args.check:
            print(f"{len(mutants) - len(stale)}/{len(mutants)} edits apply")
            return 1 if stale else 0
        if not args.no_baseline:
            tests = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
            outcome, seconds, last = run_tests(tests, tree, path, args.timeout * 4)
            print(f"baseline ({len(tests)} test files, {seconds:.0f}s): {last}")
            if outcome != "survived":
                print("the unmutated tree fails its tests: fix that first")
                return 1
        killed, survived = 0, []
        for m in mutants:
            file = tree / m.path
            original = file.read_text()
            file.write_text(original.replace(m.old, m.new, 1))
            try:
                outcome, seconds, last = run_tests(m.tests, tree, path, args.timeout)
            finally:
                file.write_text(original)
            if outcome == "survived":
                survived.append(m)
            else:
                killed += 1
            print(f"{outcome.upper():9} {m.id:40} {seconds:5.0f}s  {last[:70]}", flush=True)
    total = len(mutants)
    print(f"\nmutation score: {killed}/{total} killed ({100.0 * killed / max(total, 1):.1f} %)")
    for m in survived:
        print(f"  survived: {m.id} ({m.path}: {m.old!r} -> {m.new!r})")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())
