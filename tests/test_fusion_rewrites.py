"""cortex-fuse-batch-norm and cortex-recognize-gelu on the example graphs:
the reference interpreter gives the same results before and after, the op
counts drop as expected, and the passes compose with canonicalize/cse/dce
and the lowering to the NumPy backend."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close

import cortex
from cortex.driver import run_passes
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import parse_module
from cortex.passes.fuse_batch_norm import CONV_BN, LINEAR_BN
from cortex.passes.recognize_gelu import GELU_TANH
from cortex.rewriting.pattern import explain, match

FUSIONS = "cortex-fuse-batch-norm,cortex-recognize-gelu"
SEEDS = (0, 1, 2)

# example → (pass, cortex op counts after it)
EXPECTED = {
    "linear_bn": ("cortex-fuse-batch-norm", {"cortex.constant": 2, "cortex.linear": 1}),
    "conv_bn": ("cortex-fuse-batch-norm", {"cortex.constant": 2, "cortex.conv2d": 1}),
    "gelu_tanh": ("cortex-recognize-gelu", {"cortex.gelu": 1}),
}


def cortex_ops(module) -> Counter:
    return Counter(op.name for op in module.walk() if op.name.startswith("cortex."))


def load(name: str):
    spec = EXAMPLES[name]
    return spec, parse_module(spec.text(), str(spec.path))


def assert_same(actual, expected) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        assert_f32_close(np.asarray(a), np.asarray(e), ulps=ACCUMULATED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_pass_preserves_reference_results_and_removes_ops(name):
    spec, before = load(name)
    pass_name, counts = EXPECTED[name]
    after = run_passes(load(name)[1], pass_name)
    after.verify()
    assert cortex_ops(after) == Counter(counts)
    assert sum(cortex_ops(after).values()) < sum(cortex_ops(before).values())
    run_before = cortex.reference(before, entry=spec.entry, mode=None)
    run_after = cortex.reference(after, entry=spec.entry, mode=None)
    for seed in SEEDS:
        inputs = spec.make_inputs(seed)
        expected = run_before(*inputs)
        assert_same(run_after(*inputs), expected)
        assert_same(run_after(*inputs), spec.numpy_reference(*inputs))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_both_passes_compose_with_canonicalize_cse_dce(name):
    spec, before = load(name)
    after = run_passes(load(name)[1], f"canonicalize,{FUSIONS},canonicalize,cse,dce")
    after.verify()
    assert cortex_ops(after) == Counter(EXPECTED[name][1])
    inputs = spec.make_inputs(3)
    assert_same(cortex.reference(after, entry=spec.entry, mode=None)(*inputs), spec.numpy_reference(*inputs))


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_compiled_after_fusion_equals_reference(name):
    spec, module = load(name)
    compiled = cortex.compile(load(name)[1], entry=spec.entry, mode=None, passes=FUSIONS)
    reference = cortex.reference(module, entry=spec.entry, mode=None)
    inputs = spec.make_inputs(4)
    assert_same(compiled(*inputs), reference(*inputs))


def test_passes_leave_unrelated_examples_alone():
    """unoptimized_model has none of the fused shapes: the passes change nothing."""
    spec, module = load("unoptimized_model")
    text = cortex.to_text(module)
    assert cortex.to_text(run_passes(module, FUSIONS)) == text


def test_declarative_before_after_check():
    """Declarative pass testing: the linear–batch_norm pair matches before, not after."""
    _, module = load("linear_bn")
    (root,) = [op for op in module.walk() if op.name == "func.return"]
    assert match(LINEAR_BN, root.operands[0]) is not None
    assert match(CONV_BN, root.operands[0]) is None
    assert "expected cortex.conv2d, found %y = cortex.linear" in explain(CONV_BN, root.operands[0])
    run_passes(module, "cortex-fuse-batch-norm")
    (root,) = [op for op in module.walk() if op.name == "func.return"]
    assert match(LINEAR_BN, root.operands[0]) is None
    assert "expected cortex.batch_norm, found %out = cortex.linear" in explain(LINEAR_BN, root.operands[0])


def test_gelu_explain_names_the_near_miss_constant():
    text = EXAMPLES["gelu_tanh"].text().replace("dense<0.7978845608>", "dense<0.7978>")
    module = parse_module(text)
    (root,) = [op for op in module.walk() if op.name == "func.return"]
    assert match(GELU_TANH, root.operands[0]) is None
    message = explain(GELU_TANH, root.operands[0])
    assert "expected Const(0.7978845608028654 ± 1e-06), found %c = cortex.constant holding" in message
    assert cortex_ops(run_passes(module, "cortex-recognize-gelu"))["cortex.gelu"] == 0


def test_batch_norm_without_linear_bias():
    """The optional bias: a linear without one folds with b = 0."""
    spec, module = load("linear_bn")
    text = spec.text().replace(
        "%y = cortex.linear %x, %weight, %bias : (tensor<4x16xf32>, tensor<8x16xf32>, tensor<8xf32>)",
        "%y = cortex.linear %x, %weight : (tensor<4x16xf32>, tensor<8x16xf32>)",
    )
    before = parse_module(text)
    after = run_passes(parse_module(text), "cortex-fuse-batch-norm")
    # The file's %bias constant, now unused from the start, is dce's business, not the pass's.
    assert cortex_ops(after) == Counter({"cortex.constant": 3, "cortex.linear": 1})
    (linear,) = [op for op in after.walk() if op.name == "cortex.linear"]
    assert linear.bias is not None and linear.bias.name_hint == "fused_bias"
    inputs = spec.make_inputs(5)
    assert_same(
        cortex.reference(after, entry=spec.entry, mode=None)(*inputs),
        cortex.reference(before, entry=spec.entry, mode=None)(*inputs),
    )
