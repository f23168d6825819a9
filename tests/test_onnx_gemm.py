"""ONNX Gemm, alpha·A'·B' + beta·C, against ONNX Runtime: every alpha/beta/transpose/bias form.

Scaling the bias by `alpha` instead of `beta` once passed every test — no test
had alpha ≠ beta with a bias, and the constant-B path (B folded into a
`cortex.linear` weight, a constant C into its bias) is a separate code path from
the computed-B one (matmul, mul, add). Here alpha ≠ beta in every example, on
both paths, with C absent, a constant vector, row, matrix or scalar, or a graph input.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers.onnx_oracle import onnx_runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from cortex.onnx_backend import CortexBackend, ReferenceBackend

BIASES = ("none", "vector", "row", "matrix", "scalar", "input")


def gemm_model(case, rng) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    m, k, n = case["mkn"]
    a_shape = (k, m) if case["trans_a"] else (m, k)
    b_shape = (n, k) if case["trans_b"] else (k, n)
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    c_shape = {"vector": (n,), "row": (1, n), "matrix": (m, n), "scalar": (), "input": (m, n)}.get(case["bias"])
    c = rng.standard_normal(c_shape).astype(np.float32) if c_shape is not None else None
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape)]
    initializers, feeds = [], {"a": a}
    if case["constant_b"]:
        initializers.append(numpy_helper.from_array(b, "b"))
    else:
        inputs.append(helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape))
        feeds["b"] = b
    names = ["a", "b"]
    if c is not None:
        names.append("c")
        if case["bias"] == "input":
            inputs.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, c_shape))
            feeds["c"] = c
        else:
            initializers.append(numpy_helper.from_array(c, "c"))
    node = helper.make_node("Gemm", names, ["y"], alpha=case["alpha"], beta=case["beta"],
                            transA=int(case["trans_a"]), transB=int(case["trans_b"]))
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, (m, n))],
                              initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), feeds


def check(case, seed: int) -> None:
    model, feeds = gemm_model(case, np.random.default_rng(seed))
    (want,) = onnx_runtime(model, dict(feeds))
    args = [feeds[k] for k in ("a", "b", "c") if k in feeds]
    for backend in (CortexBackend, ReferenceBackend):
        (got,) = backend.run_model(model, args)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{backend.__name__} {case}")


GEMMS = st.fixed_dictionaries({
    "mkn": st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 5)),
    "alpha": st.sampled_from([0.5, 2.0, -1.5, 1.0]),
    "beta": st.sampled_from([0.25, 3.0, -2.0, 1.0, 0.0]),
    "trans_a": st.booleans(),
    "trans_b": st.booleans(),
    "constant_b": st.booleans(),
    "bias": st.sampled_from(BIASES),
}).filter(lambda c: c["alpha"] != c["beta"])


def test_constant_b_and_c_with_alpha_not_beta():
    """The case of the issue: B and C constants (C folds into the linear's bias), alpha ≠ beta."""
    for bias in ("vector", "row", "scalar", "matrix"):
        check({"mkn": (3, 4, 5), "alpha": 0.5, "beta": 2.0, "trans_a": False, "trans_b": True, "constant_b": True,
               "bias": bias}, seed=1)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=GEMMS, seed=st.integers(0, 2**16))
def test_gemm_equals_onnx_runtime(case, seed):
    check(case, seed)
