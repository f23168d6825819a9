"""The operators of MobileNet, ResNet/U-Net and transformer blocks, one small graph each, against ONNX Runtime.

Each graph is imported, compiled on the NumPy backend and run at a static and at a symbolic batch; the
outputs equal ONNX Runtime's within 1e-4. What the importer refuses is a located one-line error.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers.onnx_oracle import onnx_runtime
from onnx import TensorProto, helper, numpy_helper

import cortex
from cortex.errors import CortexError
from cortex.frontends.onnx import ENTRY, from_onnx

RNG = np.random.default_rng(44)


def weight(name: str, *shape: int, scale: float = 0.5) -> onnx.TensorProto:
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def ints(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.int64), name)


def floats(name: str, values) -> onnx.TensorProto:
    return numpy_helper.from_array(np.asarray(values, np.float32), name)


def model(nodes, shape, inits=(), opset=17, batch="N") -> onnx.ModelProto:
    """One float input `x` of `shape` (first dimension `batch`) and one output `y`."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, *shape[1:]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph(nodes, "g", [x], [y], list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def node(op, inputs, **attrs):
    return helper.make_node(op, inputs, ["y"], **attrs)


CASES = {
    "relu6_clip_inputs": (lambda: [node("Clip", ["x", "lo", "hi"])], (2, 3, 4, 4), [floats("lo", 0.0), floats("hi", 6.0)], 13),
    "clip_attributes_opset6": (lambda: [node("Clip", ["x"], min=-0.5, max=0.5)], (2, 6), [], 6),
    "clip_max_only": (lambda: [node("Clip", ["x", "", "hi"])], (2, 6), [floats("hi", 0.25)], 13),
    "hard_sigmoid": (lambda: [node("HardSigmoid", ["x"], alpha=0.3, beta=0.4)], (2, 8), [], 17),
    "hard_swish": (lambda: [node("HardSwish", ["x"])], (2, 3, 5), [], 17),
    "leaky_relu": (lambda: [node("LeakyRelu", ["x"], alpha=0.2)], (2, 7), [], 17),
    "leaky_relu_default_alpha": (lambda: [node("LeakyRelu", ["x"])], (2, 7), [], 17),
    "reshape_to_a_constant_value_ints": (
        lambda: [helper.make_node("Constant", [], ["s"], value_ints=[-1, 2, 3]), node("Reshape", ["x", "s"])],
        (2, 6), [], 17,
    ),
    "prelu_per_channel": (lambda: [node("PRelu", ["x", "s"])], (2, 3, 4, 4), [weight("s", 3, 1, 1)], 17),
    "erf": (lambda: [node("Erf", ["x"])], (2, 9), [], 17),
    "max_min_three_inputs": (
        lambda: [helper.make_node("Max", ["x", "a", "b"], ["m"]), node("Min", ["m", "b"])],
        (2, 4), [weight("a", 4), weight("b", 1, 4)], 17,
    ),
    "dropout_inference": (lambda: [node("Dropout", ["x"])], (2, 5), [], 17),
    "depthwise_conv": (
        lambda: [node("Conv", ["x", "w", "b"], group=4, pads=[1, 1, 1, 1], strides=[2, 2])],
        (2, 4, 7, 7), [weight("w", 4, 1, 3, 3), weight("b", 4)], 17,
    ),
    "grouped_conv": (lambda: [node("Conv", ["x", "w"], group=2, dilations=[2, 1])], (2, 4, 8, 6), [weight("w", 6, 2, 3, 3)], 17),
    "conv_transpose": (
        lambda: [node("ConvTranspose", ["x", "w", "b"], strides=[2, 2], pads=[1, 1, 0, 0], output_padding=[1, 0])],
        (2, 3, 4, 5), [weight("w", 3, 2, 3, 3), weight("b", 2)], 17,
    ),
    "conv_transpose_grouped_same": (
        lambda: [node("ConvTranspose", ["x", "w"], strides=[2, 2], group=2, auto_pad="SAME_UPPER")],
        (1, 4, 3, 3), [weight("w", 4, 1, 2, 2)], 17,
    ),
    # an odd total padding (kernel 3, stride 2): the extra cell at the end (upper) or at the start (lower)
    "conv_transpose_same_upper_odd": (
        lambda: [node("ConvTranspose", ["x", "w"], strides=[2, 2], auto_pad="SAME_UPPER")],
        (1, 2, 3, 4), [weight("w", 2, 3, 3, 3)], 17,
    ),
    "conv_transpose_same_lower_odd": (
        lambda: [node("ConvTranspose", ["x", "w"], strides=[2, 2], auto_pad="SAME_LOWER")],
        (1, 2, 3, 4), [weight("w", 2, 3, 3, 3)], 17,
    ),
    "global_average_pool": (lambda: [node("GlobalAveragePool", ["x"])], (2, 3, 5, 4), [], 17),
    "concat_with_constant": (lambda: [node("Concat", ["x", "c"], axis=1)], (2, 3, 4), [weight("c", 2, 2, 4)], 17),
    "pad_constant_and_crop": (lambda: [node("Pad", ["x", "p", "v"])], (2, 3, 4), [ints("p", [0, 1, -1, 0, 0, 2]), floats("v", 1.5)], 17),
    "pad_reflect": (lambda: [node("Pad", ["x", "p"], mode="reflect")], (2, 3, 5), [ints("p", [0, 0, 2, 0, 1, 1])], 17),
    "pad_edge_and_wrap": (
        lambda: [helper.make_node("Pad", ["x", "p"], ["e"], mode="edge"), node("Pad", ["e", "p"], mode="wrap")],
        (2, 3, 4), [ints("p", [0, 1, 2, 0, 2, 1])], 19,
    ),
    "squeeze_unsqueeze": (
        lambda: [helper.make_node("Unsqueeze", ["x", "a"], ["u"]), node("Squeeze", ["u", "b"])],
        (2, 3, 1, 4), [ints("a", [1, -1]), ints("b", [3, 5])], 17,
    ),
    "slice_strided_and_reversed": (
        lambda: [node("Slice", ["x", "s", "e", "a", "st"])],
        (2, 5, 6), [ints("s", [1, -1]), ints("e", [5, 0]), ints("a", [1, 2]), ints("st", [2, -2])], 17,
    ),
    "slice_reversed_to_the_start": (  # ends below -dim: the reversed slice keeps element 0
        lambda: [node("Slice", ["x", "s", "e", "a", "st"])],
        (2, 3, 5), [ints("s", [-1]), ints("e", [-(2**63)]), ints("a", [2]), ints("st", [-1])], 17,
    ),
    "split_into_three": (
        lambda: [helper.make_node("Split", ["x", "sp"], ["a", "b", "c"], axis=2), node("Concat", ["c", "a"], axis=2)],
        (2, 3, 6), [ints("sp", [1, 2, 3])], 17,
    ),
    "gather_indices": (lambda: [node("Gather", ["x", "i"], axis=1)], (2, 5, 3), [ints("i", [[4, 0], [2, 2]])], 17),
    "gather_scalar_then_reshape": (
        lambda: [helper.make_node("Gather", ["x", "i"], ["g"], axis=2), node("Reshape", ["g", "r"])],
        (2, 3, 4), [ints("i", 1), ints("r", [0, -1])], 17,
    ),
    "resize_nearest_scales": (lambda: [node("Resize", ["x", "", "sc"], mode="nearest")], (2, 2, 3, 4), [floats("sc", [1, 1, 2, 2])], 17),
    "resize_linear_half_pixel": (lambda: [node("Resize", ["x", "", "sc"], mode="linear")], (2, 2, 3, 4), [floats("sc", [1, 1, 2, 1.5])], 17),
    # scales whose output sizes are no whole numbers (5 x 1.5, 3 x 0.7): ONNX takes floor(size x scale)
    "resize_scales_of_fractional_sizes": (
        lambda: [node("Resize", ["x", "", "sc"], mode="linear")], (1, 2, 3, 5), [floats("sc", [1, 1, 0.7, 1.5])], 17,
    ),
    "resize_linear_align_corners_sizes": (
        lambda: [node("Resize", ["x", "", "", "sz"], mode="linear", coordinate_transformation_mode="align_corners", axes=[2, 3])],
        (1, 2, 3, 4), [ints("sz", [5, 7])], 18,
    ),
    "layer_norm": (lambda: [node("LayerNormalization", ["x", "g", "bb"], epsilon=1e-3)], (2, 3, 8), [weight("g", 8), weight("bb", 8)], 17),
    "layer_norm_two_axes": (lambda: [node("LayerNormalization", ["x", "g"], axis=-2)], (2, 3, 4), [weight("g", 3, 4)], 17),
    "layer_norm_mean_and_inv_std_dev": (
        lambda: [helper.make_node("LayerNormalization", ["x", "g"], ["n", "m", "inv"]), helper.make_node("Mul", ["n", "inv"], ["p"]),
                 node("Add", ["p", "m"])],
        (2, 3, 8), [weight("g", 8)], 17,
    ),
    "softmax_opset11_default_axis_flattens_at_1": (lambda: [node("Softmax", ["x"])], (2, 3, 4), [], 11),
    "reduce_sum_keeps_dims_by_default": (lambda: [node("ReduceSum", ["x", "a"])], (2, 3, 4), [ints("a", [1])], 17),
    "reduce_max_of_negative_data": (
        lambda: [helper.make_node("Abs", ["x"], ["p"]), helper.make_node("Neg", ["p"], ["q"]), node("ReduceMax", ["q"], axes=[2])],
        (2, 3, 4), [], 17,
    ),
    "reduce_with_empty_axes_as_identity": (lambda: [node("ReduceSum", ["x"], noop_with_empty_axes=1)], (2, 3), [], 17),
    "split_into_uneven_num_outputs": (
        lambda: [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=2, num_outputs=3), node("Concat", ["c", "a", "b"], axis=2)],
        (2, 3, 7), [], 18,
    ),
    "shape_chain_to_reshape": (
        lambda: [
            helper.make_node("Shape", ["x"], ["s"]),
            helper.make_node("Gather", ["s", "i"], ["c"], axis=0),
            helper.make_node("Unsqueeze", ["c", "z"], ["cu"]),
            helper.make_node("Concat", ["m1", "cu"], ["shape"], axis=0),
            node("Reshape", ["x", "shape"]),
        ],
        (2, 3, 4), [ints("i", 2), ints("z", [0]), ints("m1", [-1])], 17,
    ),
}
STATIC_ONLY = {"shape_chain_to_reshape"}  # Shape of a `?` dimension is refused (it is not known at import)
FIXED_BATCH = {"concat_with_constant"}  # the constant joined to x has x's batch


