"""The IREE backend's own figures: the L2 frame on both backends, and the per-call overhead of IREE's call paths.

    python benchmarks/iree_vs_ort.py               # the L2 frame, IREE against the NumPy backend
    python benchmarks/iree_vs_ort.py --calls       # also the per-call overhead table (invoker vs invoke, sync vs task)
    python benchmarks/iree_vs_ort.py --quick       # smoke run

The models against ONNX Runtime (Cortex -> IREE, Cortex -> NumPy, IREE alone, 1 and 2 threads, per-dispatch
times) are `benchmarks/onnx_vs_ort.py`'s table, its one home. The L2 section times `cortex.compile(L2_PIPELINE)`
frame calls on both backends (480x640, balanced), interleaved, and the compilable stages' share from their
profiles. Nothing is asserted; report `uptime` with the figures.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from onnx_vs_ort import cpu_isa, timings  # noqa: E402
from timing import interleaved  # noqa: E402, F401 - the one timer (onnx_vs_ort.timings runs it)

EXTERN_LABELS = {"sharpness", "scene", "text", "encoded"}


def bench_l2(frames_n: int, rounds: int) -> list[str]:
    import cortex
    from cortex.examples import L2_PIPELINE
    from cortex.video.synthetic import SyntheticVideo

    os.environ["CORTEX_IREE_THREADS"] = "1"
    video = SyntheticVideo(480, 640)
    frames = [video.frame(i) for i in range(frames_n)]
    runs = {"numpy": cortex.compile(L2_PIPELINE), "iree": cortex.compile(L2_PIPELINE, backend="iree")}
    for r in runs.values():
        for f in frames[:3]:
            r(f)
    samples: dict[str, list[float]] = {k: [] for k in runs}
    for k in range(rounds):
        for name, r in (list(runs.items()) if k % 2 == 0 else list(runs.items())[::-1]):
            r.reset()
            for f in frames:
                t = time.perf_counter()
                r(f)
                samples[name].append(time.perf_counter() - t)
    compilable = {}
    for name, r in runs.items():
        r.reset()
        r.profiling = True
        for f in frames:
            r(f)
        profile = r.profile(reset=True)
        r.profiling = False
        compilable[name] = 1e3 * sum(v for k, v in profile.items() if k not in EXTERN_LABELS) / max(profile.frames, 1)
    med = {k: 1e3 * statistics.median(v) for k, v in samples.items()}
    low = {k: 1e3 * min(v) for k, v in samples.items()}
    return [
        f"L2 frame 480x640 balanced, {frames_n} frames x {rounds} rounds, sequential calls:",
        *(f"  {k:<6} frame median {med[k]:8.2f} ms  min {low[k]:8.2f} ms   compilable stages (profiled) {compilable[k]:6.2f} ms"
          for k in runs),
        f"ratio L2 iree/numpy: frame median {med['iree'] / med['numpy']:.2f}, min {low['iree'] / low['numpy']:.2f}; "
        f"compilable stages {compilable['iree'] / compilable['numpy']:.2f}",
    ]


def bench_calls(rounds: int) -> list[str]:
    """Per-call overhead of the call paths on a 1x10 add (compute ~0): see cortex.runtime.iree_runtime."""
    import iree.runtime as rt

    from cortex.backends.iree.compiler import TARGETS, compile_text
    from cortex.runtime.iree_runtime import LoadedModule

    text = """func.func @f(%a: tensor<1x10xf32>) -> tensor<1x10xf32> {
      %r = arith.addf %a, %a : tensor<1x10xf32>
      func.return %r : tensor<1x10xf32>
    }"""
    vmfb = compile_text(text, TARGETS["cpu"])
    x = np.ones((1, 10), np.float32)
    contenders: dict[str, Callable[[], object]] = {}
    for driver in ("local-sync", "local-task"):
        config = rt.Config(driver)
        ctx = rt.SystemContext(config=config)
        ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
        invoker = ctx.modules.module["f"]
        contenders[f"{driver} FunctionInvoker"] = (lambda inv: lambda: np.asarray(inv(x)))(invoker)
        call = LoadedModule(vmfb, driver).function("f", ["tensor<1x10xf32>"], ["tensor<1x10xf32>"])
        contenders[f"{driver} invoke (cortex)"] = (lambda c: lambda: c(x))(call)
    us = timings(contenders, rounds, 200)
    return ["per-call overhead, 1x10 f32 add (us per call, median / min):",
            *(f"  {k:<28} {m:8.2f} {lo:8.2f}" for k, (m, lo) in us.items())]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20, help="rounds of the per-call table")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--calls", action="store_true", help="also the per-call overhead table")
    args = parser.parse_args()

    import iree.compiler.version

    load = os.getloadavg()
    print(f"# {cpu_isa()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; numpy {np.__version__}, "
          f"iree {iree.compiler.version.VERSION}")
    if args.calls:
        print("\n".join(bench_calls(3 if args.quick else args.rounds)))
    print("\n".join(bench_l2(6 if args.quick else 20, 2 if args.quick else 3)))
    load = os.getloadavg()
    print(f"# load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
