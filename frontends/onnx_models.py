"""Small ONNX models (CNNs and an MLP), built with `onnx.helper` (seeded weights).

They are what the ONNX tests and the ONNX Runtime benchmark import:

- `cnn()`: conv-relu ×2, max-pool, conv-relu, reshape, linear (Gemm), softmax on 1×3×16×16;
- `mlp()`: three Gemm layers with relu between, softmax, on 1×64;
- `cnn_large()`: six conv3×3-relu to 128 channels with three max-pools, global mean, Gemm, softmax
  on 1×3×128×128 (~0.28 GFLOP: where per-call overhead no longer hides the kernels' speed);
- `mobilenet_block()`: two MobileNet blocks (depthwise 3×3 + ReLU6, pointwise 1×1 + ReLU6; the second
  depthwise strided) on 1×32×56×56, global mean, Gemm, softmax.

    python -m cortex.frontends.onnx_models cnn cnn.onnx    # writes a model file
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


def _weights(rng: np.random.Generator, name: str, shape: tuple[int, ...], fan_in: int) -> onnx.TensorProto:
    value = (rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32)
    return numpy_helper.from_array(value, name)


def _model(nodes: Sequence[onnx.NodeProto], inputs: Sequence[onnx.ValueInfoProto], outputs: Sequence[onnx.ValueInfoProto],
           initializers: Sequence[onnx.TensorProto], name: str) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="cortex")
    model.ir_version = 8  # readable by older runtimes too
    onnx.checker.check_model(model)
    return model


def cnn(
    seed: int = 0, channels: tuple[int, int, int] = (8, 8, 16), classes: int = 10, batch: int | str = 1
) -> onnx.ModelProto:
    """conv3×3-relu, conv3×3-relu, maxpool 2×2, conv3×3-relu, reshape, Gemm, softmax; B×3×16×16 → B×classes
    (`batch` a number, or a symbolic dimension's name such as "N")."""
    rng = np.random.default_rng(seed)
    c1, c2, c3 = channels
    init = [
        _weights(rng, "w1", (c1, 3, 3, 3), 27),
        _weights(rng, "b1", (c1,), 27),
        _weights(rng, "w2", (c2, c1, 3, 3), 9 * c1),
        _weights(rng, "b2", (c2,), 9 * c1),
        _weights(rng, "w3", (c3, c2, 3, 3), 9 * c2),
        _weights(rng, "b3", (c3,), 9 * c2),
        _weights(rng, "fc_w", (classes, c3 * 8 * 8), c3 * 64),
        _weights(rng, "fc_b", (classes,), c3 * 64),
        numpy_helper.from_array(np.array([-1, c3 * 8 * 8] if isinstance(batch, str) else [batch, -1], np.int64), "flat_shape"),
    ]
    same: dict[str, Any] = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", **same),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", **same),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("MaxPool", ["r2"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p", "w3", "b3"], ["c3"], name="conv3", **same),
        helper.make_node("Relu", ["c3"], ["r3"], name="relu3"),
        helper.make_node("Reshape", ["r3", "flat_shape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 16, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, classes])
    return _model(nodes, [x], [y], init, "cnn")


def mlp(seed: int = 0, sizes: tuple[int, ...] = (64, 128, 128, 10), batch: int = 1) -> onnx.ModelProto:
    """Gemm-relu layers (weights N×K, transB=1) and a softmax; batch×sizes[0] → batch×sizes[-1]."""
    rng = np.random.default_rng(seed)
    nodes, init = [], []
    current = "x"
    for i, (k, n) in enumerate(zip(sizes, sizes[1:])):
        init += [_weights(rng, f"w{i}", (n, k), k), _weights(rng, f"b{i}", (n,), k)]
        nodes.append(helper.make_node("Gemm", [current, f"w{i}", f"b{i}"], [f"h{i}"], name=f"fc{i}", transB=1))
        current = f"h{i}"
        if i < len(sizes) - 2:
            nodes.append(helper.make_node("Relu", [current], [f"a{i}"], name=f"relu{i}"))
            current = f"a{i}"
    nodes.append(helper.make_node("Softmax", [current], ["y"], name="softmax", axis=-1))
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, sizes[0]])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, sizes[-1]])
    return _model(nodes, [x], [y], init, "mlp")