def feed(shape, batch):
    return {"x": RNG.standard_normal((batch, *shape[1:])).astype(np.float32) * 2}


@pytest.mark.parametrize("symbolic", [False, True], ids=["static", "symbolic"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_operator_matches_onnx_runtime(name, symbolic):
    if symbolic and name in STATIC_ONLY:
        pytest.skip("Shape needs the static input shape")
    make, shape, inits, opset = CASES[name]
    m = model(make(), shape, inits, opset, batch="N" if symbolic else shape[0])
    compiled = cortex.compile(from_onnx(m), entry=ENTRY, mode=None)
    for batch in ([1, 3] if symbolic and name not in FIXED_BATCH else [shape[0]]):
        x = feed(shape, batch)
        (want,) = onnx_runtime(m, x)
        got = np.asarray(compiled(x["x"])[0])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_shape_chain_folds_to_a_constant_reshape():
    make, shape, inits, opset = CASES["shape_chain_to_reshape"]
    text = cortex.to_text(from_onnx(model(make(), shape, inits, opset, batch=2)))
    assert "cortex.reshape %x : tensor<2x3x4xf32> -> tensor<6x4xf32>" in text
    assert text.count("cortex.") == 1 + text.count("cortex.reshape") - 1


def test_erf_gelu_is_recognised_after_import():
    """x·0.5·(1 + erf(x/√2)), as exporters write GELU, becomes one cortex.gelu under cortex-recognize-gelu."""
    nodes = [
        helper.make_node("Div", ["x", "sqrt2"], ["s"]), helper.make_node("Erf", ["s"], ["e"]),
        helper.make_node("Add", ["e", "one"], ["p"]), helper.make_node("Mul", ["x", "p"], ["xp"]),
        node("Mul", ["xp", "half"]),
    ]
    inits = [floats("sqrt2", np.sqrt(2.0)), floats("one", 1.0), floats("half", 0.5)]
    m = model(nodes, (2, 8), inits, 17, batch=2)
    module = from_onnx(m)
    cortex.run_passes(module, "cortex-recognize-gelu")
    text = cortex.to_text(module)
    assert "cortex.gelu" in text and "cortex.erf" not in text
    x = feed((2, 8), 2)
    got = cortex.compile(module, entry=ENTRY, mode=None)(x["x"])[0]
    np.testing.assert_allclose(got, onnx_runtime(m, x)[0], rtol=1e-5, atol=1e-6)


REFUSED = {
    "pad_reflect_negative": ([node("Pad", ["x", "p"], mode="reflect")], [ints("p", [0, -1, 0, 1])], "mode reflect pads [0, -1, 0, 1]"),
    "cast_to_unsigned": ([node("Cast", ["x"], to=TensorProto.UINT8)], [], "a cast to uint8: cortex tensors hold"),
    "dropout_mask": ([helper.make_node("Dropout", ["x"], ["y", "mask"])], [], "the mask output is not supported"),
    "not_of_float": ([node("Not", ["x"])], [], "cortex.not: the operand must be an i1 (boolean) tensor"),
    "resize_crop": (
        [node("Resize", ["x", "roi", "sc"], coordinate_transformation_mode="tf_crop_and_resize")],
        [floats("roi", [0, 0, 1, 1]), floats("sc", [1, 2])], "tf_crop_and_resize (extrapolation outside the box) is not supported",
    ),
    "gather_computed_indices": ([node("Gather", ["x", "x"])], [], "input indices 'x' is a graph input, not a constant"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_out_of_scope_is_a_located_error(name):
    nodes, inits, expected = REFUSED[name]
    for n in nodes:
        n.name = name
    with pytest.raises(CortexError) as info:
        from_onnx(model(nodes, (2, 3), inits, 17, batch=2))
    message = str(info.value)
    assert f"node '{name}'" in message and expected in message and "\n" not in message


def test_shape_of_a_symbolic_dimension_is_refused_by_name():
    make, shape, inits, opset = CASES["shape_chain_to_reshape"]
    nodes = make()
    nodes[0].name = "shape"
    with pytest.raises(CortexError, match=r"node 'shape' \(Shape\): the input's shape \['\?', 3, 4\] is known only at run time"):
        from_onnx(model(nodes, shape, inits, opset, batch="N"))
