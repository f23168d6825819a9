"""cortex-convert-layout on grouped and depthwise convolutions: channels-last, the same results.

Hypothesis draws the groups, the channels per group, the filters per group (a depthwise conv's
channel multiplier when there is one channel per group), kernel, stride, padding (asymmetric too),
dilation and bias. For each draw:

- the pass converts the conv (no NCHW `cortex.conv2d` left) and the reference interpreter gives the
  same values before and after it (up to the order of the sums);
- the converted module compiled by the NumPy backend, and the ONNX Conv compiled by the IREE backend
  (whose legalisation runs the pass), equal ONNX Runtime within 1e-4.

Plus: the lowered depthwise form is upstream's `linalg.depthwise_conv_2d_nhwc_hwc` for `mlir-opt`,
and a MobileNet block (depthwise + pointwise + ReLU6) equals ONNX Runtime on NumPy and IREE.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from helpers.onnx_oracle import onnx_runtime
from helpers.pipelines import EVERY_RUN_ON_IREE
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import cortex
from cortex.backends.mlir.upstream import mlir_opt, mlir_opt_available
from cortex.dialects import layout as lay
from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx import ENTRY, from_onnx
from cortex.frontends.onnx_models import mobilenet_block, sample_input
from cortex.ir import to_text

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def grouped_convs(draw) -> dict:
    groups = draw(st.integers(2, 4))
    per_group = draw(st.integers(1, 3))  # input channels per group: 1 is depthwise
    filters = draw(st.integers(1, 3))  # output channels per group: a depthwise conv's multiplier
    kernel = draw(st.integers(1, 3))
    dilation = draw(st.integers(1, 2))
    pads = draw(st.lists(st.integers(0, kernel - 1), min_size=4, max_size=4))
    side = draw(st.integers(dilation * (kernel - 1) + 1, 7))
    return {
        "batch": draw(st.integers(1, 2)), "channels": groups * per_group, "out": groups * filters, "group": groups,
        "kernel": kernel, "side": side, "strides": [draw(st.integers(1, 2)), draw(st.integers(1, 2))], "pads": pads,
        "dilations": [dilation] * 2, "bias": draw(st.booleans()), "seed": draw(st.integers(0, 2**16)),
    }


def conv_model(p: dict):
    """One ONNX Conv with `p`'s attributes and seeded weights (an initializer: constant at import)."""
    rng = np.random.default_rng(p["seed"])
    weight = rng.standard_normal((p["out"], p["channels"] // p["group"], p["kernel"], p["kernel"])).astype(np.float32)
    inits = [numpy_helper.from_array(weight, "w")]
    inputs = ["x", "w"]
    if p["bias"]:
        inits.append(numpy_helper.from_array(rng.standard_normal(p["out"]).astype(np.float32), "b"))
        inputs.append("b")
    node = helper.make_node("Conv", inputs, ["y"], group=p["group"], kernel_shape=[p["kernel"]] * 2,
                            strides=p["strides"], pads=p["pads"], dilations=p["dilations"])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [p["batch"], p["channels"], p["side"], p["side"]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], "grouped", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def sample(p: dict) -> np.ndarray:
    shape = (p["batch"], p["channels"], p["side"], p["side"])
    return np.random.default_rng(p["seed"] + 1).standard_normal(shape).astype(np.float32)


def converted(module):
    copy = module.clone()
    cortex.run_passes(copy, "cortex-convert-layout{layout=nhwc report=false},canonicalize")
    return copy


@SETTINGS
@given(grouped_convs())
def test_pass_converts_grouped_conv_and_keeps_values(p):
    module = from_onnx(conv_model(p))
    after = converted(module)
    kinds = [type(op) for op in after.walk()]
    assert ops.Conv2dOp not in kinds and kinds.count(lay.Conv2dNhwcOp) == 1
    (conv,) = [op for op in after.walk() if isinstance(op, lay.Conv2dNhwcOp)]
    assert conv.group.value.data == p["group"]
    x = sample(p)
    (want,) = cortex.reference(module, entry=ENTRY, mode=None)(x)
    (got,) = cortex.reference(after, entry=ENTRY, mode=None)(x)
    assert_f32_close(got, want, ulps=ACCUMULATED)  # the NHWC kernel: the NCHW one on transposed data (sums reordered)


DEPTHWISE_STRIDED_ACROSS = {"batch": 1, "channels": 3, "out": 6, "group": 3, "kernel": 3, "side": 7, "strides": [1, 2],
                            "pads": [1, 0, 1, 2], "dilations": [1, 1], "bias": False, "seed": 11}
"""A depthwise conv (multiplier 2) whose stride differs between height and width."""


@SETTINGS
@given(grouped_convs())
@example(DEPTHWISE_STRIDED_ACROSS)
@example({**DEPTHWISE_STRIDED_ACROSS, "out": 3, "strides": [2, 1]})
def test_converted_grouped_conv_on_numpy_equals_onnx_runtime(p):
    model = conv_model(p)
    x = sample(p)
    (want,) = onnx_runtime(model, {"x": x})
    (got,) = cortex.compile(converted(from_onnx(model)), entry=ENTRY, mode=None)(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    assert_f32_close(got, want, ulps=ACCUMULATED, scale=float(np.abs(want).max()) + 1.0)


GROUPED_WITH_BIAS = {"batch": 1, "channels": 8, "out": 8, "group": 2, "kernel": 3, "side": 6, "strides": [1, 1],
                     "pads": [1, 1, 1, 1], "dilations": [1, 1], "bias": True, "seed": 5}
"""A grouped conv with a constant bias: its per-group lowering once inserted the groups into the broadcast bias,
which IREE hoists to a global and then refused to write ("write affecting operations on global resources")."""


@pytest.mark.slow
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(grouped_convs())
@example(GROUPED_WITH_BIAS)
def test_grouped_conv_on_iree_equals_onnx_runtime(p):
    pytest.importorskip("iree.compiler")
    model = conv_model(p)
    x = sample(p)
    (want,) = onnx_runtime(model, {"x": x})
    with pytest.MonkeyPatch.context() as mp:
        for key, value in EVERY_RUN_ON_IREE.items():
            mp.setenv(key, value)
        (got,) = cortex.compile(from_onnx(model), entry=ENTRY, mode=None, backend="iree")(x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
@pytest.mark.parametrize("multiplier, named", [(1, "depthwise_conv_2d_nhwc_hwc"), (2, "depthwise_conv_2d_nhwc_hwcm")])
def test_lowered_depthwise_conv_is_upstreams_named_op(multiplier, named):
    p = {"batch": 1, "channels": 4, "out": 4 * multiplier, "group": 4, "kernel": 3, "side": 6, "strides": [2, 2],
         "pads": [1, 1, 1, 1], "dilations": [1, 1], "bias": True, "seed": 3}
    lowered = cortex.lower(converted(from_onnx(conv_model(p))))
    out = mlir_opt(to_text(lowered, generic=True), "--linalg-specialize-generic-ops")
    assert f"linalg.{named} " in out


def mobilenet_check(backend: str) -> None:
    model = mobilenet_block(channels=8, side=12)
    x = sample_input(model)
    (want,) = onnx_runtime(model, {"x": x})
    (got,) = cortex.compile(from_onnx(model), entry=ENTRY, mode=None, backend=backend)(x)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-4, atol=1e-5)


def test_mobilenet_block_converts_every_conv():
    after = converted(from_onnx(mobilenet_block(channels=8, side=12)))
    kinds = [type(op) for op in after.walk()]
    assert ops.Conv2dOp not in kinds and kinds.count(lay.Conv2dNhwcOp) == 4
    transposes = [op for op in after.walk() if isinstance(op, ops.TransposeOp)]
    assert len(transposes) == 1  # the input's: the mean over H and W reduces the channels-last map


def test_mobilenet_block_on_numpy_equals_onnx_runtime():
    mobilenet_check("numpy")


@pytest.mark.slow
def test_mobilenet_block_on_iree_equals_onnx_runtime(monkeypatch):
    pytest.importorskip("iree.compiler")
    for key, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(key, value)
    mobilenet_check("iree")
