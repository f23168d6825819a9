"""Whole blocks of real architectures, built with onnx.helper, equal to ONNX Runtime on NumPy and on IREE.

A MobileNetV2 inverted-residual stack (1×1 expand, depthwise 3×3, 1×1 project, BatchNormalization,
Clip(0, 6), the residual Add), a ResNet-18-style stage with a grouped 3×3 convolution and a strided
downsample, a two-head transformer encoder layer (LayerNormalization, attention with Softmax, an
Erf-GELU feed-forward) and a small U-Net block (max-pool down, Resize up, Concat of the skip). Each is
compared with ONNX Runtime within 1e-4 at a static batch and at a symbolic one (run at two batch sizes).
The IREE runs are slow (one IREE compile per model and batch size): marked `slow`, models kept tiny.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from helpers.onnx_oracle import onnx_runtime
from helpers.pipelines import EVERY_RUN_ON_IREE
from onnx import TensorProto, helper, numpy_helper

import cortex
from cortex.frontends.onnx import ENTRY, from_onnx


class Graph:
    """Nodes and seeded initializers of one model under construction."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self.count = 0

    def name(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def tensor(self, value, stem: str = "c") -> str:
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def weight(self, *shape: int, fan_in: int) -> str:
        return self.tensor((self.rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), "w")

    def op(self, op_type: str, *inputs: str, **attrs) -> str:
        out = self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [out], **attrs))
        return out

    def conv_bn(self, x: str, cin: int, cout: int, k: int, stride: int = 1, group: int = 1) -> str:
        w = self.weight(cout, cin // group, k, k, fan_in=cin // group * k * k)
        y = self.op("Conv", x, w, pads=[k // 2] * 4, strides=[stride, stride], group=group)
        scale = self.tensor(self.rng.uniform(0.5, 1.5, cout).astype(np.float32))
        bias = self.tensor(self.rng.uniform(-0.2, 0.2, cout).astype(np.float32))
        mean = self.tensor(self.rng.uniform(-0.2, 0.2, cout).astype(np.float32))
        var = self.tensor(self.rng.uniform(0.5, 1.5, cout).astype(np.float32))
        return self.op("BatchNormalization", y, scale, bias, mean, var)

    def relu6(self, x: str) -> str:
        return self.op("Clip", x, self.tensor(np.float32(0.0)), self.tensor(np.float32(6.0)))

    def model(self, x_shape: list, y: str, opset: int = 17) -> onnx.ModelProto:
        assert self.nodes[-1].output[0] == y, "the output is the last node's"
        self.nodes[-1].output[0] = "y"
        graph = helper.make_graph(
            self.nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], self.inits,
        )
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def mobilenet_v2_stack(batch, channels=8, expand=3, side=8) -> onnx.ModelProto:
    g = Graph(1)
    x = "x"
    for stride, cout in ((1, channels), (2, 2 * channels)):
        hidden = channels * expand
        h = g.relu6(g.conv_bn(x, channels, hidden, 1))
        h = g.relu6(g.conv_bn(h, hidden, hidden, 3, stride=stride, group=hidden))  # depthwise
        h = g.conv_bn(h, hidden, cout, 1)
        x = g.op("Add", h, x) if stride == 1 and cout == channels else h
        channels = cout
    pooled = g.op("Flatten", g.op("GlobalAveragePool", x))
    y = g.op("Gemm", pooled, g.weight(5, channels, fan_in=channels), g.tensor(np.zeros(5, np.float32)), transB=1)
    return g.model([batch, 8, side, side], y)


def resnet_stage(batch, channels=16, groups=4, side=8) -> onnx.ModelProto:
    g = Graph(2)
    x = "x"
    for stride, cout in ((1, channels), (2, 2 * channels)):
        h = g.op("Relu", g.conv_bn(x, channels, cout, 3, stride=stride, group=groups))
        h = g.conv_bn(h, cout, cout, 3)
        skip = x if stride == 1 else g.conv_bn(x, channels, cout, 1, stride=stride)
        x = g.op("Relu", g.op("Add", h, skip))
        channels = cout
    return g.model([batch, 16, side, side], x)


def layer_norm(g: Graph, x: str, d: int) -> str:
    scale = g.tensor(g.rng.uniform(0.5, 1.5, d).astype(np.float32))
    return g.op("LayerNormalization", x, scale, g.tensor(g.rng.uniform(-0.1, 0.1, d).astype(np.float32)), epsilon=1e-5)


def linear(g: Graph, x: str, din: int, dout: int) -> str:
    return g.op("Add", g.op("MatMul", x, g.weight(din, dout, fan_in=din)), g.tensor(np.zeros(dout, np.float32) + 0.01))


def attention(g: Graph, x: str, tokens: int, d: int, heads: int) -> str:
    dh = d // heads

    def split_heads(v: str, perm: list[int]) -> str:
        return g.op("Transpose", g.op("Reshape", v, g.tensor(np.array([0, tokens, heads, dh], np.int64))), perm=perm)

    q = split_heads(linear(g, x, d, d), [0, 2, 1, 3])
    k = split_heads(linear(g, x, d, d), [0, 2, 3, 1])
    v = split_heads(linear(g, x, d, d), [0, 2, 1, 3])
    scores = g.op("Div", g.op("MatMul", q, k), g.tensor(np.float32(np.sqrt(dh))))
    mixed = g.op("MatMul", g.op("Softmax", scores, axis=-1), v)
    merged = g.op("Reshape", g.op("Transpose", mixed, perm=[0, 2, 1, 3]), g.tensor(np.array([0, tokens, d], np.int64)))
    return linear(g, merged, d, d)


def erf_gelu(g: Graph, x: str) -> str:
    e = g.op("Erf", g.op("Div", x, g.tensor(np.float32(np.sqrt(2.0)))))
    return g.op("Mul", g.op("Mul", x, g.op("Add", e, g.tensor(np.float32(1.0)))), g.tensor(np.float32(0.5)))


def transformer_layer(batch, tokens=6, d=16, heads=2) -> onnx.ModelProto:
    g = Graph(3)
    h = g.op("Add", "x", attention(g, layer_norm(g, "x", d), tokens, d, heads))
    ffn = linear(g, erf_gelu(g, linear(g, layer_norm(g, h, d), d, 2 * d)), 2 * d, d)
    return g.model([batch, tokens, d], g.op("Add", h, ffn))


def unet_block(batch, side=8) -> onnx.ModelProto:
    g = Graph(4)
    enc = g.op("Relu", g.op("Conv", "x", g.weight(8, 4, 3, 3, fan_in=36), pads=[1, 1, 1, 1]))
    down = g.op("MaxPool", enc, kernel_shape=[2, 2], strides=[2, 2])
    mid = g.op("Relu", g.op("Conv", down, g.weight(16, 8, 3, 3, fan_in=72), pads=[1, 1, 1, 1]))
    up = g.op("Resize", mid, "", g.tensor(np.array([1, 1, 2, 2], np.float32)), mode="linear")
    joined = g.op("Concat", up, enc, axis=1)
    dec = g.op("Relu", g.op("Conv", joined, g.weight(8, 24, 3, 3, fan_in=216), pads=[1, 1, 1, 1]))
    y = g.op("Conv", dec, g.weight(2, 8, 1, 1, fan_in=8))
    return g.model([batch, 4, side, side], y)


ARCHITECTURES = {
    "mobilenet_v2": (mobilenet_v2_stack, (8, 8, 8)),
    "resnet_grouped": (resnet_stage, (16, 8, 8)),
    "transformer": (transformer_layer, (6, 16)),
    "unet": (unet_block, (4, 8, 8)),
}


def check(name: str, symbolic: bool, backend: str) -> None:
    build, shape = ARCHITECTURES[name]
    batches = (1, 3) if symbolic else (2,)
    model = build("N" if symbolic else 2)
    compiled = cortex.compile(from_onnx(model), entry=ENTRY, mode=None, backend=backend)
    rng = np.random.default_rng(7)
    for batch in batches:
        x = rng.standard_normal((batch, *shape)).astype(np.float32)
        (want,) = onnx_runtime(model, {"x": x})
        got = np.asarray(compiled(x)[0])
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("symbolic", [False, True], ids=["static", "symbolic"])
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_block_equals_onnx_runtime_on_numpy(name, symbolic):
    check(name, symbolic, "numpy")


@pytest.mark.slow
@pytest.mark.parametrize("symbolic", [False, True], ids=["static", "symbolic"])
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_block_equals_onnx_runtime_on_iree(name, symbolic, monkeypatch):
    pytest.importorskip("iree.compiler")
    for key, value in EVERY_RUN_ON_IREE.items():
        monkeypatch.setenv(key, value)
    check(name, symbolic, "iree")


def test_the_blocks_use_the_operators_they_are_named_for():
    """The models are what their names say (a test of the builders): depthwise and grouped convs, Clip, Erf, Resize."""
    ops = {name: [(n.op_type, {a.name: helper.get_attribute_value(a) for a in n.attribute}) for n in build(2).graph.node]
           for name, (build, _) in ARCHITECTURES.items()}
    assert any(t == "Conv" and a.get("group") == 24 for t, a in ops["mobilenet_v2"])
    assert any(t == "Clip" for t, _ in ops["mobilenet_v2"])
    assert any(t == "Conv" and a.get("group") == 4 for t, a in ops["resnet_grouped"])
    assert {"LayerNormalization", "Erf", "Softmax"} <= {t for t, _ in ops["transformer"]}
    assert {"Resize", "Concat", "MaxPool"} <= {t for t, _ in ops["unet"]}
