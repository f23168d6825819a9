"""Bad and odd ONNX input: random one-node models over the supported operators, with
attribute values ONNX allows and ones it does not. `from_onnx` either builds a module
whose results equal ONNX Runtime's (when ONNX Runtime accepts the model) or raises one
CortexError; never another exception, never a different answer."""

from __future__ import annotations

import random

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

from cortex.frontends.onnx import from_onnx
from cortex.ir import CortexError
from cortex.onnx_backend import CompiledBackend, ReferenceBackend

INTS = st.lists(st.integers(-2, 4), min_size=1, max_size=5)  # onnx.helper cannot type an empty list
ATTRIBUTES = {
    "Conv": {"pads": INTS, "strides": INTS, "dilations": INTS, "group": st.integers(0, 3), "auto_pad": st.sampled_from(["NOTSET", "SAME_UPPER", "VALID", "BOGUS"])},
    "MaxPool": {"kernel_shape": INTS, "pads": INTS, "strides": INTS, "dilations": INTS, "ceil_mode": st.integers(0, 2), "auto_pad": st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"])},
    "AveragePool": {"kernel_shape": INTS, "pads": INTS, "strides": INTS, "dilations": INTS, "count_include_pad": st.integers(0, 1), "ceil_mode": st.integers(0, 1), "auto_pad": st.sampled_from(["NOTSET", "SAME_UPPER", "SAME_LOWER"])},
    "Transpose": {"perm": INTS},
    "Softmax": {"axis": st.integers(-4, 4)},
    "Flatten": {"axis": st.integers(-4, 4)},
    "ReduceSum": {"keepdims": st.integers(0, 2), "noop_with_empty_axes": st.integers(0, 1)},
    "ReduceMax": {"axes": INTS, "keepdims": st.integers(0, 1)},
    "Gemm": {"alpha": st.floats(-2, 2), "beta": st.floats(-2, 2), "transA": st.integers(0, 1), "transB": st.integers(0, 1)},
    "Gelu": {"approximate": st.sampled_from(["none", "tanh", "exact"])},
    "Relu": {"alpha": st.floats(0, 1)},
}
INPUTS = {"Conv": 2, "Gemm": 3}


def model_of(op: str, attrs: dict, shapes: list[list[int]]) -> onnx.ModelProto:
    names = [f"i{k}" for k in range(len(shapes))]
    node = helper.make_node(op, names, ["y"], **attrs)
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in zip(names, shapes)]
    graph = helper.make_graph([node], "fuzz", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 8
    return model


@st.composite
def cases(draw):
    op = draw(st.sampled_from(sorted(ATTRIBUTES)))
    attrs = {}
    for name, values in ATTRIBUTES[op].items():
        if draw(st.booleans()):
            attrs[name] = draw(values)
    rank = draw(st.integers(1, 4)) if op not in ("Conv", "MaxPool", "AveragePool", "Gemm") else (2 if op == "Gemm" else 4)
    shapes = [draw(st.lists(st.integers(1, 5), min_size=rank, max_size=rank))]
    if op == "Conv":
        shapes.append([draw(st.integers(1, 3)), shapes[0][1], draw(st.integers(1, 3)), draw(st.integers(1, 3))])
    if op == "Gemm":
        shapes.append(draw(st.lists(st.integers(1, 4), min_size=2, max_size=2)))
        shapes.append(draw(st.lists(st.integers(1, 4), min_size=0, max_size=2)))
    return op, attrs, shapes


def onnx_runtime(model, feeds):
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    options.log_severity_level = 4
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=cases(), seed=st.integers(0, 2**16))
def test_random_nodes_import_right_or_fail_cleanly(case, seed):
    op, attrs, shapes = case
    model = model_of(op, attrs, shapes)
    try:
        from_onnx(model)
    except CortexError as e:
        assert "\n" not in str(e)
        event("cortex refuses it")
        return
    rng = np.random.default_rng(seed)
    feeds = {f"i{k}": rng.standard_normal(s).astype(np.float32) for k, s in enumerate(shapes)}
    try:
        want = onnx_runtime(model, feeds)
    except Exception:  # ONNX Runtime rejects it: cortex accepting it is only wrong if its result is
        event("onnx runtime refuses it")
        return
    event("compared with onnx runtime")
    for backend in (ReferenceBackend, CompiledBackend):
        (got,) = backend.run_model(model, feeds)
        assert got.shape == want[0].shape
        assert_f32_close(got, want[0], ulps=ACCUMULATED)


@settings(max_examples=80, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_damaged_protobufs_and_mistyped_attributes_fail_cleanly(seed):
    """Random nodes with attributes of any type, odd dimensions, short initializers, missing or
    extra inputs and outputs, and damaged serialisations: imported and run, or one CortexError."""
    from helpers.fuzz_cases import onnx_case

    onnx_case(random.Random(seed))  # raises InternalError on anything else
