"""ONNX's node conformance cases that apply to Cortex, and the list of those it does not support yet.

Shared by tests/test_onnx_conformance.py (reference and NumPy backends) and
tests/test_onnx_conformance_iree.py (IREE).
"""

from __future__ import annotations

import warnings
from functools import lru_cache
from pathlib import Path

import onnx

from cortex.frontends.onnx import SUPPORTED_OPS

UNSUPPORTED_FILE = Path(__file__).resolve().parents[1] / "data" / "onnx_unsupported.txt"
SHAPE_OPERANDS = {"Reshape": {1}, "ReduceSum": {1}, "ReduceMean": {1}, "ReduceMax": {1}}


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
