"""Grouped and depthwise convolutions channels-last on IREE, against the rule that left them NCHW.

    python benchmarks/grouped_layout.py                       # both models, 20 rounds x 5 calls
    python benchmarks/grouped_layout.py --models mobilenet_block --rounds 10

One process, one thread each, contenders interleaved (benchmarks/timing.py), every call timed alone:

- onnxruntime: `InferenceSession`, CPU provider, one intra-op thread;
- cortex iree: `cortex.onnx_backend.prepare(model, backend="iree")` — `cortex-convert-layout` turns every
  conv channels-last, grouped and depthwise ones included;
- cortex iree, grouped NCHW: the same, compiled with the former rule of the pass (a conv with `group` > 1
  left NCHW between two transposes, lowered as one generic over its group loop).

Models: `mobilenet_block` (cortex.frontends.onnx_models: depthwise 3x3 + ReLU6, pointwise 1x1 + ReLU6,
twice, on 1x32x56x56) and `grouped` (a ResNeXt-style 3x3 conv of 64 channels in 4 groups + ReLU, then
1x1 + ReLU, on 1x64x28x28). Outputs are checked against ONNX Runtime first. Prints medians and minima,
the ratios to ONNX Runtime and the load average; nothing is asserted.
"""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("CORTEX_IREE_THREADS", "1")

import argparse  # noqa: E402
import contextlib  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402

import numpy as np  # noqa: E402
from timing import interleaved, load  # noqa: E402


def grouped_model(seed: int = 0):
    """1x64x28x28: conv 3x3 (64 -> 64, group 4, pad 1) + Relu, conv 1x1 (64 -> 64) + Relu."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    weights = {"w0": (64, 16, 3, 3), "b0": (64,), "w1": (64, 64, 1, 1), "b1": (64,)}
    inits = [numpy_helper.from_array((rng.standard_normal(s) / 12).astype(np.float32), n) for n, s in weights.items()]
    nodes = [
        helper.make_node("Conv", ["x", "w0", "b0"], ["c0"], group=4, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["r0"]),
        helper.make_node("Conv", ["r0", "w1", "b1"], ["c1"], kernel_shape=[1, 1]),
        helper.make_node("Relu", ["c1"], ["y"]),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 28, 28])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 28, 28])
    model = helper.make_model(helper.make_graph(nodes, "grouped", [x], [y], inits),
                              opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def models() -> dict[str, Callable[[], object]]:
    from cortex.frontends.onnx_models import mobilenet_block

    return {"mobilenet_block": mobilenet_block, "grouped": grouped_model}


@contextlib.contextmanager
def grouped_left_nchw() -> Iterator[None]:
    """`cortex-convert-layout` with its former rule: a conv with `group` > 1 stays NCHW."""
    from cortex.dialects import tensor_ops as ops
    from cortex.passes import convert_layout

    current = convert_layout.lost_properties

    def former(op, nhwc):
        lost = current(op, nhwc)
        return lost + ["group"] if isinstance(op, ops.Conv2dOp) and op.group.value.data != 1 else lost

    convert_layout.lost_properties = former
    try:
        yield
    finally:
        convert_layout.lost_properties = current


def bench(name: str, model, rounds: int, block: int) -> list[str]:
    import onnxruntime as ort

    import cortex.onnx_backend as backend
    from cortex.frontends.onnx_models import sample_input

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    x = sample_input(model)
    now = backend.prepare(model, backend="iree")
    with grouped_left_nchw():
        before = backend.prepare(model, backend="iree")
    contenders: dict[str, Callable[[], object]] = {
        "onnxruntime": lambda: session.run(None, {"x": x}),
        "cortex iree": lambda: now.run([x]),
        "cortex iree, grouped NCHW": lambda: before.run([x]),
    }
    (want,) = session.run(None, {"x": x})
    for label, rep in (("cortex iree", now), ("cortex iree, grouped NCHW", before)):
        np.testing.assert_allclose(rep.run([x])[0], want, rtol=1e-4, atol=1e-5, err_msg=label)
    interleaved(contenders, 2, block)  # warm-up
    samples = interleaved(contenders, rounds, block)
    base = samples["onnxruntime"]
    lines = [f"{name}, 1 thread; {load()}"]
    for label, s in samples.items():
        lines.append(f"  {label:<26} median {s.median_us():9.1f} us ({s.median_us() / base.median_us():5.2f}x ort)"
                     f"   min {s.min_us():9.1f} us ({s.min_us() / base.min_us():5.2f}x ort)")
    gain = samples["cortex iree, grouped NCHW"].min_us() / samples["cortex iree"].min_us()
    lines.append(f"ratio {name} grouped-NCHW / channels-last (min): {gain:.2f}")
    return lines


def main() -> None:
    table = models()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(table), help=f"any of {', '.join(table)}")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=5)
    args = parser.parse_args()
    for name in args.models.split(","):
        print("\n".join(bench(name, table[name](), args.rounds, args.block)), flush=True)
    print(f"# at the end: {load()}")


if __name__ == "__main__":
    main()
