"""No tracked file points outside the repository: no issue numbers, work sessions or waves, seed documents,
private notes or blogs. A reader has only the repository, so each place states the fact itself
(the formula, the reason, the measured figure) instead of where it came from."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = re.compile(
    "|".join([
        r"\bissues? ?#?\d+",                           # "issue 17", "issue14-...", "(issue #3)"
        r"\b[\w.-]+#\d{3,}\b",                         # upstream trackers: "cpython#106905"
        r"\bseeds?/", r"\bseeds?'s?(?!\w)", r"\bseeds? \d{3}\b", r"\bthe seeds?\b(?! ?[=(])",
        r"\bXDSL_NOTES\b", r"\bDESIGN\.md\b", r"\bblog\b", r"\buser's doc",
        r"\b(first|second|third|previous|last|this|next|earlier|later|prior|another) (work )?(sessions?|waves?)\b",
        r"\bwaves?\b(?<!triangle wave)",
    ]),
    re.IGNORECASE,
)

THIS = Path(__file__).relative_to(ROOT).as_posix()


def repository_files() -> list[str]:
    """The git-tracked files; outside a checkout (the copy `scripts/mutate.py` tests, which holds only the
    tracked and untracked files), every file under the root but caches and hidden folders."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True)
    if listed.returncode == 0:
        return listed.stdout.decode().split("\0")
    return [path.relative_to(ROOT).as_posix() for path in sorted(ROOT.rglob("*"))
            if not any(part.startswith(".") or part == "__pycache__" for part in path.relative_to(ROOT).parts)]


def tracked_text_files() -> list[str]:
    """Every git-tracked file that decodes as UTF-8 text (binaries skipped), this file excepted: it spells the patterns."""
    names = repository_files()
    texts = []
    for name in filter(None, names):
        path = ROOT / name
        if name == THIS or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        texts.append(name)
    return texts


@pytest.mark.parametrize("name", tracked_text_files())
def test_no_outside_references(name: str) -> None:
    hits = [f"{name}:{n}: {line.strip()[:120]}"
            for n, line in enumerate((ROOT / name).read_text(encoding="utf-8").splitlines(), 1)
            if FORBIDDEN.search(line)]
    assert not hits, "state the fact, not where it came from:\n" + "\n".join(hits)


@pytest.mark.parametrize("line", [
    "see issue 17", "(issue #23)", 'Mutant("issue14-x"', "cpython#106905", "seeds/002", "the seed's table",
    "Seed 002 §5", "XDSL_NOTES §6", "DESIGN.md", "the blog", "the second session's attack", "Last wave's code",
])
def test_patterns_catch(line: str) -> None:
    assert FORBIDDEN.search(line)


@pytest.mark.parametrize("line", [
    "ort.InferenceSession(path)", '@pytest.fixture(scope="session")', "start_new_session=True",
    "seed: int = 0", "rng = np.random.default_rng(seed)", "(a triangle wave)", "operand #0", 'color="#888888"',
    "%res#0", "drawn with a fixed seed",
])
def test_patterns_spare(line: str) -> None:
    assert not FORBIDDEN.search(line)
