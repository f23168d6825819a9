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
        r"\bseeds?/", r"\bseeds?'s?(?!\w)", r"\bseeds? \d{3}\b", r"\bthe seeds?\b(?! ?=|\()",
        r"\b(?:the|a) lent\b", r"\bthis project's\b", r"\bthe shared \d+-core\b",  # the machine a session ran on
        r"\b(?:measured|surveyed|checked|PyPI)(?: on)? \d{4}-\d{2}-\d{2}\b",  # a dated survey
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
    "They let the graphs of the seeds (UnoptimizedModel,", "run on a lent GPU machine", "measured on this project's",
    "on the shared 2-core machine", "(measured 2026-11-27 on", "(PyPI on 2026-11-27:", "on the lent",
])
def test_patterns_catch(line: str) -> None:
    assert FORBIDDEN.search(line)


@pytest.mark.parametrize("line", [
    "ort.InferenceSession(path)", '@pytest.fixture(scope="session")', "start_new_session=True",
    "seed: int = 0", "rng = np.random.default_rng(seed)", "(a triangle wave)", "operand #0", 'color="#888888"',
    "%res#0", "drawn with a fixed seed", "the seed=3 draw", "the seed(0) call", "measured on a 2-core machine",
    "2026-11-26, 2 vCPUs shared with other jobs",
])
def test_patterns_spare(line: str) -> None:
    assert not FORBIDDEN.search(line)


# ---------------------------------------------------------------- measured figures belong in benchmarks/README.md

MEASURED_TIME = re.compile(
    r"(?<![\w.])~?(?:0*[1-9][\d,]*(?:\.\d+)?|0\.\d*[1-9]\d*)(?:\s?[-–]\s?[\d.]+)?\s?(?:ms|µs|us|ns)\b"  # 31 ms, ~0.2-0.3 ms
    r"|(?<![\w.])\d+\.\d+(?:\s?[-–]\s?\d+(?:\.\d+)?)? s\b"  # 9.2–10.0 s
)
"""A time quoted as a figure: a non-zero number of ms/µs/ns, or of seconds with decimals ("0 ms", "1 s" are not)."""

OUTSIDE_THE_PACKAGE = ("tests/", "benchmarks/", "scripts/", "lit/", "docs/", "examples/")

MAX_MEASURED_LINES = 10
"""How many lines of the package's docstrings and comments may quote a measured time (the rest is in
benchmarks/README.md, with the command and the machine's load)."""

def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring line of a Python source (a string standing as a statement)."""
    import io
    import tokenize

    lines: list[tuple[int, str]] = []
    previous = tokenize.NEWLINE
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            lines.append((token.start[0], token.string))
        elif token.type == tokenize.STRING and previous in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT):
            lines += [(token.start[0] + k, text) for k, text in enumerate(token.string.splitlines())]
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type
    return lines


def measured_time_lines() -> list[str]:
    """`path:line: text` of each package docstring or comment line that quotes a measured time."""
    found = []
    for name in repository_files():
        if not name.endswith(".py") or name.startswith(OUTSIDE_THE_PACKAGE) or not (ROOT / name).is_file():
            continue
        for n, text in prose((ROOT / name).read_text(encoding="utf-8")):
            if MEASURED_TIME.search(text):
                found.append(f"{name}:{n}: {text.strip()[:100]}")
    return found


def test_package_prose_quotes_few_measured_times():
    """Measured figures live in benchmarks/README.md beside the command that measured them; a docstring states
    the choice they decided (`benchmarks/README.md`, "Figures behind the compiler's choices")."""
    found = measured_time_lines()
    assert len(found) <= MAX_MEASURED_LINES, (
        f"{len(found)} lines of package prose quote a measured time (at most {MAX_MEASURED_LINES}): move the figures "
        "to benchmarks/README.md\n" + "\n".join(found))


@pytest.mark.parametrize("line", [
    "the large CNN's three 2×2 max pools took 198 + 97 + 51 µs a call", "IREE's fixed cost per call (~0.2-0.3 ms",
    "1 worker 9.2–10.0 s → 7.8–7.9 s", "Measured: 10 393 minor page faults and 31 ms CPU", "(2.8 of the small CNN's 24 us)",
    "a small ONNX CNN runs in ~55 µs", "took 0.5 ms",
])
def test_measured_times_are_caught(line: str) -> None:
    assert MEASURED_TIME.search(line)


@pytest.mark.parametrize("line", [
    "unmeasured ops count 0 ms and are flagged", "which the graph view shows as 0.00 ms", "(~1 s of video)",
    "items 12-14", "a 60x8x80x8 pooling", "kernel_ms = 3",
])
def test_other_numbers_are_spared(line: str) -> None:
    assert not MEASURED_TIME.search(line)


def test_prose_is_docstrings_and_comments():
    source = 'X = "12 ms"  # 5 ms\n"""Took 7 ms."""\n\n\ndef f():\n    """Ran 3 ms\n    then 4 ms."""\n    return "9 ms"\n'
    assert [n for n, text in prose(source) if MEASURED_TIME.search(text)] == [1, 2, 6, 7]
