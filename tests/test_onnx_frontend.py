"""`from_onnx`: the signature of @main, results against ONNX's own reference evaluator,
one clear error for what the dialect cannot express, and the round trip
ONNX → cortex-opt → lowered IR that mlir-opt verifies."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from helpers.numerics import ACCUMULATED, REORDERED, assert_f32_close
from helpers.onnx_oracle import onnx_runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import cortex
from cortex.backends.mlir.upstream import mlir_opt_available, mlir_runner_available, run_with_mlir, verify_with_mlir_opt
from cortex.driver import lower
from cortex.frontends.onnx import ENTRY, ceil_extra, from_onnx, same_pads
from cortex.frontends.onnx_models import cnn, mlp, sample_input
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import CortexError, parse, to_text
from cortex.onnx_backend import COMPILE_PASSES, CortexBackend, ReferenceBackend, run_node

needs_mlir_opt = pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
needs_mlir_runner = pytest.mark.skipif(not mlir_runner_available(), reason="mlir-runner (mlir-22-tools) not installed")


def f32_info(name: str, shape) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def one_node_model(node, inputs, outputs, initializers=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph([node], "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def onnx_reference(model, feeds: dict) -> list[np.ndarray]:
    return ReferenceEvaluator(model).run(None, feeds)


# ---------------------------------------------------------------- the module's shape


def test_main_takes_the_non_initializer_inputs_in_order_and_returns_the_outputs():
    nodes = [
        helper.make_node("Add", ["b", "w"], ["s"]),
        helper.make_node("Mul", ["s", "a"], ["p"]),
        helper.make_node("Relu", ["p"], ["r"]),
    ]
    w = numpy_helper.from_array(np.full((2, 3), 0.5, np.float32), "w")
    graph = helper.make_graph(
        nodes, "g", [f32_info("b", [2, 3]), f32_info("w", [2, 3]), f32_info("a", [2, 3])], [f32_info("r", [2, 3]), f32_info("s", [2, 3])], [w]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    module = from_onnx(model)
    (main,) = module.ops
    assert main.sym_name.data == ENTRY
    assert [a.name_hint for a in main.body.block.args] == ["b", "a"]
    assert len(main.function_type.outputs.data) == 2
    text = to_text(module)
    assert "cortex.constant" in text and "cortex.relu" in text
    b = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    a = np.full((2, 3), -1.5, np.float32)
    r, s = ReferenceRunner(module, entry=ENTRY, mode=None)(b, a)
    assert_f32_close(s, b + 0.5, ulps=REORDERED)
    assert_f32_close(r, np.maximum((b + 0.5) * a, 0), ulps=REORDERED)


def test_the_imported_text_parses_back():
    module = from_onnx(mlp())
    assert to_text(parse(to_text(module))) == to_text(module)


@pytest.mark.parametrize("build", [cnn, mlp])
def test_sample_models_match_onnx_reference_on_both_backends(build):
    model = build()
    x = sample_input(model)
    (want,) = onnx_reference(model, {"x": x})
    for backend in (ReferenceBackend, CortexBackend):
        (got,) = backend.run_model(model, [x])
        assert_f32_close(got, want, ulps=ACCUMULATED)


def test_model_from_a_path_and_from_bytes(tmp_path):
    model = mlp()
    path = tmp_path / "mlp.onnx"
    onnx.save(model, path)
    expected = to_text(from_onnx(model))
    assert to_text(cortex.from_onnx(str(path))) == expected
    assert to_text(cortex.from_onnx(model.SerializeToString())) == expected


# ---------------------------------------------------------------- attributes mapped by decomposition


def test_gemm_with_a_computed_b_and_a_matrix_bias():
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], alpha=0.5, beta=2.0, transA=1, transB=1)
    model = one_node_model(node, [f32_info("a", [4, 3]), f32_info("b", [5, 4]), f32_info("c", [3, 5])], [f32_info("y", [3, 5])])
    rng = np.random.default_rng(0)
    feeds = {k: rng.standard_normal(s).astype(np.float32) for k, s in (("a", (4, 3)), ("b", (5, 4)), ("c", (3, 5)))}
    (want,) = onnx_reference(model, feeds)
    (got,) = CortexBackend.run_model(model, feeds)
    assert_f32_close(got, want, ulps=ACCUMULATED)


def test_softmax_before_opset_13_flattens_at_the_axis():
    node = helper.make_node("Softmax", ["x"], ["y"], axis=1)
    model = one_node_model(node, [f32_info("x", [2, 3, 4])], [f32_info("y", [2, 3, 4])], opset=11)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    # The operator's opset-11 text (ONNX Runtime agrees; onnx.reference implements opset 13's)
    e = np.exp(x - x.max(axis=(1, 2), keepdims=True))
    want = e / e.sum(axis=(1, 2), keepdims=True)
    for backend in (ReferenceBackend, CortexBackend):
        (got,) = backend.run_model(model, [x])
        assert_f32_close(got, want, ulps=ACCUMULATED)


def test_conv_1d_runs_as_a_unit_height_2d_conv():
    w = numpy_helper.from_array(np.random.default_rng(2).standard_normal((4, 2, 3)).astype(np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], pads=[2, 1], strides=[2])
    model = one_node_model(node, [f32_info("x", [1, 2, 9])], [f32_info("y", [1, 4, 6])], [w])
    x = np.random.default_rng(3).standard_normal((1, 2, 9)).astype(np.float32)
    (want,) = onnx_reference(model, {"x": x})
    (got,) = CortexBackend.run_model(model, [x])
    assert_f32_close(got, want, ulps=ACCUMULATED)


def test_reduce_axes_from_a_graph_input_are_bound_per_value():
    node = helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)
    model = one_node_model(
        node, [f32_info("x", [2, 3]), helper.make_tensor_value_info("axes", TensorProto.INT64, [1])], [f32_info("y", None)]
    )
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    rep = CortexBackend.prepare(model)
    np.testing.assert_array_equal(rep.run([x, np.array([0])])[0], x.sum(0))
    np.testing.assert_array_equal(rep.run([x, np.array([1])])[0], x.sum(1))


def test_int32_axes_computed_from_a_graph_input_are_bound_per_value_and_every_input_is_required():
    """An int32 input the graph computes axes from (an integer Add, at import time) is a shape like int64."""
    nodes = [helper.make_node("Add", ["a", "one"], ["ax"]), helper.make_node("Cast", ["ax"], ["axes"], to=TensorProto.INT64),
             helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)]
    one = numpy_helper.from_array(np.array([1], np.int32), "one")
    graph = helper.make_graph(nodes, "g", [f32_info("x", [2, 3]), helper.make_tensor_value_info("a", TensorProto.INT32, [1])],
                              [f32_info("y", None)], [one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    rep = CortexBackend.prepare(model)
    np.testing.assert_array_equal(rep.run({"x": x, "a": np.array([0], np.int32)})[0], x.sum(1))
    np.testing.assert_array_equal(rep.run({"x": x, "a": np.array([-1], np.int32)})[0], x.sum(0))
    with pytest.raises(CortexError, match="missing graph input"):
        rep.run({"x": x})


def test_run_node_follows_the_backend_convention():
    node = helper.make_node("Transpose", ["x"], ["y"], perm=[1, 0])
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (got,) = run_node(node, [x])
    np.testing.assert_array_equal(got, x.T)
    assert got.dtype == np.float32  # an output of no declared type is float32


POOL_CASES = st.fixed_dictionaries(
    {
        "op": st.sampled_from(["MaxPool", "AveragePool"]),
        "h": st.integers(3, 9),
        "w": st.integers(3, 9),
        "kernel": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "strides": st.tuples(st.integers(1, 3), st.integers(1, 3)),
        "pads": st.tuples(st.integers(0, 2), st.integers(0, 2), st.integers(0, 2), st.integers(0, 2)),
        "ceil_mode": st.integers(0, 1),
        "count_include_pad": st.integers(0, 1),
        "auto_pad": st.sampled_from(["NOTSET", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"]),
        "dilations": st.tuples(st.integers(1, 2), st.integers(1, 2)),
    }
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=POOL_CASES, seed=st.integers(0, 2**16))
def test_pooling_attributes_match_onnx_reference(case, seed):
    """Every mix of kernel, strides, pads, auto_pad, ceil_mode, count_include_pad and dilations ONNX accepts."""
    kernel, pads = case["kernel"], case["pads"]
    if any(p >= k for p, k in zip(pads, kernel * 2)):
        pads = tuple(min(p, k - 1) for p, k in zip(pads, kernel * 2))  # ONNX requires pad < kernel
    attrs = {"kernel_shape": list(kernel), "strides": list(case["strides"]), "ceil_mode": case["ceil_mode"]}
    if case["dilations"] != (1, 1):
        attrs["dilations"] = list(case["dilations"])
    if case["auto_pad"] == "NOTSET":
        attrs["pads"] = list(pads)
    else:
        attrs["auto_pad"] = case["auto_pad"]
    if case["op"] == "AveragePool":
        attrs["count_include_pad"] = case["count_include_pad"]
    node = helper.make_node(case["op"], ["x"], ["y"], **attrs)
    model = one_node_model(node, [f32_info("x", [1, 2, case["h"], case["w"]])], [f32_info("y", None)], opset=19)
    x = np.random.default_rng(seed).standard_normal((1, 2, case["h"], case["w"])).astype(np.float32)
    oracle_model = model
    if case["auto_pad"].startswith("SAME") and case["dilations"] != (1, 1):
        # ONNX Runtime 1.32 leaves dilations out of SAME pooling pads (its output is then not
        # ceil(size / stride), as the operator's text says), and onnx.reference mis-sizes
        # SAME_LOWER and zeroes dilated windows in the padding: ONNX Runtime gets the pads
        # the text prescribes, explicitly.
        begins, ends = [], []
        for n, k, s, d in zip((case["h"], case["w"]), kernel, case["strides"], case["dilations"]):
            total = (-(-n // s) - 1) * s + (k - 1) * d + 1 - n
            small, big = total // 2, total - total // 2
            begins.append(small if case["auto_pad"] == "SAME_UPPER" else big)
            ends.append(big if case["auto_pad"] == "SAME_UPPER" else small)
        explicit = {k: v for k, v in attrs.items() if k != "auto_pad"} | {"pads": begins + ends}
        oracle_model = one_node_model(helper.make_node(case["op"], ["x"], ["y"], **explicit), list(model.graph.input), [f32_info("y", None)], opset=19)
    try:
        (want,) = onnx_runtime(oracle_model, {"x": x})  # not onnx.reference 1.23: it gets SAME_LOWER sizes wrong
    except Exception:  # a combination ONNX Runtime rejects is not a conformance question
        return
    try:
        (got,) = ReferenceBackend.run_model(model, [x])
    except CortexError as e:
        # SAME padding with a stride larger than the window is a crop; a window larger than the
        # padded input has no output cell (ONNX Runtime returns an empty tensor): both refused.
        # (ONNX Runtime then returns an empty tensor, or one cell from C++'s truncating division).
        assert "negative padding" in str(e) or "does not fit" in str(e)
        return
    assert got.shape == want.shape
    assert_f32_close(got, want, ulps=ACCUMULATED)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 12), k=st.integers(1, 4), s=st.integers(1, 3), lo=st.integers(0, 2), hi=st.integers(0, 2))
def test_ceil_extra_gives_the_ceil_mode_size(n, k, s, lo, hi):
    lo, hi = min(lo, k - 1), min(hi, k - 1)
    if n + lo + hi < k:
        return
    extra = ceil_extra(n, k, s, lo, hi)
    got = (n + lo + hi + extra - k) // s + 1
    want = -(-(n + lo + hi - k) // s) + 1
    if (want - 1) * s >= n + lo:
        want -= 1
    assert got == want


def test_same_pads_keep_ceil_of_size_over_stride():
    assert same_pads([5, 6], [3, 4], [2, 1], [1, 1], upper=True) == [1, 1, 1, 2]
    assert same_pads([5, 6], [3, 4], [2, 1], [1, 1], upper=False) == [1, 2, 1, 1]


# ---------------------------------------------------------------- what the dialect cannot express


def error_of(model, **kwargs) -> str:
    with pytest.raises(CortexError) as info:
        from_onnx(model, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def test_a_group_that_does_not_fit_names_node_operator_and_attribute():
    w = numpy_helper.from_array(np.ones((4, 1, 3, 3), np.float32), "w")
    node = helper.make_node("Conv", ["x", "w"], ["y"], name="dw", group=3)
    model = one_node_model(node, [f32_info("x", [1, 4, 8, 8])], [f32_info("y", None)], [w])
    message = error_of(model)
    assert "node 'dw'" in message and "(Conv)" in message and "'group' = 3" in message and "must divide the 4 filters" in message


def test_shape_from_a_graph_input_is_an_error_not_a_guess():
    node = helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")
    model = one_node_model(node, [f32_info("x", [2, 3]), helper.make_tensor_value_info("shape", TensorProto.INT64, [2])], [f32_info("y", None)])
    message = error_of(model)
    assert "node 'r' (Reshape)" in message and "'shape' is a graph input" in message


def test_unknown_attribute_and_unknown_operator():
    node = helper.make_node("Relu", ["x"], ["y"], name="act", alpha=0.1)
    assert "attribute 'alpha'" in error_of(one_node_model(node, [f32_info("x", [2])], [f32_info("y", [2])]))
    node = helper.make_node("Celu", ["x"], ["y"], name="celu")
    assert "operator Celu is not supported" in error_of(one_node_model(node, [f32_info("x", [2])], [f32_info("y", [2])]))


def test_symbolic_dimension_and_integer_data():
    node = helper.make_node("Relu", ["x"], ["y"])  # a symbolic dimension imports as `?`
    assert "tensor<?x2xf32>" in cortex.to_text(from_onnx(one_node_model(node, [f32_info("x", ["N", 2])], [f32_info("y", None)])))
    model = one_node_model(node, [helper.make_tensor_value_info("x", TensorProto.INT32, [2])], [f32_info("y", None)])
    assert "(Relu): input 'x' is a graph input of int32; cortex tensors are float32" in error_of(model)


def test_shape_errors_of_the_dialect_name_the_node():
    node = helper.make_node("MatMul", ["a", "b"], ["y"], name="mm")
    model = one_node_model(node, [f32_info("a", [2, 3]), f32_info("b", [4, 5])], [f32_info("y", None)])
    assert "node 'mm' (MatMul)" in error_of(model)


def test_not_a_model(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00 definitely not protobuf \xff")
    assert "bad.onnx" in error_of(str(bad))


# ---------------------------------------------------------------- tools and the upstream round trip


def run_tool(module: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", module, *argv], capture_output=True, text=True, timeout=120)


@pytest.mark.slow
def test_cortex_opt_reads_onnx_by_extension_and_lowers_it(tmp_path):
    path = tmp_path / "cnn.onnx"
    onnx.save(cnn(), path)
    proc = run_tool("cortex.tools.cortex_opt", str(path), "-p", "convert-cortex-to-linalg")
    assert proc.returncode == 0, proc.stderr
    names = {op.name for op in parse(proc.stdout).walk()}
    assert "linalg.conv_2d_nchw_fchw" in names and not any(n.startswith("cortex.") for n in names)


@pytest.mark.slow
def test_cortex_opt_reports_an_import_error_in_one_line(tmp_path):
    node = helper.make_node("Cast", ["x"], ["y"], name="to_int", to=TensorProto.UINT8)  # unsigned: refused
    path = tmp_path / "to_int.onnx"
    onnx.save(one_node_model(node, [f32_info("x", [1, 4])], [f32_info("y", None)], []), path)
    for module in ("cortex.tools.cortex_opt", "cortex.tools.import_onnx"):
        proc = run_tool(module, str(path))
        assert proc.returncode == 1
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert "attribute 'to' = 2" in proc.stderr


@pytest.mark.slow
def test_import_onnx_prints_the_ir(tmp_path):
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp(), path)
    proc = run_tool("cortex.tools.import_onnx", str(path))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == to_text(from_onnx(mlp()))


@needs_mlir_opt
@pytest.mark.parametrize("build", [cnn, mlp])
def test_imported_model_lowers_to_ir_mlir_opt_verifies(build):
    lowered = lower(parse(to_text(from_onnx(build()))))
    canonical = verify_with_mlir_opt(lowered)
    assert "func.func @main" in canonical


@needs_mlir_runner
@pytest.mark.parametrize("passes", [None, COMPILE_PASSES], ids=["plain", "onnx-backend-rewrites"])
def test_imported_cnn_runs_natively_with_mlir_runner(passes):
    """Upstream MLIR compiles and runs what the ONNX backend runs (im2col, unrolled pooling included)."""
    model = cnn()
    x = sample_input(model)
    (got,) = run_with_mlir(lower(from_onnx(model), post_passes=passes), ENTRY, [x])
    (want,) = onnx_reference(model, {"x": x})
    assert_f32_close(got, want, ulps=ACCUMULATED)


def test_gemm_bias_must_broadcast_to_the_product_not_widen_it():
    """Regression: a C of shape (4,) with a 3x1 product was broadcast both ways (a 3x4 result)."""
    node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], name="g")
    model = one_node_model(node, [f32_info("a", [3, 1]), f32_info("b", [1, 1]), f32_info("c", [4])], [f32_info("y", None)])
    assert "node 'g' (Gemm): input C of shape [4] does not broadcast to the product's [3, 1]" in error_of(model)


def test_reduce_axes_attribute_after_it_became_an_input_is_an_error():
    node = helper.make_node("ReduceMax", ["x"], ["y"], name="r", axes=[0])
    model = one_node_model(node, [f32_info("x", [2, 3])], [f32_info("y", None)], opset=20)
    assert "attribute 'axes' = [0]: is an input since opset 18" in error_of(model)


def test_zero_stride_with_same_padding_is_an_error_not_a_crash():
    """Regression (found by tests/test_onnx_fuzz.py): SAME padding divided by a zero stride."""
    node = helper.make_node("MaxPool", ["x"], ["y"], name="p", kernel_shape=[2, 2], strides=[0, 1], auto_pad="SAME_UPPER")
    model = one_node_model(node, [f32_info("x", [1, 1, 4, 4])], [f32_info("y", None)])
    assert "attribute 'strides' = [0, 1]: must be positive" in error_of(model)


def test_float_arithmetic_on_initializers_is_imported_not_computed_at_import_time():
    """Only shape computations (integer data) run at import time; float32 arithmetic on two initializers
    becomes cortex ops (left to the compiler's own folding), and the result equals ONNX Runtime's."""
    w1 = numpy_helper.from_array(np.array([1.5, -2.0, 3.0], np.float32), "w1")
    w2 = numpy_helper.from_array(np.array([0.5, 4.0, -1.0], np.float32), "w2")
    nodes = [helper.make_node("Mul", ["w1", "w2"], ["p"]), helper.make_node("Add", ["x", "p"], ["y"])]
    graph = helper.make_graph(nodes, "g", [f32_info("x", [3])], [f32_info("y", [3])], [w1, w2])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    text = to_text(from_onnx(model))
    assert "cortex.mul" in text and "cortex.add" in text
    x = np.array([0.25, 1.0, -8.0], np.float32)
    (got,) = CortexBackend.prepare(model).run([x])
    np.testing.assert_array_equal(got, onnx_runtime(model, {"x": x})[0])
