"""The IREE backend against ONNX Runtime, IREE's own ONNX importer and the NumPy backend.

    python benchmarks/iree_vs_ort.py               # the models, 1 then 2 threads, and the L2 frame
    python benchmarks/iree_vs_ort.py --models mlp_b32 --threads 1 --no-l2   # one model, one thread
    python benchmarks/iree_vs_ort.py --quick       # smoke run
    python benchmarks/iree_vs_ort.py --calls       # also the per-call overhead table (invoker vs invoke, sync vs task)

One process; contenders run interleaved (A, B, C, ..., then reversed), every call timed on its own;
medians and minima per contender. Threads: each contender gets the same count — ONNX Runtime's
intra-op threads; IREE local-sync for 1 (one thread by construction) and local-task with that many
workers for 2 (`CORTEX_IREE_THREADS`); the NumPy backend's BLAS through threadpoolctl. Contenders:

- onnxruntime: `InferenceSession`, CPU provider;
- cortex iree: `cortex.onnx_backend.prepare(model, backend="iree")` (NHWC layout, llvm-cpu for this CPU);
- iree-import-onnx: IREE alone: its own importer (`iree-import-onnx`, from iree-base-compiler; NCHW kept)
  compiled with Cortex's CPU flags (data tiling included), called through `iree.runtime`'s invoker;
- cortex numpy: `cortex.onnx_backend.prepare(model)`.

Models (`--models`): the small CNN, the 128x128 CNN, the small MLP, an MLP 512-1024-1024-10 at batch 1
and 32, a MobileNet block pair (`mobilenet_block`). The first line names the CPU and its vector ISA. Outputs are checked to agree first. The L2 section times `cortex.compile(L2_PIPELINE)` frame calls on
both backends (480x640, balanced), and the compilable stages' share from their profiles. Nothing is
asserted; report `uptime` with the figures.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from timing import interleaved  # noqa: E402

EXTERN_LABELS = {"sharpness", "scene", "text", "encoded"}


def _mlp(batch: int):
    from cortex.frontends.onnx_models import mlp

    return mlp(sizes=(512, 1024, 1024, 10), batch=batch)


def _model(name: str):
    from cortex.frontends import onnx_models

    return onnx_models.MODELS[name]()


BENCH_MODELS: dict[str, Callable[[], object]] = {
    "cnn": lambda: _model("cnn"),
    "cnn_large": lambda: _model("cnn_large"),
    "mlp": lambda: _model("mlp"),
    "mlp_b1": lambda: _mlp(1),
    "mlp_b32": lambda: _mlp(32),
    "mobilenet_block": lambda: _model("mobilenet_block"),
}
"""The models timed: the small CNN (1x3x16x16), the 128x128 CNN, the small MLP, and an MLP 512-1024-1024-10
(Gemm transB + ReLU, softmax) at batch 1 and 32, two MobileNet blocks (depthwise 3x3 + ReLU6, pointwise 1x1 +
ReLU6) on 1x32x56x56."""


def cpu_isa() -> str:
    """The widest x86 vector ISA this CPU reports (what IREE's `host` code uses), with its model name."""
    from cortex.backends.iree.compiler import cpu_features

    features = cpu_features()
    isa = next((name for flag, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("sse4_2", "SSE4.2")) if flag in features),
               "unknown ISA")
    try:
        model = next(line.partition(":")[2].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        model = "CPU"
    return f"{model}, {isa}"


def timings(contenders: dict[str, Callable[[], object]], rounds: int, block: int) -> dict[str, tuple[float, float]]:
    """(median, min) microseconds per call, interleaved (benchmarks/timing.py)."""
    return {name: (s.median_us(), s.min_us()) for name, s in interleaved(contenders, rounds, block).items()}


def ort_session(model, threads: int):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def iree_import(model, driver: str):
    """IREE's own ONNX path: iree-import-onnx, compiled with Cortex's CPU flags (its best: data tiling
    included), called through `iree.runtime`'s own function invoker."""
    import iree.runtime as rt
    import onnx

    from cortex.backends.iree.compiler import TARGETS, compile_text

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        tool = os.path.join(os.path.dirname(sys.executable), "iree-import-onnx")
        command = [tool] if os.path.exists(tool) else ["iree-import-onnx"]
        text = subprocess.run([*command, path, "-o", "-"], capture_output=True, text=True, check=True).stdout
    vmfb = compile_text(text, TARGETS["cpu"])
    context = rt.SystemContext(config=rt.Config(driver))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    invoker = context.modules.module[model.graph.name]
    return lambda x: invoker(x).to_host()


def bench_model(name: str, model, threads: int, rounds: int, block: int) -> list[str]:
    from threadpoolctl import threadpool_limits

    import cortex.onnx_backend as backend
    from cortex.frontends.onnx_models import sample_input

    x = sample_input(model)
    session = ort_session(model, threads)
    driver = "local-sync" if threads == 1 else "local-task"
    os.environ["CORTEX_IREE_THREADS"] = str(threads)  # local-sync for 1, local-task with that many workers
    start = time.perf_counter()
    iree = backend.prepare(model, backend="iree")
    compile_s = time.perf_counter() - start
    numpy_rep = backend.prepare(model)
    contenders: dict[str, Callable[[], object]] = {
        "onnxruntime": lambda: session.run(None, {"x": x}),
        "cortex iree": lambda: iree.run([x]),
    }
    try:
        own = iree_import(model, driver)
        contenders["iree-import-onnx"] = lambda: own(x)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"  (iree-import-onnx unavailable: {e})")
        own = None
    contenders["cortex numpy"] = lambda: numpy_rep.run([x])
    (want,) = session.run(None, {"x": x})
    diffs = {"cortex iree": float(np.abs(iree.run([x])[0] - want).max()),
             "cortex numpy": float(np.abs(numpy_rep.run([x])[0] - want).max())}
    if own is not None:
        diffs["iree-import-onnx"] = float(np.abs(own(x) - want).max())
    with threadpool_limits(threads):
        timings(contenders, 2, block)
        us = timings(contenders, rounds, block)
    base = us["onnxruntime"]
    lines = [f"{name}, {threads} thread(s) (IREE {driver}); cortex iree compile {compile_s:.1f} s (cached after the first); "
             f"max |x - ort|: " + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())]
    lines += [f"  {k:<18} median {m:10.1f} us ({m / base[0]:5.2f}x ort)   min {lo:10.1f} us ({lo / base[1]:5.2f}x ort)"
              for k, (m, lo) in us.items()]
    lines.append(f"ratio {name} t{threads} cortex-iree/ort: median {us['cortex iree'][0] / base[0]:.2f}, min "
                 f"{us['cortex iree'][1] / base[1]:.2f}; numpy/cortex-iree: median {us['cortex numpy'][0] / us['cortex iree'][0]:.1f}")
    return lines


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
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=10)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default=",".join(BENCH_MODELS), help=f"any of {', '.join(BENCH_MODELS)}")
    parser.add_argument("--no-l2", action="store_true")
    parser.add_argument("--calls", action="store_true")
    args = parser.parse_args()
    rounds, block = (3, 3) if args.quick else (args.rounds, args.block)

    import iree.compiler.version
    import onnxruntime

    load = os.getloadavg()
    print(f"# {cpu_isa()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; numpy {np.__version__}, "
          f"onnxruntime {onnxruntime.__version__}, iree {iree.compiler.version.VERSION}; {rounds} rounds x {block} calls")
    import iree.runtime as rt

    thread_counts = [int(t) for t in args.threads.split(",")]
    rt.flags.parse_flags(f"--task_topology_max_group_count={max(thread_counts)}")  # local-task's workers
    if args.calls:
        print("\n".join(bench_calls(rounds)))
    for threads in thread_counts:
        for name in args.models.split(","):
            print("\n".join(bench_model(name, BENCH_MODELS[name](), threads, rounds, block)), flush=True)
    if not args.no_l2:
        print("\n".join(bench_l2(6 if args.quick else 20, 2 if args.quick else 3)))
    load = os.getloadavg()
    print(f"# load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
