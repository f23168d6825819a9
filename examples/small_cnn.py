"""A small image classifier (a CNN) in the cortex dialect, with seeded weights.

    conv3x3(3→8)-relu, conv3x3(8→8)-relu, max-pool 2×2, conv3x3(8→16)-relu,
    reshape to 1×1024, linear(1024→10), softmax

on a 1×3×16×16 NCHW input. It is the workload of the quantisation, layout
and fusion work (tests and benchmarks): big enough to have every kind of
op a CNN has, small enough for the reference interpreter. The weights come
from a seeded RNG (He-normal), so every caller sees the same network;
`numpy_small_cnn` is an independent plain-NumPy formula of it.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

from cortex.dialects import tensor_ops as ops

ENTRY = "small_cnn"
INPUT_SHAPE = (1, 3, 16, 16)
CLASSES = 10
PARAM_SEED = 1111
INPUT_SEED = 2222


@cache
def small_cnn_params() -> dict[str, np.ndarray]:
    """The network's weights and biases (He-normal, seeded; read-only f32 arrays)."""
    rng = np.random.default_rng(PARAM_SEED)

    def he(shape: tuple[int, ...], fan_in: int) -> np.ndarray:
        return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)

    out = {
        "w1": he((8, 3, 3, 3), 27),
        "b1": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "w2": he((8, 8, 3, 3), 72),
        "b2": (rng.standard_normal(8) * 0.1).astype(np.float32),
        "w3": he((16, 8, 3, 3), 72),
        "b3": (rng.standard_normal(16) * 0.1).astype(np.float32),
        "w4": he((CLASSES, 1024), 1024),
        "b4": (rng.standard_normal(CLASSES) * 0.1).astype(np.float32),
    }
    for value in out.values():
        value.flags.writeable = False
    return out


def small_cnn_inputs(count: int, seed: int = INPUT_SEED) -> list[np.ndarray]:
    """`count` random inputs (standard normal, seeded), each 1×3×16×16 f32."""
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(INPUT_SHAPE).astype(np.float32) for _ in range(count)]


def _dense(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    array = np.ascontiguousarray(array, dtype="<f4")
    return DenseIntOrFPElementsAttr(TensorType(f32, list(array.shape)), BytesAttr(array.tobytes()))


def build_small_cnn() -> ModuleOp:
    """The CNN as a module with one function, `@small_cnn(tensor<1x3x16x16xf32>) -> tensor<1x10xf32>`."""
    p = small_cnn_params()
    block = Block(arg_types=[TensorType(f32, list(INPUT_SHAPE))])
    block.args[0].name_hint = "x"
    with ImplicitBuilder(block):

        def const(name: str):
            value = ops.ConstantOp(_dense(p[name])).result
            value.name_hint = name
            return value

        def named(value, name: str):
            value.name_hint = name
            return value

        pad1 = (1, 1, 1, 1)
        c1 = named(ops.Conv2dOp(block.args[0], const("w1"), const("b1"), pads=pad1).result, "conv1")
        r1 = named(ops.ReluOp(c1).result, "relu1")
        c2 = named(ops.Conv2dOp(r1, const("w2"), const("b2"), pads=pad1).result, "conv2")
        r2 = named(ops.ReluOp(c2).result, "relu2")
        pool = named(ops.MaxPoolOp(r2, kernel_shape=(2, 2), strides=(2, 2)).result, "pool")
        c3 = named(ops.Conv2dOp(pool, const("w3"), const("b3"), pads=pad1).result, "conv3")
        r3 = named(ops.ReluOp(c3).result, "relu3")
        flat = named(ops.ReshapeOp(r3, (1, 1024)).result, "flat")
        logits = named(ops.LinearOp(flat, const("w4"), const("b4")).result, "logits")
        probs = named(ops.SoftmaxOp(logits, axis=-1).result, "probs")
        func.ReturnOp(probs)
    function = func.FuncOp(ENTRY, ((block.args[0].type,), (probs.type,)), Region(block))
    module = ModuleOp([function])
    module.verify()
    return module


def numpy_small_cnn(x: np.ndarray) -> np.ndarray:
    """The same network in plain NumPy (float64), independent of the dialect's kernels."""
    p = {k: v.astype(np.float64) for k, v in small_cnn_params().items()}

    def conv(x, w, b):
        n, _, h, wd = x.shape
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        out = np.zeros((n, w.shape[0], h, wd))
        for i in range(3):
            for j in range(3):
                out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + h, j : j + wd], w[:, :, i, j])
        return out + b.reshape(1, -1, 1, 1)

    relu = lambda v: np.maximum(v, 0.0)  # noqa: E731
    y = relu(conv(np.asarray(x, np.float64), p["w1"], p["b1"]))
    y = relu(conv(y, p["w2"], p["b2"]))
    n, c, h, w = y.shape
    y = y.reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))
    y = relu(conv(y, p["w3"], p["b3"]))
    logits = y.reshape(n, -1) @ p["w4"].T + p["b4"]
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


__all__ = [
    "CLASSES",
    "ENTRY",
    "INPUT_SHAPE",
    "build_small_cnn",
    "numpy_small_cnn",
    "small_cnn_inputs",
    "small_cnn_params",
]
