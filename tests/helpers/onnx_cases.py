"""ONNX's node conformance cases that apply to Cortex, the list of those it does not support yet, and the check.

Shared by tests/test_onnx_conformance.py (reference and NumPy backends) and
tests/test_onnx_conformance_iree.py (IREE): both run `check_case` with their
backend's `prepare`, so the bar is written once.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from cortex.frontends.onnx import SUPPORTED_OPS
from cortex.frontends.onnx.context import ELEMENTS
from cortex.frontends.onnx.table import typed_only_inputs
from cortex.ir import CortexError

UNSUPPORTED_FILE = Path(__file__).resolve().parents[1] / "data" / "onnx_unsupported.txt"
SHAPE_OPERANDS = {name: set(entry.known_inputs) for name, entry in SUPPORTED_OPS.items()}
"""The inputs each operator reads at import time (an integer graph input there is a shape, bound per value)."""


def unsupported() -> dict[str, str]:
    listed = {}
    for line in UNSUPPORTED_FILE.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            name, reason = line.split(":", 1)
            listed[name.strip()] = reason.strip()
    return listed


def applies(model) -> bool:
    """All operators supported; every graph input and output float32, but integer shape/axes inputs and the
    data of the operators that take other element types (Cast, Where: `typed_inputs`, of `ELEMENTS`)."""
    graph = model.graph
    if not {n.op_type for n in graph.node} <= set(SUPPORTED_OPS):
        return False
    shape_inputs = {n.input[i] for n in graph.node for i in SHAPE_OPERANDS.get(n.op_type, ()) if i < len(n.input)}
    typed = typed_only_inputs(graph) | {o for n in graph.node if SUPPORTED_OPS[n.op_type].typed_inputs for o in n.output}
    for value in [*graph.input, *graph.output]:
        if not value.type.HasField("tensor_type"):
            return False
        elem = value.type.tensor_type.elem_type
        if elem == onnx.TensorProto.FLOAT or (elem == onnx.TensorProto.INT64 and value.name in shape_inputs):
            continue
        if not (elem in ELEMENTS and value.name in typed):
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


def arrays(values: list) -> list:
    """A data set's values as NumPy arrays (the cast cases store theirs as TensorProtos)."""
    return [numpy_helper.to_array(v) if isinstance(v, onnx.TensorProto) else v for v in values]


def check_case(name: str, prepare: Callable[[Any], Any]) -> None:
    """One conformance case on one backend (`prepare(model)` -> something with `run(inputs)`).

    A listed case must fail to import with its listed reason (a CortexError, never a
    wrong answer or a crash); any other must match ONNX's expected outputs, shape
    and values, within the case's own tolerances on every data set.
    """
    case: Any = applicable_cases()[name]
    reason = unsupported().get(name)
    if reason is not None:  # refused when imported: at prepare, or at the first run for inputs bound per value
        with pytest.raises(CortexError, match=re.escape(reason)):
            rep = prepare(case.model)
            for inputs, _ in case.data_sets:
                rep.run(arrays(inputs))
        return
    rep = prepare(case.model)
    for inputs, expected in case.data_sets:
        inputs, expected = arrays(inputs), arrays(expected)
        outputs = rep.run(inputs)
        assert len(outputs) == len(expected)
        for got, want in zip(outputs, expected):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)
