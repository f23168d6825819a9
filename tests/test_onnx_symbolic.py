"""ONNX models with a symbolic batch dimension: imported as `?`, one prepared model runs any batch.

`from_onnx` keeps 'N' as `?`; the Backend's compiled engine binds it per call
(`cortex.shape_generic`), and each batch equals ONNX Runtime. `input_shapes`
gives shapes the model lacks, or fixes a symbolic one.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from onnx import TensorProto, helper

import cortex
import cortex.onnx_backend as backend
from cortex.errors import CortexError
from cortex.frontends.onnx import OnnxImportError, from_onnx
from cortex.frontends.onnx_models import cnn
from cortex.ir import to_text
from cortex.shape_generic import ShapeGenericPipeline

ort = pytest.importorskip("onnxruntime")


def batch_of(n: int) -> np.ndarray:
    return np.random.default_rng(n).standard_normal((n, 3, 16, 16)).astype(np.float32)


def test_symbolic_batch_imports_as_a_dynamic_dimension_through_conv_pool_and_gemm():
    text = to_text(from_onnx(cnn(batch="N")))
    assert "func.func @main(%x: tensor<?x3x16x16xf32>) -> tensor<?x10xf32>" in text
    assert "tensor<?x16x8x8xf32>" in text and "tensor<?x1024xf32>" in text


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["compiled", "reference"])
def test_one_prepared_model_runs_batches_1_4_7_as_onnx_runtime(engine):
    model = cnn(batch="N")
    rep = backend.prepare(model, engine=engine)
    session = ort.InferenceSession(model.SerializeToString())
    for n in (1, 4, 7):
        x = batch_of(n)
        (got,) = rep.run([x])
        (want,) = session.run(None, {"x": x})
        assert got.shape == (n, 10)
        assert_f32_close(got, want, ulps=ACCUMULATED, err_msg=f"batch {n}")
    runner = rep._runners[()]
    assert isinstance(runner, ShapeGenericPipeline)
    assert runner.compiled_shapes == [((1, 3, 16, 16),), ((4, 3, 16, 16),), ((7, 3, 16, 16),)]


def test_batch_n_is_the_batch_of_n_single_runs():
    rep = backend.prepare(cnn(batch="N"))
    x = batch_of(4)
    together = rep.run([x])[0]
    one_by_one = np.concatenate([rep.run([x[i : i + 1]])[0] for i in range(4)])
    assert_f32_close(together, one_by_one, ulps=ACCUMULATED)  # one matrix product per batch: BLAS may block it differently


def test_a_wrong_feature_shape_is_a_clean_error():
    rep = backend.prepare(cnn(batch="N"))
    with pytest.raises(CortexError, match=r"an input of shape 2x3x8x8 does not fit it|breaks a rule") as info:
        rep.run([np.zeros((2, 3, 8, 8), np.float32)])
    assert "\n" not in str(info.value)


def no_shape_model() -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_input_shapes_gives_a_shape_the_model_lacks():
    with pytest.raises(OnnxImportError, match="has no shape: give it in input_shapes"):
        from_onnx(no_shape_model())
    static = from_onnx(no_shape_model(), input_shapes={"x": [2, 5]})
    assert "tensor<2x5xf32>" in to_text(static)
    generic = from_onnx(no_shape_model(), input_shapes={"x": [None, 5]})
    compiled = cortex.compile(generic, entry="main", mode=None)
    x = np.array([[-1, 2, -3, 4, -5]] * 3, np.float32)
    np.testing.assert_array_equal(compiled(x)[0], np.maximum(x, 0))


def test_input_shapes_fixes_a_symbolic_batch_and_is_checked():
    fixed = from_onnx(cnn(batch="N"), input_shapes={"x": [4, 3, 16, 16]})
    assert "func.func @main(%x: tensor<4x3x16x16xf32>) -> tensor<4x10xf32>" in to_text(fixed)
    with pytest.raises(OnnxImportError, match="does not fit the model's shape \\?x3x16x16"):
        from_onnx(cnn(batch="N"), input_shapes={"x": [4, 3, 8, 8]})
    with pytest.raises(OnnxImportError, match="not a graph input"):
        from_onnx(cnn(batch="N"), input_shapes={"nope": [1]})
