"""ONNX's node conformance cases through the Backend interface on the IREE backend.

The same cases and the same bar as tests/test_onnx_conformance.py (NumPy backend): every applicable
case matches ONNX's expected outputs within the case's tolerances, or is listed in
data/onnx_unsupported.txt and fails to import with the listed reason — never a wrong answer.
Each case is its own IREE compile (~0.5 s, most of it fixed cost: batching 50 functions into one
module saved little), so CI runs an evenly spaced fifth of them; `CORTEX_IREE_CONFORMANCE=all` runs
every case.
"""

from __future__ import annotations

import os

import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

from helpers.onnx_cases import CASE_NAMES, check_case  # noqa: E402
from helpers.pipelines import EVERY_RUN_ON_IREE  # noqa: E402

from cortex.onnx_backend import IreeBackend  # noqa: E402

EVERY = 1 if os.environ.get("CORTEX_IREE_CONFORMANCE") == "all" else 5
SAMPLE = CASE_NAMES[::EVERY]


@pytest.fixture(autouse=True)
def every_run_on_iree(monkeypatch):
    """Every case is far too small for the outlining cost rule: switched off, so the cases run on IREE."""
    for name, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(name, value)


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLE)
def test_conformance_case_on_iree(name: str) -> None:
    check_case(name, IreeBackend.prepare)


def test_sample_spans_the_cases() -> None:
    assert len(SAMPLE) >= len(CASE_NAMES) // 5 and SAMPLE[0] == CASE_NAMES[0]
