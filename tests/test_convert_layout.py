"""cortex-convert-layout{layout=nhwc}: fewer transposes, the same results, on every backend."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.backends.mlir.upstream import mlir_opt_available, verify_with_mlir_opt
from cortex.dialects import layout as lay
from cortex.dialects import tensor_ops as ops
from cortex.examples.small_cnn import ENTRY, build_small_cnn, small_cnn_inputs
from cortex.ir import parse, parse_module, verify_located
from cortex.passes.convert_layout import convert_layout

INPUTS = small_cnn_inputs(4)


def transposes(module) -> int:
    return sum(1 for op in module.walk() if isinstance(op, ops.TransposeOp))


@pytest.fixture(scope="module")
def cnn_pair():
    module = build_small_cnn()
    converted = module.clone()
    cortex.run_passes(converted, "cortex-convert-layout{layout=nhwc},canonicalize")
    return module, converted


def test_cnn_has_at_most_two_transposes_and_runs_nhwc(cnn_pair):
    _, converted = cnn_pair
    assert transposes(converted) <= 2
    kinds = [type(op) for op in converted.walk()]
    assert kinds.count(lay.Conv2dNhwcOp) == 3 and kinds.count(lay.MaxPoolNhwcOp) == 1
    assert ops.Conv2dOp not in kinds and ops.MaxPoolOp not in kinds


def test_cnn_results_are_unchanged_on_every_backend(cnn_pair):
    module, converted = cnn_pair
    before = cortex.reference(module, entry=ENTRY, mode=None)
    after = cortex.reference(converted, entry=ENTRY, mode=None)
    compiled = cortex.compile(converted, entry=ENTRY, mode=None)
    for x in INPUTS:
        (want,) = before(x)
        assert_f32_close(after(x)[0], want, ulps=ACCUMULATED)
        assert_f32_close(compiled(x)[0], want, ulps=ACCUMULATED)


@pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
def test_lowered_nhwc_cnn_verifies_in_mlir_opt(cnn_pair):
    verify_with_mlir_opt(cortex.lower(cnn_pair[1]))


def test_report_counts_transposes():
    module = build_small_cnn()
    report = convert_layout(module)
    assert (report.before, report.after) == (0, 2)
    assert report.converted.count("conv2d") == 3
    assert str(report) == "[convert-layout] to NHWC: 3 conv2d, 1 max_pool; transposes 0 -> 2"


def test_weights_are_transposed_at_compile_time(cnn_pair):
    _, converted = cnn_pair
    for op in converted.walk():
        if isinstance(op, lay.Conv2dNhwcOp):
            assert isinstance(op.weight.owner, ops.ConstantOp)


# ---------------------------------------------------------------- random chains


def chain_module(c: int, hw: int, steps: list[str], seed: int) -> str:
    """A random NCHW chain of image and elementwise ops, as text."""
    rng = np.random.default_rng(seed)
    lines, shape, value, k = [], (1, c, hw, hw), "%x", 0

    def t(s):
        return f"tensor<{'x'.join(map(str, s))}xf32>"

    for step in steps:
        k += 1
        n, ch, h, w = shape
        if step == "conv":
            o = int(rng.integers(1, 4))
            weights = ", ".join(f"{v:.3f}" for v in rng.uniform(-1, 1, o * ch * 9))
            lines.append(f'%w{k} = "cortex.constant"() <{{value = dense<[{weights}]> : tensor<{o * ch * 9}xf32>}}> : () -> tensor<{o * ch * 9}xf32>')
            lines.append(f"%wr{k} = cortex.reshape %w{k} : tensor<{o * ch * 9}xf32> -> {t((o, ch, 3, 3))}")
            out = (n, o, h, w)
            lines.append(
                f"%v{k} = cortex.conv2d {value}, %wr{k} {{pads = array<i64: 1, 1, 1, 1>}} : ({t(shape)}, {t((o, ch, 3, 3))}) -> {t(out)}"
            )
        elif step in ("max", "avg") and h >= 2:
            out = (n, ch, h // 2 + 1, w // 2 + 1)
            lines.append(
                f"%v{k} = cortex.{step}_pool {value} {{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, "
                f"pads = array<i64: 1, 1, 1, 1>}} : {t(shape)} -> {t(out)}"
            )
        elif step == "bn":
            vals = ", ".join(f"{v:.3f}" for v in rng.uniform(0.5, 1.5, ch))
            lines.append(f"%s{k} = cortex.constant dense<[{vals}]> : tensor<{ch}xf32>")
            lines.append(
                f"%v{k} = cortex.batch_norm {value}, %s{k}, %s{k}, %s{k}, %s{k} : ({t(shape)}, tensor<{ch}xf32>, "
                f"tensor<{ch}xf32>, tensor<{ch}xf32>, tensor<{ch}xf32>) -> {t(shape)}"
            )
            out = shape
        elif step == "addc":
            vals = ", ".join(f"[[{v:.3f}]]" for v in rng.uniform(-1, 1, ch))
            lines.append(f"%c{k} = cortex.constant dense<[{vals}]> : tensor<{ch}x1x1xf32>")
            lines.append(f"%v{k} = cortex.add {value}, %c{k} : ({t(shape)}, tensor<{ch}x1x1xf32>) -> {t(shape)}")
            out = shape
        else:
            lines.append(f"%v{k} = cortex.tanh {value} : {t(shape)} -> {t(shape)}")
            out = shape
        value, shape = f"%v{k}", out
    body = "\n  ".join(lines)
    return f"func.func @f(%x: {t((1, c, hw, hw))}) -> {t(shape)} {{\n  {body}\n  func.return {value} : {t(shape)}\n}}"


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(
    c=st.integers(1, 3),
    hw=st.integers(3, 6),
    steps=st.lists(st.sampled_from(["conv", "max", "avg", "bn", "addc", "tanh"]), min_size=1, max_size=5),
    seed=st.integers(0, 1000),
)
def test_random_chains_keep_their_results(c, hw, steps, seed):
    text = chain_module(c, hw, steps, seed)
    module = parse(text)
    converted = module.clone()
    report = convert_layout(converted)
    cortex.run_passes(converted, "canonicalize")
    converted.verify()
    x = np.random.default_rng(seed).standard_normal((1, c, hw, hw)).astype(np.float32)
    (want,) = cortex.reference(module, entry="f", mode=None)(x)
    assert_f32_close(cortex.reference(converted, entry="f", mode=None)(x)[0], want, ulps=ACCUMULATED)
    assert_f32_close(cortex.compile(converted, entry="f", mode=None)(x)[0], want, ulps=ACCUMULATED)
    image_ops = sum(s in ("conv", "max", "avg", "bn") for s in steps)
    assert transposes(converted) <= (2 if image_ops else 0)
    assert report.after >= transposes(converted)  # canonicalize may fold weight transposes it leaves


def test_dilated_pool_stays_nchw_and_keeps_its_result():
    """Regression (found running ONNX's test_maxpool_2d_dilations on the IREE backend, which converts
    layouts): the NHWC pooling ops have no dilations, so converting a dilated pool dropped them and the
    function no longer verified. It now stays NCHW."""
    module = parse_module("""
    func.func @f(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
      %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, dilations = array<i64: 2, 2>} : tensor<1x1x4x4xf32> -> tensor<1x1x2x2xf32>
      func.return %y : tensor<1x1x2x2xf32>
    }""")
    converted = module.clone()
    convert_layout(converted, "nhwc")
    verify_located(converted)
    assert not any(isinstance(op, lay.MaxPoolNhwcOp) for op in converted.walk())
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)
    want = cortex.reference(module, entry="f", mode=None)(x)[0]
    np.testing.assert_array_equal(cortex.reference(converted, entry="f", mode=None)(x)[0], want)
    np.testing.assert_array_equal(want, np.array([[[[10, 11], [14, 15]]]], np.float32))
