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
from helpers.onnx_cases import CASE_NAMES, applicable_cases, unsupported

from cortex.ir import CortexError
from cortex.onnx_backend import CortexBackend

MIN_PASS_RATE = 0.85
ENGINES = ("reference", "compiled")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_conformance_case(name: str, engine: str) -> None:
    case = applicable_cases()[name]
    reason = unsupported().get(name)
    if reason is not None:
        with pytest.raises(CortexError, match=reason.replace("(", r"\(").replace(")", r"\)")):
            CortexBackend.prepare(case.model, engine=engine)
        return
    rep = CortexBackend.prepare(case.model, engine=engine)
    for inputs, expected in case.data_sets:
        outputs = rep.run(inputs)
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


def test_unsupported_list_names_applicable_cases() -> None:
    stale = sorted(set(unsupported()) - set(CASE_NAMES))
    assert not stale, f"listed but not an applicable conformance case: {stale}"


def test_pass_rate() -> None:
    """The issue's bar: at least 85 % of the applicable cases pass (the rest are listed)."""
    total = len(CASE_NAMES)
    passing = total - len(unsupported())
    assert total >= 150, f"only {total} applicable cases: did the applicability filter break?"
    assert passing / total >= MIN_PASS_RATE, f"{passing}/{total} pass"
