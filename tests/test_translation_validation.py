"""Translation validation: the pass that changes the results is the one named."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import FloatAttr, ModuleOp, f32
from xdsl.passes import ModulePass, PassPipeline
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from cortex.dialects.state import WeightOp
from cortex.dialects.tensor_ops import AddOp, SubOp
from cortex.dialects.vision import TemporalSmoothOp
from cortex.driver import validate_pipeline
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import make_context, parse_module
from cortex.passes.translation_validation import SemanticsCallback, difference
from cortex.registry import all_passes


class AddToSub(RewritePattern):
    """Deliberately wrong: a + b → a − b."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        rewriter.replace(op, SubOp(op.lhs, op.rhs))


@dataclass(frozen=True)
class AddToSubPass(ModulePass):
    name = "test-add-to-sub"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(AddToSub()).rewrite_module(op)


@dataclass(frozen=True)
class SmootherPass(ModulePass):
    """Deliberately wrong: temporal_smooth's alpha 0.6 → 0.9 (differs only once prev_score matters)."""

    name = "test-smoother"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for smooth in op.walk():
            if isinstance(smooth, TemporalSmoothOp):
                smooth.properties["alpha"] = FloatAttr(0.9, f32)


@dataclass(frozen=True)
class WrongWeightsPass(ModulePass):
    """Deliberately wrong: every cortex.weight becomes 0.25."""

    name = "test-wrong-weights"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for weight in list(op.walk()):
            if isinstance(weight, WeightOp):
                Rewriter.replace_op(weight, arith.ConstantOp(FloatAttr(0.25, f32)))


@dataclass(frozen=True)
class AddUnrunnableOpPass(ModulePass):
    """Adds an unused tensor.empty: IR the reference interpreter does not run."""

    name = "test-add-tensor-empty"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fn = next(iter(op.ops))
        Rewriter.insert_op(tensor.EmptyOp([], fn.function_type.outputs.data[0]), InsertPoint.at_start(fn.body.block))


@dataclass(frozen=True)
class DropEntryPass(ModulePass):
    name = "test-drop-entry"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fn = next(iter(op.ops))
        fn.detach()
        fn.erase()


def graph(name: str) -> tuple[ModuleOp, str]:
    spec = EXAMPLES[name]
    return parse_module(spec.text(), str(spec.path)), spec.entry


def apply(module: ModuleOp, passes: tuple[ModulePass, ...], **options) -> SemanticsCallback:
    callback = SemanticsCallback(module, **options)
    PassPipeline(passes, callback).apply(make_context(), module)
    return callback


def test_correct_passes_pass_and_are_recorded():
    module, entry = graph("unoptimized_model")
    callback = apply(module, (CanonicalizePass(), CommonSubexpressionElimination(), DeadCodeElimination()), entry=entry)
    assert callback.checked == ["canonicalize", "cse", "dce"] and callback.notes == []


def test_the_wrong_pass_is_named_with_output_and_index():
    module, entry = graph("unoptimized_model")
    with pytest.raises(CortexError) as e:
        apply(module, (CommonSubexpressionElimination(), AddToSubPass(), DeadCodeElimination()), entry=entry)
    message = str(e.value)
    assert message.startswith("pass 'test-add-to-sub' changed the results of @unoptimized_model: output #0 differs by ")
    assert message.endswith(" (frame 0)")
    assert "at [" in message


def test_state_bug_shows_on_a_later_frame():
    module = build_l2_pipeline(96, 128, 32)
    expected = (
        r"^pass 'test-smoother' changed the results of @l2_frame: "
        r"output #1 differs by [0-9.e-]+ at \[\d+, \d+\] \(frame [1-9]\)"
    )
    with pytest.raises(CortexError, match=expected):
        apply(module, (CanonicalizePass(), SmootherPass()), frames=3)


def test_l2_power_save_pipeline_is_valid():
    module = build_l2_pipeline(96, 128, 32)
    pipeline = "canonicalize,cortex-specialize-mode{mode=power_save},canonicalize,dce"
    assert validate_pipeline(module, pipeline, mode="power_save") is None
    # given another mode, the comparison switches to power_save at the pass that specialises
    callback = apply(module.clone(), tuple(PassPipeline.parse_spec(all_passes(), pipeline).passes), mode="balanced")
    assert callback.notes == [
        "after pass 'cortex-specialize-mode{mode=\"power_save\"}': "
        "comparing with @l2_frame in mode 'power_save' from here on"
    ]
    assert len(callback.checked) == 4


def test_wrong_weights_are_caught():
    """A 'specialisation' that bakes in the wrong weights (not mode power_save's) is named."""
    module = build_l2_pipeline(96, 128, 32)
    expected = r"^pass 'test-wrong-weights' changed the results of @l2_frame: .*output #1 differs by"
    with pytest.raises(CortexError, match=expected):
        apply(module, (WrongWeightsPass(),), mode="balanced", frames=2)


