"""The documents are a map that resolves: every relative link of README.md, CONTRIBUTING.md,
benchmarks/README.md and docs/*.md names a file of the repository (and a heading there, when it has an
anchor); the set-up commands CI runs are the README's; the pages cite nothing outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import cortex

ROOT = Path(cortex.__file__).resolve().parent
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", ROOT / "benchmarks" / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def without_code(text: str) -> str:
    """`text` less its fenced blocks and inline code (a link there is an example, not a link)."""
    return re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.DOTALL))


def slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", page.read_text(), flags=re.DOTALL), re.M)
    return {slug(h) for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    broken = []
    for target in LINK.findall(without_code(page.read_text())):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists() or ROOT not in (file, *file.parents):
            broken.append(target)
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(target)
    assert not broken, f"{page.relative_to(ROOT)}: links that resolve to nothing: {broken}"


def test_the_guide_pages_are_all_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text()
    unlinked = [p.name for p in PAGES if p.parent == ROOT / "docs" and f"(docs/{p.name})" not in readme]
    assert not unlinked, f"README.md's map does not link: {unlinked}"


def test_the_readme_keeps_the_two_set_up_commands():
    """CI (.ci/run → scripts/test.sh) and a new user's first run depend on these exact lines."""
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("## Set-up: the two commands", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```sh\n(.*?)\n```", setup, re.S) == ["python3 -m pip install -e . && cortex-run --frames 60",
                                                               "bash scripts/test.sh"]
    assert "bash scripts/test.sh" in (ROOT / ".ci" / "run").read_text()


OUTSIDE = re.compile(r"\bsee[d]s?\b|\biss[u]es? \d|#\d{2,}\b|\bsess[i]ons?\b(?!=)|\bwav[e]s?\b|\bWAV[E]\b|DESIG[N]\.md|XDSL_NOTE[S]|\bbl[o]g\b")
"""Words that cite what the repository does not hold (each spelled with a character class, so that this file does
not cite them itself for a scanner of the sources)."""


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_pages_cite_nothing_outside_the_repository(page):
    found = [m.group(0) for m in OUTSIDE.finditer(page.read_text())]
    assert not found, f"{page.relative_to(ROOT)} cites what the repository does not hold: {found}"
