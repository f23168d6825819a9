"""One mutant of `scripts/mutate.py`: an exact-substring edit and the tests that should notice it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    id: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
