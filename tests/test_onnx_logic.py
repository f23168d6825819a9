"""ONNX comparisons (Equal, Greater, Less, GreaterOrEqual, LessOrEqual) and logical operators (Not, And, Or,
Xor) on run-time data: `cortex.compare` to i1 and `cortex.not/and/or/xor` on i1, against ONNX Runtime on the
reference interpreter and the NumPy backend (and, slow, IREE). Hypothesis draws the element types, the
broadcast shapes and the values (nan, ±inf and ties included); an attention block builds its mask in the graph
(Equal on token ids, a causal Greater folded at import, Or) and applies it with Where.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.onnx_oracle import onnx_runtime
from helpers.onnx_typed import TYPES, check_all, model
from helpers.pipelines import EVERY_RUN_ON_IREE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

from cortex.frontends.onnx import OnnxImportError, from_onnx

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
COMPARISONS = ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"]
LOGICAL = ["And", "Or", "Xor"]
FLOATS = [-np.inf, -2.5, -1.0, -0.0, 0.0, 1.0, 2.5, np.inf, np.nan]


@st.composite
def broadcast_shapes(draw):
    """Two shapes of rank 0–3 that broadcast (sizes 1–3, a 1 or a missing axis where they differ)."""
    out = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    a = [draw(st.sampled_from([d, 1])) for d in out][draw(st.integers(0, len(out))):]
    b = [draw(st.sampled_from([d, 1])) for d in out][draw(st.integers(0, len(out))):]
    return a, b


def draw_values(rng: np.random.Generator, dtype, shape) -> np.ndarray:
    """Few distinct values, so that ties (==, >=, <=) happen; nan and ±inf among the floats."""
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, shape).astype(dtype)
    return np.asarray(rng.choice(FLOATS, shape)).astype(dtype)


@SETTINGS
@given(st.sampled_from(COMPARISONS), st.sampled_from(sorted(TYPES)), broadcast_shapes(), st.integers(0, 2**16))
def test_comparison_equals_onnx_runtime(op, element, shapes, seed):
    if element == TensorProto.BOOL and op != "Equal":
        element = TensorProto.INT8  # ONNX compares bools with Equal only
    rng = np.random.default_rng(seed)
    (sa, sb), dtype = shapes, TYPES[element]
    m = model([helper.make_node(op, ["a", "b"], ["c"])], {"a": (element, sa), "b": (element, sb)}, {"c": TensorProto.BOOL})
    check_all(m, {"a": draw_values(rng, dtype, sa), "b": draw_values(rng, dtype, sb)})


@SETTINGS
@given(st.sampled_from(LOGICAL), broadcast_shapes(), st.integers(0, 2**16))
def test_logical_operator_equals_onnx_runtime(op, shapes, seed):
    rng = np.random.default_rng(seed)
    (sa, sb) = shapes
    nodes = [helper.make_node(op, ["a", "b"], ["c"]), helper.make_node("Not", ["c"], ["d"])]
    m = model(nodes, {"a": (TensorProto.BOOL, sa), "b": (TensorProto.BOOL, sb)}, {"c": TensorProto.BOOL, "d": TensorProto.BOOL})
    check_all(m, {"a": draw_values(rng, np.bool_, sa), "b": draw_values(rng, np.bool_, sb)})


S, D = 6, 8


def attention_model():
    """One attention head whose mask the graph computes: padding = Equal(ids, 0) on int64 token ids, future =
    Greater(cols, rows) on constants (folded at import), mask = Or(padding, future);
    softmax(Where(mask, -inf, Q·Kᵀ/√d))·V."""
    rng = np.random.default_rng(0)
    consts = {
        "wq": rng.normal(0, 0.3, (D, D)), "wk": rng.normal(0, 0.3, (D, D)), "wv": rng.normal(0, 0.3, (D, D)),
        "scale": np.array(1 / np.sqrt(D)), "neg_inf": np.array(-np.inf), "zero": np.array(0),
        "cols": np.arange(S).reshape(1, S), "rows": np.arange(S).reshape(S, 1),
    }
    initializers = [numpy_helper.from_array(v.astype(np.int64 if v.dtype.kind == "i" else np.float32), k)
                    for k, v in consts.items()]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]), helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["qk"]), helper.make_node("Mul", ["qk", "scale"], ["scores"]),
        helper.make_node("Equal", ["ids", "zero"], ["padding"]),
        helper.make_node("Greater", ["cols", "rows"], ["future"]),
        helper.make_node("Or", ["padding", "future"], ["mask"]),
        helper.make_node("Where", ["mask", "neg_inf", "scores"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "masked_attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, S, D]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 1, S])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, S, D])], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def attention_feeds():
    rng = np.random.default_rng(1)
    ids = rng.integers(1, 50, (2, 1, S))
    ids[0, 0, 4:] = 0  # padding at the end of the first sequence
    ids[1, 0, 2] = 0
    return {"x": rng.normal(0, 1, (2, S, D)).astype(np.float32), "ids": ids}


def check_attention(runners) -> None:
    m, feeds = attention_model(), attention_feeds()
    want = onnx_runtime(m, feeds)[0]
    import cortex.onnx_backend as backend

    for runner in runners:
        rep = backend.prepare(m, runner="reference") if runner == "reference" else backend.prepare(m, backend=runner)
        np.testing.assert_allclose(rep.run(dict(feeds))[0], want, rtol=1e-4, atol=1e-4, err_msg=runner)


def test_attention_with_an_in_graph_mask_imports_and_equals_onnx_runtime():
    module = from_onnx(attention_model())
    names = [op.name for op in module.walk()]
    assert names.count("cortex.compare") == 1  # Equal on the ids; the causal Greater is folded at import
    assert {"cortex.or", "cortex.select"} <= set(names)
    (main,) = module.ops
    assert [str(t) for t in main.function_type.inputs] == [f"tensor<2x{S}x{D}xf32>", f"tensor<2x1x{S}xi64>"]
    check_attention(("reference", "numpy"))


@pytest.mark.slow
def test_comparisons_and_masked_attention_on_iree(monkeypatch):
    pytest.importorskip("iree.compiler")
    for key, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(key, value)
    check_attention(("iree",))
    rng = np.random.default_rng(2)
    for element in (TensorProto.FLOAT, TensorProto.INT32):
        nodes = [helper.make_node("GreaterOrEqual", ["a", "b"], ["g"]), helper.make_node("Less", ["a", "b"], ["l"]),
                 helper.make_node("Xor", ["g", "l"], ["x"]), helper.make_node("Not", ["x"], ["n"]),
                 helper.make_node("Equal", ["a", "b"], ["e"]), helper.make_node("And", ["e", "g"], ["c"])]
        m = model(nodes, {"a": (element, [3, 4]), "b": (element, [4])}, {"n": TensorProto.BOOL, "c": TensorProto.BOOL})
        check_all(m, {"a": draw_values(rng, TYPES[element], (3, 4)), "b": draw_values(rng, TYPES[element], (4,))},
                  runners=("iree",))


@pytest.mark.parametrize("nodes, inputs, message", [
    ([helper.make_node("And", ["a", "b"], ["z"])], {"a": (TensorProto.FLOAT, [2]), "b": (TensorProto.BOOL, [2])},
     "(And): cortex.and: lhs must be an i1 (boolean) tensor, got tensor<2xf32>"),
    ([helper.make_node("Not", ["a"], ["z"])], {"a": (TensorProto.INT32, [2])},
     "the operand must be an i1 (boolean) tensor"),
    ([helper.make_node("Less", ["a", "b"], ["z"])], {"a": (TensorProto.FLOAT, [2]), "b": (TensorProto.INT64, [2])},
     "lhs and rhs must share one element type, got f32 and i64"),
    ([helper.make_node("Equal", ["a", "b"], ["z"])], {"a": (TensorProto.UINT8, [2]), "b": (TensorProto.UINT8, [2])},
     "graph input 'a' is uint8"),
    ([helper.make_node("Greater", ["a", "b"], ["z"])], {"a": (TensorProto.FLOAT, [2, 3]), "b": (TensorProto.FLOAT, [4])},
     "(Greater)"),
])
def test_comparison_and_logic_errors_name_the_node(nodes, inputs, message):
    with pytest.raises(OnnxImportError, match=re.escape(message)):
        from_onnx(model(nodes, inputs, {"z": TensorProto.BOOL}))


def test_legacy_broadcast_along_an_axis_is_refused():
    node = helper.make_node("Greater", ["a", "b"], ["z"], broadcast=1, axis=0)
    graph = helper.make_graph([node], "legacy", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
                                                 helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("z", TensorProto.BOOL, None)])
    with pytest.raises(OnnxImportError, match="legacy broadcasting along an axis"):
        from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)]))