def test_partition_and_profile_keep_the_results():
    module = build_l2_pipeline(96, 128, 32)
    assert validate_pipeline(module, "cortex-profile{frames=1},cortex-partition,cse,cortex-partition", frames=2) is None
    graph_module, entry = graph("conv_bn")
    assert validate_pipeline(graph_module, "cortex-partition,cortex-profile{frames=1}", entry=entry) is None


def test_validate_pipeline_leaves_the_module_alone():
    module, entry = graph("gelu_tanh")
    before = str(module)
    assert validate_pipeline(module, "canonicalize,cse,dce", entry=entry) is None
    assert str(module) == before


def test_validate_pipeline_rejects_a_bad_pipeline():
    module, entry = graph("gelu_tanh")
    with pytest.raises(CortexError, match="bad pass pipeline 'no-such-pass'"):
        validate_pipeline(module, "no-such-pass", entry=entry)


def test_unrunnable_ir_is_skipped_with_a_note():
    module, entry = graph("unoptimized_model")
    callback = apply(module, (AddUnrunnableOpPass(), CanonicalizePass()), entry=entry)
    assert callback.notes == [
        "after pass 'test-add-tensor-empty': not checked, it contains 'tensor.empty', "
        "which the reference interpreter does not run"
    ]
    # canonicalize removes the unused tensor.empty: runnable again, so checked again
    assert callback.checked == ["canonicalize"]


def test_a_pass_that_breaks_the_entry_is_named():
    module, entry = graph("linear_bn")
    with pytest.raises(CortexError, match=r"^pass 'test-drop-entry' broke @linear_bn: @linear_bn is gone"):
        apply(module, (DropEntryPass(),), entry=entry)


def test_unrunnable_input_module_is_an_error():
    module, entry = graph("linear_bn")
    AddUnrunnableOpPass().apply(make_context(), module)
    with pytest.raises(CortexError, match="cannot validate: .* 'tensor.empty'"):
        SemanticsCallback(module, entry=entry)


def test_inputs_are_frames_for_l2_and_seeded_arrays_for_graphs():
    l2 = SemanticsCallback(build_l2_pipeline(96, 128, 32), frames=2)
    assert [args[0].shape for args in l2.inputs] == [(96, 128, 3)] * 2 and l2.inputs[0][0].dtype == np.uint8
    module, entry = graph("conv_bn")
    a, b = SemanticsCallback(module, frames=2, entry=entry), SemanticsCallback(module, frames=2, entry=entry)
    assert a.inputs[0][0].shape == (1, 3, 16, 16) and a.inputs[0][0].dtype == np.float32
    assert np.array_equal(a.inputs[1][0], b.inputs[1][0]) and not np.array_equal(a.inputs[0][0], a.inputs[1][0])


# ---- the comparison ------------------------------------------------------


def test_difference_of_floats():
    x = np.zeros((3, 4), np.float32)
    assert difference(x, x + 5e-5) is None
    y = x.copy()
    y[2, 1] = 0.25
    assert difference(x, y) == "differs by 0.25 at [2, 1]"
    assert difference(x, np.zeros((4, 3), np.float32)) == "has shape (4, 3), expected (3, 4)"
    nan = np.full(2, np.nan, np.float32)
    assert difference(nan, nan.copy()) is None
    assert difference(nan, np.zeros(2, np.float32)) == "differs by inf at [0]"
    assert difference(1.0, 1.00001) is None
    assert difference(1.0, 1.5).startswith("differs by 0.5")


def test_difference_of_integers_is_exact():
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = a.copy()
    b[1, 2] = 7
    assert difference(a, a.copy()) is None
    assert difference(a, b) == "differs at [1, 2] (7 instead of 5)"


def test_difference_of_jpeg_bytes():
    rng = np.random.default_rng(0)
    image = cv2.GaussianBlur(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8), (0, 0), 3)
    jpeg = lambda img, q=85: cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])[1].ravel()  # noqa: E731
    assert difference(jpeg(image), jpeg(image)) is None
    nudged = image.copy()
    nudged[0:8, 0:8] ^= 1  # a one-gray-level change in one corner: the same picture
    assert difference(jpeg(image), jpeg(nudged)) is None
    other = 255 - image
    assert difference(jpeg(image), jpeg(other)).startswith("decodes to an image that differs by")
    assert difference(jpeg(image), jpeg(image[:32])).startswith("decodes to an image of shape (32, 64, 3)")
    assert "not both decodable" in difference(jpeg(image), np.zeros(10, np.uint8))