def cnn_large(seed: int = 0, classes: int = 10, batch: int = 1) -> onnx.ModelProto:
    """1×3×128×128 → 1×classes: conv(3→16)@128, pool, conv(16→32)@64, pool, conv(32→64), conv(64→64)@32, pool,
    conv(64→128), conv(128→128)@16 (each 3×3, pad 1, relu), mean over H and W, Gemm, softmax."""
    rng = np.random.default_rng(seed)
    plan = [(3, 16, True), (16, 32, True), (32, 64, False), (64, 64, True), (64, 128, False), (128, 128, False)]
    same: dict[str, Any] = {"pads": [1, 1, 1, 1], "kernel_shape": [3, 3]}
    nodes, init, current = [], [], "x"
    for i, (cin, cout, pool) in enumerate(plan):
        init += [_weights(rng, f"w{i}", (cout, cin, 3, 3), 9 * cin), _weights(rng, f"b{i}", (cout,), 9 * cin)]
        nodes.append(helper.make_node("Conv", [current, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", **same))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"], name=f"relu{i}"))
        current = f"r{i}"
        if pool:
            nodes.append(helper.make_node("MaxPool", [current], [f"p{i}"], name=f"pool{i}", kernel_shape=[2, 2], strides=[2, 2]))
            current = f"p{i}"
    init += [_weights(rng, "fc_w", (classes, 128), 128), _weights(rng, "fc_b", (classes,), 128)]
    nodes += [
        helper.make_node("ReduceMean", [current], ["mean"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("Gemm", ["mean", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 3, 128, 128])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, classes])
    return _model(nodes, [x], [y], init, "cnn_large" if batch == 1 else f"cnn_large_b{batch}")


def mobilenet_block(seed: int = 0, channels: int = 32, side: int = 56, classes: int = 10, batch: int = 1) -> onnx.ModelProto:
    """1×channels×side×side → 1×classes: [depthwise 3×3 (group = channels, pad 1) + ReLU6 (Clip 0..6), pointwise
    1×1 to twice the channels + ReLU6] twice, the second depthwise with stride 2; mean over H and W, Gemm, softmax."""
    rng = np.random.default_rng(seed)
    init = [numpy_helper.from_array(np.array(0.0, np.float32), "lo"), numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    nodes, current, c = [], "x", channels
    for i, stride in enumerate((1, 2)):
        init += [_weights(rng, f"dw{i}", (c, 1, 3, 3), 9), _weights(rng, f"db{i}", (c,), 9),
                 _weights(rng, f"pw{i}", (2 * c, c, 1, 1), c), _weights(rng, f"pb{i}", (2 * c,), c)]
        nodes += [
            helper.make_node("Conv", [current, f"dw{i}", f"db{i}"], [f"d{i}"], name=f"depthwise{i}", group=c,
                             kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride]),
            helper.make_node("Clip", [f"d{i}", "lo", "hi"], [f"dr{i}"], name=f"relu6_d{i}"),
            helper.make_node("Conv", [f"dr{i}", f"pw{i}", f"pb{i}"], [f"p{i}"], name=f"pointwise{i}", kernel_shape=[1, 1]),
            helper.make_node("Clip", [f"p{i}", "lo", "hi"], [f"pr{i}"], name=f"relu6_p{i}"),
        ]
        current, c = f"pr{i}", 2 * c
    init += [_weights(rng, "fc_w", (classes, c), c), _weights(rng, "fc_b", (classes,), c)]
    nodes += [
        helper.make_node("ReduceMean", [current], ["mean"], name="mean", axes=[2, 3], keepdims=0),
        helper.make_node("Gemm", ["mean", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["y"], name="softmax", axis=-1),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, channels, side, side])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, classes])
    return _model(nodes, [x], [y], init, "mobilenet_block")


MODELS: dict[str, Callable[..., onnx.ModelProto]] = {
    "cnn": cnn, "mlp": mlp, "cnn_large": cnn_large, "mobilenet_block": mobilenet_block,
}


def sample_input(model: onnx.ModelProto, seed: int = 1) -> np.ndarray:
    """A seeded float32 input of the model's (first) input shape."""
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    return np.random.default_rng(seed).standard_normal(dims).astype(np.float32)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in MODELS:
        sys.exit(f"usage: python -m cortex.frontends.onnx_models {{{','.join(MODELS)}}} OUT.onnx")
    onnx.save(MODELS[sys.argv[1]](), sys.argv[2])
