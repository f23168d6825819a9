"""ONNX Cast and Where on run-time data of any element type cortex tensors hold (float16/32/64, bool,
signed integers): graph inputs and outputs of those types, `cortex.cast` between any two of them and
`cortex.select` on a boolean condition, against ONNX Runtime on the reference interpreter, the NumPy
backend and (slow) IREE. Hypothesis draws the type pairs, shapes and values (in the target's range: ONNX
leaves out-of-range float-to-integer casts undefined).
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from helpers.onnx_oracle import onnx_runtime
from helpers.onnx_typed import TYPES, check_all, model, values
from helpers.pipelines import EVERY_RUN_ON_IREE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import cortex
import cortex.onnx_backend as backend
from cortex.frontends.onnx import ENTRY, OnnxImportError, from_onnx

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@st.composite
def casts(draw):
    source, target = draw(st.sampled_from(sorted(TYPES))), draw(st.sampled_from(sorted(TYPES)))
    shape = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    seed = draw(st.integers(0, 2**16))
    return source, target, shape, seed


@SETTINGS
@given(casts())
def test_cast_of_run_time_data_equals_onnx_runtime(case):
    source, target, shape, seed = case
    rng = np.random.default_rng(seed)
    dst = TYPES[target]
    # float -> integer only inside the target's range (ONNX: undefined outside); halves avoided (exact .5 ties)
    high = 100 if dst == np.bool_ or not np.issubdtype(dst, np.integer) else min(100, np.iinfo(dst).max)
    low = 0 if dst != np.bool_ and np.issubdtype(dst, np.integer) and np.iinfo(dst).min == 0 else -high
    x = values(rng, TYPES[source], shape, low, high)
    m = model([helper.make_node("Cast", ["x"], ["y"], to=target)], {"x": (source, shape)}, {"y": target})
    check_all(m, {"x": x})


WHERE_TYPES = [TensorProto.FLOAT, TensorProto.DOUBLE, TensorProto.FLOAT16, TensorProto.INT32, TensorProto.INT64]
"""The types ONNX Runtime's Where takes of ours (it has no bool, int8 or int16 Where)."""


@SETTINGS
@given(st.sampled_from(WHERE_TYPES), st.integers(0, 2**16))
def test_where_of_run_time_condition_equals_onnx_runtime(element, seed):
    rng = np.random.default_rng(seed)
    cond = rng.random((3, 1, 4)) < 0.5  # broadcast against x (2, 4) and y (4,)
    x, y = values(rng, TYPES[element], (2, 4)), values(rng, TYPES[element], (4,))
    m = model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
              {"c": (TensorProto.BOOL, [3, 1, 4]), "x": (element, [2, 4]), "y": (element, [4])}, {"z": element})
    check_all(m, {"c": cond, "x": x, "y": y})


