"""ONNX models over tensors of any element type cortex tensors hold, and their check against ONNX Runtime on
the reference interpreter and the NumPy backend (shared by the typed-data and logic operator tests)."""

from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

import cortex.onnx_backend as backend
from helpers.onnx_oracle import onnx_runtime

TYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.BOOL: np.bool_, TensorProto.INT8: np.int8, TensorProto.INT16: np.int16,
    TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
}


def model(nodes, inputs: dict[str, tuple[int, list]], outputs: dict[str, int]):
    graph = helper.make_graph(
        nodes, "typed", [helper.make_tensor_value_info(n, t, s) for n, (t, s) in inputs.items()],
        [helper.make_tensor_value_info(n, t, None) for n, t in outputs.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])


def values(rng: np.random.Generator, dtype, shape, low: float = -100, high: float = 100) -> np.ndarray:
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return rng.integers(max(info.min, int(low)), min(info.max, int(high)) + 1, shape).astype(dtype)
    return rng.uniform(low, high, shape).astype(dtype)


def check_all(m, feeds: dict[str, np.ndarray], runners=("reference", "numpy")) -> None:
    want = onnx_runtime(m, feeds)
    for runner in runners:
        if runner == "reference":
            rep = backend.prepare(m, runner="reference")
        else:
            rep = backend.prepare(m, backend=runner)
        got = rep.run(dict(feeds))
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and g.shape == w.shape, (runner, g.dtype, w.dtype, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=1e-3 if w.dtype == np.float16 else 1e-6, err_msg=runner)
