"""ONNX's own conformance cases through `from_onnx` and both Cortex backends.

`collect_testcases()` builds every node test of the installed onnx package in
process (model, inputs, expected outputs, tolerances). A case applies to Cortex
when all its operators are ones the importer maps and its data is float32 (an
integer input read as a shape or axes is allowed: the backend binds its value).
Every applicable case either matches ONNX's expected outputs within the case's
own tolerances on the reference interpreter and on the compiled NumPy backend,
or is listed in `data/onnx_unsupported.txt` and fails to import with the listed
reason (a CortexError, never a wrong answer or a crash).
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.onnx_cases import CASE_NAMES, applicable_cases, check_case, unsupported

from cortex.onnx_backend import CortexBackend

MIN_PASS_RATE = 0.85
RUNNERS = ("reference", "compiled")


@pytest.mark.slow
@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_conformance_case(name: str, runner: str) -> None:
    check_case(name, lambda model: CortexBackend.prepare(model, runner=runner))


class _Answers:
    """A prepared backend that answers every input with `values`."""

    def __init__(self, values):
        self.values = values

    def run(self, inputs):
        return self.values


def test_check_case_fails_on_a_wrong_answer_and_on_a_listed_case_that_imports() -> None:
    """The shared check can fail: a wrong value, a wrong shape, and a listed case that does not raise."""
    name = next(n for n in CASE_NAMES if n not in unsupported())
    case = applicable_cases()[name]
    (_, expected), = case.data_sets[:1]
    check_case(name, lambda model: _Answers(list(expected)))  # the expected outputs pass
    with pytest.raises(AssertionError):
        check_case(name, lambda model: _Answers([w + 1.0 for w in expected]))
    with pytest.raises(AssertionError):
        check_case(name, lambda model: _Answers([np.zeros((*w.shape, 1), w.dtype) for w in expected]))
    listed = next(iter(unsupported()))
    with pytest.raises(pytest.fail.Exception):
        check_case(listed, lambda model: _Answers([]))


def test_unsupported_list_names_applicable_cases() -> None:
    stale = sorted(set(unsupported()) - set(CASE_NAMES))
    assert not stale, f"listed but not an applicable conformance case: {stale}"


def test_pass_rate() -> None:
    """The issue's bar: at least 85 % of the applicable cases pass (the rest are listed)."""
    total = len(CASE_NAMES)
    passing = total - len(unsupported())
    assert total >= 150, f"only {total} applicable cases: did the applicability filter break?"
    assert passing / total >= MIN_PASS_RATE, f"{passing}/{total} pass"
