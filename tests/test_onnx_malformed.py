"""Malformed ONNX models: each one `CortexError` line naming the node, the operator and
the attribute or input -- never a raw exception, never a silently different graph.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from cortex.errors import CortexError
from cortex.frontends.onnx import SUPPORTED_OPS, from_onnx
from cortex.tools.import_onnx import main as import_main

MAX_MESSAGE = 400  # cortex.frontends.onnx_checks.MAX_MESSAGE: an error is one line at most this long


def info(name: str, dims) -> onnx.ValueInfoProto:
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def model_of(nodes, inputs, outputs, initializers=(), opset: int = 17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def refused(model, *fragments: str) -> str:
    with pytest.raises(CortexError) as caught:
        from_onnx(model)
    message = str(caught.value)
    assert "\n" not in message and len(message) <= MAX_MESSAGE, message
    for fragment in fragments:
        assert fragment in message, message
    return message


X4 = info("x", [1, 1, 4, 4])
Y = info("y", None)


def one_node(op: str, inputs=("x",), outputs=("y",), x=X4, initializers=(), **attrs) -> onnx.ModelProto:
    return model_of([helper.make_node(op, list(inputs), list(outputs), name="n", **attrs)], [x], [Y], initializers)


def with_attribute(op: str, attribute: onnx.AttributeProto, inputs=("x",), x=X4, initializers=(), **attrs):
    node = helper.make_node(op, list(inputs), ["y"], name="n", **attrs)
    node.attribute.append(attribute)
    return model_of([node], [x], [Y], initializers)


# ---------------------------------------------------------------- arity


LATEST = 21  # every supported operator (Gelu came in opset 20)


@pytest.mark.parametrize("op", sorted(op for op in SUPPORTED_OPS if onnx.defs.get_schema(op, LATEST).min_input > 0))
def test_a_node_with_too_few_inputs_names_node_and_operator(op):
    node = helper.make_node(op, [], ["y"], name="n")
    refused(model_of([node], [X4], [Y], opset=LATEST), "node 'n'", f"({op})", "has 0 input(s)")


@pytest.mark.parametrize("op", sorted(SUPPORTED_OPS))
def test_a_node_without_outputs_names_node_and_operator(op):
    inputs = ["x"] * onnx.defs.get_schema(op, LATEST).min_input
    node = helper.make_node(op, inputs, [], name="n")
    refused(model_of([node], [X4], [Y], opset=LATEST), "node 'n'", f"({op})", "has 0 output(s)")


def test_an_empty_required_input_is_named():
    refused(one_node("Add", inputs=("x", "")), "(Add)", "input #1 ('B') is required but empty")


def test_a_missing_required_attribute_is_named():
    refused(one_node("MaxPool"), "(MaxPool)", "requires attribute 'kernel_shape'")


# ---------------------------------------------------------------- attribute types (no truncation)


@pytest.mark.parametrize(
    "op, attribute, expected, attrs",
    [
        ("MaxPool", helper.make_attribute("pads", 1), "must be a list of integers", {"kernel_shape": [2, 2]}),
        ("Flatten", helper.make_attribute("axis", 1.5), "must be an integer", {}),
        ("Conv", helper.make_attribute("strides", [1.5, 1.0]), "must be a list of integers", {}),
        ("Conv", helper.make_attribute("strides", ["1", "1"]), "must be a list of integers", {}),
        ("Softmax", helper.make_attribute("axis", "1"), "must be an integer", {}),
    ],
)
def test_an_attribute_of_the_wrong_type_is_refused_not_truncated(op, attribute, expected, attrs):
    inputs = ("x", "w") if op == "Conv" else ("x",)
    weights = [numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w")] if op == "Conv" else []
    refused(with_attribute(op, attribute, inputs, initializers=weights, **attrs),
            f"({op})", f"attribute '{attribute.name}'", expected)


def test_gemm_alpha_as_a_string_is_refused():
    a, b = info("a", [2, 3]), info("b", [3, 2])
    node = helper.make_node("Gemm", ["a", "b"], ["y"], name="n")
    node.attribute.append(helper.make_attribute("alpha", "x"))
    refused(model_of([node], [a, b], [Y]), "(Gemm)", "attribute 'alpha'", "must be a float")


def test_an_attribute_without_a_type_is_refused():
    attribute = onnx.AttributeProto(name="axis")  # type UNDEFINED
    refused(with_attribute("Flatten", attribute), "(Flatten)", "attribute 'axis'")


@pytest.mark.parametrize("what", ["shape", "axes"])
def test_float_shapes_and_axes_are_refused_not_truncated(what):
    if what == "shape":
        model = one_node("Reshape", inputs=("x", "s"),
                         initializers=[numpy_helper.from_array(np.array([1.5, 16.0], np.float32), "s")])
    else:
        model = one_node("ReduceSum", inputs=("x", "s"),
                         initializers=[numpy_helper.from_array(np.array([1.7], np.float32), "s")])
    refused(model, "node 'n'", f"input {what} 's' must be an integer tensor, got float32")


# ---------------------------------------------------------------- bounds


def test_max_pool_pads_as_large_as_the_kernel_are_refused():
    refused(one_node("MaxPool", kernel_shape=[2, 2], pads=[2, 2, 0, 0]), "(MaxPool)", "attribute 'pads'",
            "must be smaller than the kernel")


@pytest.mark.parametrize("pad, expected", [(100_000, "more than"), (2**62, "beyond")])
def test_huge_conv_pads_are_refused_at_import(pad, expected):
    w = numpy_helper.from_array(np.ones((1, 1, 2, 2), np.float32), "w")
    refused(one_node("Conv", inputs=("x", "w"), initializers=[w], pads=[pad] * 4), "(Conv)", expected)


@pytest.mark.parametrize("dims, expected", [([-5, 2], "negative dimension"), ([2**40, 2**40], "more than")])
def test_input_dimensions_are_bounded(dims, expected):
    refused(one_node("Relu", x=info("x", dims)), "graph input 'x'", expected)


def test_a_short_initializer_is_refused_naming_it():
    w = numpy_helper.from_array(np.ones((2, 2), np.float32), "w")
    w.raw_data = w.raw_data[:5]
    refused(one_node("Add", inputs=("x", "w"), x=info("x", [2, 2]), initializers=[w]), "initializer 'w'", "cannot be read")


def test_duplicate_input_names_are_refused():
    model = model_of([helper.make_node("Relu", ["x"], ["y"])], [info("x", [2]), info("x", [2])], [Y])
    refused(model, "graph input 'x' is declared twice")


def test_a_tensor_defined_twice_is_refused():
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Neg", ["x"], ["y"], name="b")]
    refused(model_of(nodes, [info("x", [2])], [Y]), "node 'b'", "output 'y' is already defined")


def test_a_node_output_named_like_an_initializer_is_refused():
    """The initializer's value is known at import time: a node overwriting it would leave readers unsure which
    value they get (ONNX names each tensor once)."""
    w = numpy_helper.from_array(np.ones(2, np.float32), "w")
    nodes = [helper.make_node("Relu", ["x"], ["w"], name="a"), helper.make_node("Add", ["x", "w"], ["y"])]
    refused(model_of(nodes, [info("x", [2])], [Y], [w]), "node 'a'", "output 'w' is already defined")


def test_split_sizes_that_do_not_cover_the_axis_are_refused():
    """Sizes 1 + 2 of an axis of 4 would silently drop its last element."""
    sizes = numpy_helper.from_array(np.array([1, 2], np.int64), "sp")
    nodes = [helper.make_node("Split", ["x", "sp"], ["a", "b"], axis=1, name="cut"), helper.make_node("Add", ["a", "a"], ["y"])]
    refused(model_of(nodes, [info("x", [2, 4])], [Y], [sizes]), "node 'cut'", "split sizes [1, 2] do not cut dimension 1")


def test_messages_stay_one_short_line():
    huge = "\n".join(["line"] * 600_000)  # ~3 MB, many lines
    node = helper.make_node("Relu", ["x"], ["y"], name="bad\nname")
    node.attribute.append(helper.make_attribute("junk", huge))
    refused(model_of([node], [info("x", [2])], [Y]), "(Relu)", "attribute 'junk'")


# ---------------------------------------------------------------- files


def test_an_empty_file_is_refused(tmp_path):
    (tmp_path / "empty.onnx").write_bytes(b"")
    refused(str(tmp_path / "empty.onnx"), "is empty (0 bytes)")


def test_external_data_may_not_leave_the_models_folder(tmp_path):
    secret = tmp_path / "secret.bin"
    secret.write_bytes(np.ones(4, np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    w = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="../secret.bin")
    onnx.save(one_node("Add", inputs=("x", "w"), x=info("x", [4]), initializers=[w]), folder / "m.onnx")
    refused(str(folder / "m.onnx"), "initializer 'w'", "outside the model's folder")


def test_external_data_inside_the_folder_is_read(tmp_path):
    (tmp_path / "w.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    w = onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    w.data_location = TensorProto.EXTERNAL
    w.external_data.add(key="location", value="w.bin")
    onnx.save(one_node("Add", inputs=("x", "w"), x=info("x", [4]), initializers=[w]), tmp_path / "m.onnx")
    assert "1.000000e+00, 2.000000e+00, 3.000000e+00" in str(from_onnx(str(tmp_path / "m.onnx")))


def test_cortex_import_onnx_reports_one_line_and_exit_1(tmp_path, capsys):
    model = one_node("Relu", x=info("x", [-5, 2]))
    onnx.save(model, tmp_path / "m.onnx")
    assert import_main([str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out.mlir")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "negative dimension" in err
    assert not (tmp_path / "out.mlir").exists()


def test_cortex_import_onnx_goes_through_the_entry_wrapper():
    from importlib.metadata import entry_points

    from cortex.tools import entry

    assert entry.cortex_import_onnx  # the wrapper exists; pyproject points the console script at it
    scripts = {e.name: e.value for e in entry_points(group="console_scripts") if e.name.startswith("cortex")}
    assert scripts.get("cortex-import-onnx") in (None, "cortex.tools.entry:cortex_import_onnx",
                                                 "cortex.tools.import_onnx:main")  # installed before this change


def test_pyproject_names_the_entry_wrapper():
    from pathlib import Path

    import cortex

    pyproject = (Path(cortex.__file__).parent / "pyproject.toml").read_text()
    assert 'cortex-import-onnx = "cortex.tools.entry:cortex_import_onnx"' in pyproject


# ---------------------------------------------------------------- zero-size axes


@pytest.mark.parametrize("shape", [[2, 0], [0, 3], [2, 0, 3]])
@pytest.mark.parametrize("op", ["Softmax", "ReduceMax"])
def test_softmax_and_max_over_a_zero_size_axis_give_the_empty_or_identity_result(shape, op):
    import cortex

    attrs = {"axis": 1} if op == "Softmax" else {"keepdims": 1}
    inputs = ["x"] if op == "Softmax" else ["x", "axes"]
    axes = [numpy_helper.from_array(np.array([1], np.int64), "axes")] if op == "ReduceMax" else []
    model = model_of([helper.make_node(op, inputs, ["y"], **attrs)], [info("x", shape)], [Y], axes, opset=18)
    module = from_onnx(model)
    x = np.zeros(shape, np.float32)
    (want,) = cortex.reference(module, entry="main", mode=None)(x)
    (got,) = cortex.compile(module, entry="main", mode=None)(x)
    expected = np.zeros(shape, np.float32) if op == "Softmax" else np.max(x, axis=1, keepdims=True, initial=-np.inf)
    np.testing.assert_array_equal(want, expected)
    np.testing.assert_array_equal(got, expected)


def test_a_string_attribute_that_is_not_utf8_is_one_error():
    # found by the fuzz suite: the message builder decoded the bytes and raised UnicodeDecodeError
    node = helper.make_node("MaxPool", ["x"], ["y"], name="n", kernel_shape=[2, 2])
    node.attribute.append(helper.make_attribute("auto_pad", b"\xff\xfe"))
    refused(model_of([node], [X4], [Y]), "(MaxPool)", "attribute 'auto_pad'")
