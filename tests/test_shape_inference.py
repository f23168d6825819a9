"""cortex-shape-inference: dynamic result types become static, from the arguments.

The main property: take a fully static module, forget every result shape
that an op's typing rule determines (make it `?`), and shape inference must
give back exactly the module we started from.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, TensorType
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import PassFailedException

import cortex
from cortex.dialects import shapes
from cortex.dialects.base import CortexOp
from cortex.dialects.state import StateOp, WeightOp
from cortex.dialects.tensor_ops import ConstantOp, ReshapeOp
from cortex.driver import run_passes
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import parse_module, to_text
from cortex.passes.shape_inference import ShapeInferenceError, infer_shapes

DECLARED_BY_HAND = (ConstantOp, ReshapeOp, StateOp, WeightOp)  # their result type is the source of truth


def dynamic(t):
    return TensorType(t.element_type, [shapes.DYNAMIC] * t.get_num_dims()) if isinstance(t, TensorType) else t


def forget_shapes(module, results_of_functions: bool = True):
    """Every inferable cortex result (and each function's results) made fully dynamic."""
    for op in list(module.walk()):
        if isinstance(op, CortexOp) and not isinstance(op, DECLARED_BY_HAND):
            for result in op.results:
                Rewriter.replace_value_with_new_type(result, dynamic(result.type))
    if results_of_functions:
        for fn in module.ops:
            if isinstance(fn, func.FuncOp):
                outputs = [dynamic(t) for t in fn.function_type.outputs.data]
                fn.function_type = FunctionType.from_lists(list(fn.function_type.inputs.data), outputs)
    return module


def test_forgetting_really_forgets():
    module = forget_shapes(parse_module(EXAMPLES["conv_bn"].text()))
    assert "tensor<?x?x?x?xf32>" in to_text(module)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_tensor_graphs_get_their_shapes_back(name):
    original = parse_module(EXAMPLES[name].text())
    forgotten = forget_shapes(parse_module(EXAMPLES[name].text()))
    forgotten.verify()
    inferred = run_passes(forget_shapes(parse_module(EXAMPLES[name].text())), "cortex-shape-inference")
    assert to_text(inferred) == to_text(original)
    # ... and the results are the same ones.
    spec = EXAMPLES[name]
    inputs = spec.make_inputs(1)
    for a, b in zip(
        cortex.reference(forgotten, entry=spec.entry, mode=None)(*inputs),
        cortex.reference(inferred, entry=spec.entry, mode=None)(*inputs),
        strict=True,
    ):
        np.testing.assert_array_equal(a, b)


def test_l2_pipeline_gets_its_shapes_back():
    original = cortex.build_l2_pipeline(96, 128, 32)
    # scf.if results and the function's results stay as declared here: the
    # state ops pin the map type, and the encoder's bytes are dynamic anyway.
    module = forget_shapes(cortex.build_l2_pipeline(96, 128, 32), results_of_functions=False)
    assert "tensor<?x?xf32>" in to_text(module)
    infer_shapes(module)
    module.verify()
    assert to_text(module) == to_text(original)


def test_inference_is_idempotent_and_leaves_static_modules_alone():
    text = EXAMPLES["linear_bn"].text()
    once = run_passes(parse_module(text), "cortex-shape-inference")
    twice = run_passes(parse_module(to_text(once)), "cortex-shape-inference")
    assert to_text(once) == to_text(twice) == to_text(parse_module(text))


def test_dynamic_arguments_stay_dynamic():
    text = """func.func @f(%x: tensor<?x3xf32>, %w: tensor<3x5xf32>) -> tensor<?x?xf32> {
  %m = "cortex.matmul"(%x, %w) : (tensor<?x3xf32>, tensor<3x5xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}"""
    module = run_passes(parse_module(text), "cortex-shape-inference")
    assert "-> tensor<?x5xf32>" in to_text(module)
    assert "(%x: tensor<?x3xf32>" in to_text(module)


def test_calls_follow_the_refined_callee():
    text = """func.func @callee(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %t = cortex.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<?x?xf32>
  func.return %t : tensor<?x?xf32>
}
func.func @caller(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %c = func.call @callee(%x) : (tensor<2x3xf32>) -> tensor<?x?xf32>
  %r = cortex.relu %c : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}"""
    module = run_passes(parse_module(text), "cortex-shape-inference")
    module.verify()
    out = to_text(module)
    assert "func.func @callee(%x: tensor<2x3xf32>) -> tensor<3x2xf32>" in out
    assert "func.call @callee(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>" in out
    assert "func.func @caller(%x: tensor<2x3xf32>) -> tensor<3x2xf32>" in out


BAD = """func.func @f(%x: tensor<2x3xf32>, %w: tensor<5x4xf32>, %z: tensor<7xf32>) -> (tensor<?x?xf32>, tensor<?x?xf32>) {
  %a = cortex.relu %x : tensor<2x3xf32> -> tensor<?x?xf32>
  %m = "cortex.matmul"(%a, %w) : (tensor<?x?xf32>, tensor<5x4xf32>) -> tensor<?x?xf32>
  %s = cortex.add %a, %z : (tensor<?x?xf32>, tensor<7xf32>) -> tensor<?x?xf32>
  func.return %m, %s : tensor<?x?xf32>, tensor<?x?xf32>
}"""


def test_the_first_op_that_cannot_agree_is_reported_on_one_line():
    module = parse_module(BAD)
    with pytest.raises(ShapeInferenceError) as info:
        run_passes(module, "cortex-shape-inference")
    message = str(info.value)
    assert isinstance(info.value, PassFailedException)
    assert message == (
        "'cortex.matmul' op (<input>:3:8, in @f, defining %m): matmul contraction mismatch: 2x3 has K=3, 5x4 has K=5"
    )


def test_a_source_location_is_reported_when_the_op_has_one():
    module = parse_module(BAD.replace("tensor<?x?xf32>\n  %s", 'tensor<?x?xf32> loc("model.py":12:5)\n  %s'))
    with pytest.raises(ShapeInferenceError, match=r"model\.py:12:5, in @f, defining %m"):
        infer_shapes(module)


def test_the_second_error_shows_once_the_first_is_fixed():
    module = parse_module(BAD.replace("tensor<5x4xf32>", "tensor<3x4xf32>"))
    with pytest.raises(ShapeInferenceError, match=r"'cortex.add' op .*shapes 2x3 and 1x7 do not broadcast"):
        infer_shapes(module)


def test_broadcast_of_a_dynamic_and_a_static_dimension_is_the_static_one():
    assert shapes.broadcast((shapes.DYNAMIC, 4), (3, 1)) == (3, 4)
    assert shapes.broadcast((3,), (shapes.DYNAMIC,)) == (3,)


def test_a_slice_ending_past_the_dimension_is_refused():
    assert shapes.slice_((4,), (2,), (2,), (1,)) == (2,)  # elements 2 and 3: the last one in range
    with pytest.raises(shapes.ShapeError, match="leaves a dimension of 4"):
        shapes.slice_((4,), (2,), (3,), (1,))
    with pytest.raises(shapes.ShapeError):
        shapes.slice_((5,), (1,), (3,), (2,))  # 1, 3, 5: one past the end


def test_a_linear_bias_must_have_one_value_per_output():
    assert shapes.linear((2, 4), (3, 4), (3,)) == (2, 3)
    with pytest.raises(shapes.ShapeError, match="bias must have shape 3"):
        shapes.linear((2, 4), (3, 4), (5,))
