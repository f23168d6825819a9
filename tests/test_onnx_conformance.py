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

import warnings
from functools import lru_cache
from pathlib import Path

import numpy as np
import onnx
import pytest

from cortex.frontends.onnx import SUPPORTED_OPS
from cortex.ir import CortexError
from cortex.onnx_backend import CortexBackend

UNSUPPORTED_FILE = Path(__file__).parent / "data" / "onnx_unsupported.txt"
SHAPE_OPERANDS = {"Reshape": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}}
MIN_PASS_RATE = 0.85


def unsupported() -> dict[str, str]:
    listed = {}
    for line in UNSUPPORTED_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, reason = line.split(":", 1)
            listed[name.strip()] = reason.strip()
    return listed


def applies(model) -> bool:
    """All operators supported; every graph input and output float32, but integer shape/axes inputs."""
    graph = model.graph
    if not {n.op_type for n in graph.node} <= set(SUPPORTED_OPS):
        return False
    shape_inputs = {n.input[i] for n in graph.node for i in SHAPE_OPERANDS.get(n.op_type, ()) if i < len(n.input)}
    for value in [*graph.input, *graph.output]:
        if not value.type.HasField("tensor_type"):
            return False
        elem = value.type.tensor_type.elem_type
        if elem != onnx.TensorProto.FLOAT and not (elem == onnx.TensorProto.INT64 and value.name in shape_inputs):
            return False
    return True


@lru_cache(maxsize=1)
def applicable_cases() -> dict[str, object]:
    from onnx.backend.test.case.node import collect_testcases

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the case generators overflow casts on purpose
        cases = collect_testcases(None)
    return {c.name: c for c in cases if c.kind == "node" and applies(c.model)}


CASE_NAMES = sorted(applicable_cases())
RUNNERS = ("reference", "compiled")


@pytest.mark.parametrize("runner", RUNNERS)
@pytest.mark.parametrize("name", CASE_NAMES)
def test_conformance_case(name: str, runner: str) -> None:
    case = applicable_cases()[name]
    reason = unsupported().get(name)
    if reason is not None:
        with pytest.raises(CortexError, match=reason.replace("(", r"\(").replace(")", r"\)")):
            CortexBackend.prepare(case.model, runner=runner)
        return
    rep = CortexBackend.prepare(case.model, runner=runner)
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
