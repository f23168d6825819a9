"""Which checkout is under test: the one this `tests/` folder belongs to, or the run stops at once.

The repository root is the package `cortex` (pyproject: package-dir), so `import cortex` goes
through whatever put it on the path — an editable install of another clone, a PYTHONPATH link —
and a run could silently test another tree. Links are fine (paths are compared resolved).
Putting this file in `tests/` also puts `tests/` on `sys.path`, so test modules import the
shared builders as `helpers.*` under plain `pytest` and `python -m pytest` alike.
"""

from __future__ import annotations

import os

import pytest

import cortex

TREE = os.path.realpath(os.path.join(os.path.dirname(__file__), os.pardir))
IMPORTED = os.path.realpath(os.path.dirname(cortex.__file__))


def pytest_configure(config: pytest.Config) -> None:
    if IMPORTED != TREE:
        pytest.exit(f"`import cortex` resolves to {IMPORTED}, not the tree under test {TREE}", returncode=4)