def masked_model():
    """A float graph around run-time int and bool data: relu(x) where mask, else trunc(x) (Cast to int32 and
    back), plus an int64 count cast to float — the kind of mixing an exporter writes."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"]),
        helper.make_node("Cast", ["x"], ["xi"], to=TensorProto.INT32),
        helper.make_node("Cast", ["xi"], ["t"], to=TensorProto.FLOAT),
        helper.make_node("Where", ["mask", "r", "t"], ["w"]),
        helper.make_node("Cast", ["n"], ["nf"], to=TensorProto.FLOAT),
        helper.make_node("Add", ["w", "nf"], ["y"]),
    ]
    inputs = {"x": (TensorProto.FLOAT, [2, 5]), "mask": (TensorProto.BOOL, [2, 5]), "n": (TensorProto.INT64, [1])}
    return model(nodes, inputs, {"y": TensorProto.FLOAT})


def masked_feeds():
    rng = np.random.default_rng(3)
    return {"x": rng.uniform(-9, 9, (2, 5)).astype(np.float32), "mask": rng.random((2, 5)) < 0.5,
            "n": np.array([7], np.int64)}


def test_float_graph_with_run_time_int_and_bool_data():
    m = masked_model()
    module = from_onnx(m)
    (main,) = [op for op in module.ops]
    assert [str(t) for t in main.function_type.inputs] == ["tensor<2x5xf32>", "tensor<2x5xi1>", "tensor<1xi64>"]
    assert {op.name for op in module.walk()} >= {"cortex.select", "cortex.cast"}
    check_all(m, masked_feeds())
    (got,) = cortex.compile(module, entry=ENTRY, mode=None)(*masked_feeds().values())
    np.testing.assert_allclose(got, onnx_runtime(m, masked_feeds())[0], rtol=1e-6)


@pytest.mark.slow
def test_run_time_cast_and_where_on_iree(monkeypatch):
    pytest.importorskip("iree.compiler")
    for key, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(key, value)
    check_all(masked_model(), masked_feeds(), runners=("iree",))
    rng = np.random.default_rng(5)
    m = model([helper.make_node("Where", ["c", "x", "y"], ["z"])],
              {"c": (TensorProto.BOOL, [2, 3]), "x": (TensorProto.INT64, [2, 3]), "y": (TensorProto.INT64, [3])},
              {"z": TensorProto.INT64})
    check_all(m, {"c": rng.random((2, 3)) < 0.5, "x": values(rng, np.int64, (2, 3)), "y": values(rng, np.int64, (3,))},
              runners=("iree",))


@pytest.mark.parametrize("nodes, inputs, message", [
    ([helper.make_node("Where", ["c", "x", "x"], ["z"])], {"c": (TensorProto.FLOAT, [2]), "x": (TensorProto.FLOAT, [2])},
     "cond must be an i1 (boolean) tensor"),
    ([helper.make_node("Where", ["c", "x", "y"], ["z"])],
     {"c": (TensorProto.BOOL, [2]), "x": (TensorProto.FLOAT, [2]), "y": (TensorProto.INT64, [2])},
     "x and y must share one element type"),
    ([helper.make_node("Relu", ["x"], ["z"])], {"x": (TensorProto.BOOL, [2])},
     "input 'x' is i1; this operator takes float32 tensors"),
    ([helper.make_node("Cast", ["x"], ["z"], to=TensorProto.UINT16)], {"x": (TensorProto.FLOAT, [2])},
     "a cast to uint16: cortex tensors hold"),
])
def test_typed_data_errors_name_the_node(nodes, inputs, message):
    with pytest.raises(OnnxImportError, match=re.escape(message)):
        from_onnx(model(nodes, inputs, {"z": TensorProto.FLOAT}))


def test_cast_to_bool_is_true_for_nan_and_false_only_for_zeros():
    """ONNX (and NumPy) cast any non-zero float to true, NaN included; both zeros are false."""
    m = model([helper.make_node("Cast", ["x"], ["z"], to=TensorProto.BOOL)], {"x": (TensorProto.FLOAT, [6])},
              {"z": TensorProto.BOOL})
    x = np.array([np.nan, 0.0, -0.0, 2.5, -np.inf, 1e-30], np.float32)
    check_all(m, {"x": x})
    (got,) = backend.prepare(m, backend="numpy").run({"x": x})
    assert got.tolist() == [True, False, False, True, True, True]


def test_cast_of_bool_data_is_one_for_true():
    """true is 1 in every type a bool casts to (not -1, a sign-extended bit)."""
    m = model([helper.make_node("Cast", ["c"], ["f"], to=TensorProto.FLOAT),
               helper.make_node("Cast", ["c"], ["d"], to=TensorProto.DOUBLE),
               helper.make_node("Cast", ["c"], ["i"], to=TensorProto.INT32)],
              {"c": (TensorProto.BOOL, [3])}, {"f": TensorProto.FLOAT, "d": TensorProto.DOUBLE, "i": TensorProto.INT32})
    c = np.array([True, False, True])
    check_all(m, {"c": c})
    for got in backend.prepare(m, backend="numpy").run({"c": c}):
        assert got.tolist() == [1, 0, 1]


def test_an_integer_graph_input_no_node_reads_is_refused_by_name():
    """Not silently left out of the entry's arguments: the caller would feed it and it would be ignored."""
    m = model([helper.make_node("Relu", ["x"], ["z"])],
              {"x": (TensorProto.FLOAT, [2]), "n": (TensorProto.INT64, [1])}, {"z": TensorProto.FLOAT})
    with pytest.raises(OnnxImportError, match=r"onnx graph input 'n' is int64.*constant_inputs"):
        from_onnx(m)


def test_an_integer_input_read_by_cast_and_by_an_integer_add():
    """An int64 input cast to float32 and also added as int64: the backend computes both (the integer Add at
    import time, per input value) equal to ONNX Runtime; imported alone, the Add is refused by name for its
    int64 data (not the Cast, which takes any element type)."""
    m = model([helper.make_node("Cast", ["x"], ["xf"], to=TensorProto.FLOAT),
               helper.make_node("Add", ["xf", "w"], ["y"]),
               helper.make_node("Add", ["x", "x"], ["twice"], name="int_add")],
              {"x": (TensorProto.INT64, [3]), "w": (TensorProto.FLOAT, [3])},
              {"y": TensorProto.FLOAT, "twice": TensorProto.INT64})
    feeds = {"x": np.array([1, -2, 7], np.int64), "w": np.array([0.5, 1.5, -3.0], np.float32)}
    expected = onnx_runtime(m, feeds)
    got = backend.prepare(m, backend="numpy").run(feeds)
    assert [g.dtype for g in got] == [np.float32, np.int64]
    for g, e in zip(got, expected):
        np.testing.assert_array_equal(g, e)
    with pytest.raises(OnnxImportError, match=re.escape("node 'int_add' (Add): input A 'x' is i64; this operator "
                                                        "takes float32 tensors")):
        from_onnx(m)


def test_integer_arithmetic_on_run_time_data_is_refused_naming_the_node_and_why():
    """Add of a known int64 input and an int64 computed at run time (Cast of float data) cannot be computed at
    import time, and cortex's arithmetic is float32: the Add says so, not the Cast."""
    m = model([helper.make_node("Cast", ["w"], ["wi"], to=TensorProto.INT64),
               helper.make_node("Add", ["x", "wi"], ["s"], name="int_add"),
               helper.make_node("Cast", ["x"], ["z"], to=TensorProto.FLOAT)],
              {"x": (TensorProto.INT64, [3]), "w": (TensorProto.FLOAT, [3])}, {"s": TensorProto.INT64, "z": TensorProto.FLOAT})
    with pytest.raises(OnnxImportError, match=r"node 'int_add' \(Add\): input A 'x' is int64; this operator takes float32 "
                                        r"tensors \(it computes integer data only at import time"):
        backend.prepare(m, backend="numpy").run({"x": np.array([1, 2, 3], np.int64), "w": np.ones(3, np.float32)})
