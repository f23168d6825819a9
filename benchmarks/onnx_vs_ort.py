"""Imported ONNX models: ONNX Runtime, Cortex -> IREE, Cortex -> NumPy and IREE alone, side by side.

    python benchmarks/onnx_vs_ort.py                          # every model, 1 then 2 threads, then the table
    python benchmarks/onnx_vs_ort.py --models mlp_b32 --threads 1
    python benchmarks/onnx_vs_ort.py --dispatches             # also each IREE module's time per dispatch
    python benchmarks/onnx_vs_ort.py --quick                  # smoke run
    python benchmarks/onnx_vs_ort.py --models cnn --reference --baseline   # extra NumPy-side contenders
    python benchmarks/onnx_vs_ort.py --models cnn_large --untuned          # also IREE without this CPU's tuning flags

The one home of the table: one process, contenders interleaved (A, B, C, D, then reversed; `timing.py`),
every call timed on its own; minimum and median per contender, ratios to ONNX Runtime. The first line names
the CPU and its vector ISA and the load average; the last the load at the end. Threads: each contender gets
the same count — ONNX Runtime's intra-op threads; Cortex -> IREE's `compiled.iree_threads` (1: IREE's
local-sync driver, N: local-task with N workers); IREE alone the same drivers; the NumPy backend's BLAS
through threadpoolctl. Contenders:

- onnxruntime: `InferenceSession`, CPU provider;
- cortex iree: `cortex.compile(cortex.from_onnx(model), backend="iree")`, called as `compiled(x)`;
- iree alone: IREE's own ONNX importer (`iree-import-onnx`, NCHW kept) compiled with Cortex's CPU flags
  (data tiling included), called through `iree.runtime`'s invoker;
- cortex numpy: `cortex.onnx_backend.prepare(model)` (the NumPy backend with the ONNX backend's passes:
  im2col convolutions, unrolled pools, folded layouts), called as `.run([x])`.

Models (`--models`): `cnn` (1x3x16x16), `cnn128` (1x3x128x128: six 3x3 convs + ReLU, stride 2 on three, a
mean, a Gemm), `cnn_large` (`cortex.frontends.onnx_models.cnn_large`), `mlp` (64-128-128-10), `mlp_b1` and
`mlp_b32` (512-1024-1024-10 at batch 1 and 32), `mobilenet_block` (two MobileNet blocks: depthwise 3x3 +
ReLU6, pointwise 1x1 + ReLU6, on 1x32x56x56). Outputs are checked against ONNX Runtime first.
`--dispatches` runs `iree-benchmark-module --dispatch_statistics` (one thread) on Cortex's and IREE alone's
module of each model and prints the dispatches by time, then ONNX Runtime's own profile of its nodes (one thread,
mean µs per call): where a ratio misses, the kernel that is the floor.
Nothing is asserted; the figures go to benchmarks/README.md with the command and the load.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

import numpy as np  # noqa: E402
from timing import interleaved  # noqa: E402


def cnn128(seed: int = 0, classes: int = 10):
    """1x3x128x128 -> 1xclasses: six 3x3 convs (pad 1) + ReLU, stride 2 on the 2nd, 4th and 6th, the mean over
    H and W, a Gemm (transB)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    plan = [(3, 16, 1), (16, 32, 2), (32, 32, 1), (32, 64, 2), (64, 64, 1), (64, 128, 2)]
    nodes, inits, current = [], [], "x"

    def weight(name: str, shape: tuple[int, ...], fan_in: int) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32), name))
        return name

    for i, (cin, cout, stride) in enumerate(plan):
        w, b = weight(f"w{i}", (cout, cin, 3, 3), 9 * cin), weight(f"b{i}", (cout,), 9 * cin)
        nodes.append(helper.make_node("Conv", [current, w, b], [f"c{i}"], pads=[1, 1, 1, 1], strides=[stride, stride]))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"r{i}"]))
        current = f"r{i}"
    nodes.append(helper.make_node("GlobalAveragePool", [current], ["pooled"]))
    nodes.append(helper.make_node("Flatten", ["pooled"], ["flat"]))
    fc_w, fc_b = weight("fc_w", (classes, plan[-1][1]), plan[-1][1]), weight("fc_b", (classes,), plan[-1][1])
    nodes.append(helper.make_node("Gemm", ["flat", fc_w, fc_b], ["y"], transB=1))
    graph = helper.make_graph(nodes, "cnn128", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 128, 128])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _mlp(batch: int):
    from cortex.frontends.onnx_models import mlp

    return mlp(sizes=(512, 1024, 1024, 10), batch=batch)


def _model(name: str):
    from cortex.frontends import onnx_models

    return onnx_models.MODELS[name]()


BENCH_MODELS: dict[str, Callable[[], object]] = {
    "cnn": lambda: _model("cnn"),
    "cnn128": cnn128,
    "cnn_large": lambda: _model("cnn_large"),
    "mlp": lambda: _model("mlp"),
    "mlp_b1": lambda: _mlp(1),
    "mlp_b32": lambda: _mlp(32),
    "mobilenet_block": lambda: _model("mobilenet_block"),
}
DEFAULT_MODELS = "cnn,cnn128,cnn_large,mlp_b1,mlp_b32"


def cpu_isa() -> str:
    """The CPU's model name and the widest x86 vector ISA it reports (what IREE's `host` code uses)."""
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
    model.ir_version = min(model.ir_version, 8)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def tool(name: str) -> str:
    """An IREE command-line tool: the one installed beside this Python, else from PATH."""
    beside = os.path.join(os.path.dirname(sys.executable), name)
    return beside if os.path.exists(beside) else name


def iree_alone_vmfb(model) -> bytes:
    """IREE's own ONNX path: iree-import-onnx, compiled with Cortex's CPU flags (its best: data tiling included)."""
    import onnx

    from cortex.backends.iree.compiler import TARGETS, compile_text

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.onnx")
        onnx.save(model, path)
        text = subprocess.run([tool("iree-import-onnx"), path, "-o", "-"], capture_output=True, text=True, check=True).stdout
    return compile_text(text, TARGETS["cpu"])


def iree_invoker(vmfb: bytes, function: str, driver: str) -> Callable[[np.ndarray], np.ndarray]:
    import iree.runtime as rt

    context = rt.SystemContext(config=rt.Config(driver))
    context.add_vm_module(rt.VmModule.copy_buffer(context.instance, vmfb))
    invoker = context.modules.module[function]
    return lambda x: invoker(x).to_host()


@dataclass
class Row:
    """One model at one thread count: (median, min) µs per contender, and max |x - ort| per contender."""

    model: str
    threads: int
    us: dict[str, tuple[float, float]]
    diffs: dict[str, float] = field(default_factory=dict)


@dataclass
class Prepared:
    """One model, compiled by every contender once (the thread count is set per run)."""

    name: str
    model: object
    x: np.ndarray
    iree: object
    numpy: object
    alone: bytes | None
    extras: dict[str, Callable[[], object]] = field(default_factory=dict)


def prepare(name: str, model, extras: set[str]) -> Prepared:
    import cortex
    import cortex.onnx_backend as backend
    from cortex.frontends.onnx_models import sample_input

    x = sample_input(model)
    iree = cortex.compile(cortex.from_onnx(model), backend="iree")
    numpy_run = backend.prepare(model)
    try:
        alone: bytes | None = iree_alone_vmfb(model)
    except (OSError, subprocess.CalledProcessError, cortex.CortexError) as e:
        print(f"  ({name}: IREE alone unavailable: {' '.join(str(e).split())[:200]})")
        alone = None
    return Prepared(name, model, x, iree, numpy_run, alone, extra_contenders(model, x, extras))


def extra_contenders(model, x: np.ndarray, extras: set[str]) -> dict[str, Callable[[], object]]:
    """`--reference` (the interpreter), `--baseline` (the NumPy backend with only the default post-lowering
    passes), `--untuned` (IREE without this CPU's tuning flags, `cpu_tuning_flags`)."""
    import cortex.onnx_backend as backend

    found: dict[str, Callable[[], object]] = {}
    if "baseline" in extras:
        saved, backend.COMPILE_PASSES = backend.COMPILE_PASSES, backend.POST_LOWERING_PASSES
        try:
            plain = backend.prepare(model)
        finally:
            backend.COMPILE_PASSES = saved
        found["numpy, plain lowering"] = lambda: plain.run([x])
    if "reference" in extras:
        reference = backend.ReferenceBackend.prepare(model)
        found["cortex reference"] = lambda: reference.run([x])
    if "untuned" in extras:
        import cortex
        from cortex.backends.iree import compiler as iree_compile

        saved_tuning = iree_compile.cpu_tuning_flags
        iree_compile.cpu_tuning_flags = lambda features: ()  # type: ignore[assignment]
        try:
            untuned = cortex.compile(cortex.from_onnx(model), backend="iree")
        finally:
            iree_compile.cpu_tuning_flags = saved_tuning  # type: ignore[assignment]
        found["iree, no cpu tuning"] = lambda: untuned(x)
    return found


def bench(p: Prepared, threads: int, rounds: int, block: int) -> Row:
    from threadpoolctl import threadpool_limits

    session = ort_session(p.model, threads)
    p.iree.iree_threads = threads  # type: ignore[attr-defined]
    contenders: dict[str, Callable[[], object]] = {
        "onnxruntime": lambda: session.run(None, {"x": p.x}),
        "cortex iree": lambda: p.iree(p.x),  # type: ignore[operator]
    }
    if p.alone is not None:
        own = iree_invoker(p.alone, p.model.graph.name, "local-sync" if threads == 1 else "local-task")  # type: ignore[attr-defined]
        contenders["iree alone"] = lambda: own(p.x)
    contenders["cortex numpy"] = lambda: p.numpy.run([p.x])  # type: ignore[attr-defined]
    contenders.update(p.extras)
    (want,) = session.run(None, {"x": p.x})
    diffs = {}
    for name, fn in contenders.items():
        got = fn()
        got = got[0] if isinstance(got, (tuple, list)) else got
        diffs[name] = float(np.max(np.abs(np.asarray(got) - want) / np.maximum(np.abs(want), 1e-3)))
    with threadpool_limits(threads):
        timings(contenders, 2, block)
        us = timings(contenders, rounds, block)
    return Row(p.name, threads, us, diffs)


def row_lines(row: Row) -> list[str]:
    base = row.us["onnxruntime"]
    lines = [f"{row.model}, {row.threads} thread(s); max relative |x - ort|: "
             + ", ".join(f"{k} {v:.1e}" for k, v in row.diffs.items() if k != "onnxruntime")]
    lines += [f"  {k:<22} min {lo:10.1f} us ({lo / base[1]:5.2f}x ort)   median {m:10.1f} us ({m / base[0]:5.2f}x ort)"
              for k, (m, lo) in row.us.items()]
    return lines


def table(rows: list[Row]) -> list[str]:
    """The summary: per model and thread count, ONNX Runtime's minimum and every contender's ratio to it,
    minimum (median)."""
    names = [n for n in ("cortex iree", "iree alone", "cortex numpy") if any(n in r.us for r in rows)]
    lines = ["| model | threads | ONNX Runtime min (µs) | " + " | ".join(f"{n} / ort, min (median)" for n in names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    for r in rows:
        median, low = r.us["onnxruntime"]
        cells = [f"{r.us[n][1] / low:.2f} ({r.us[n][0] / median:.2f})" if n in r.us else "—" for n in names]
        lines.append(f"| {r.model} | {r.threads} | {low:.1f} | " + " | ".join(cells) + " |")
    return lines


DISPATCH_ROW = re.compile(r"^BM_[^/\s]+/(?!process_time)(\S+)\s+([\d.]+) (ns|us|ms|s)\s")
UNIT_US = {"ns": 1e-3, "us": 1.0, "ms": 1e3, "s": 1e6}


def dispatch_times(vmfb: bytes, function: str, inputs: list[str], repetitions: int = 5) -> list[tuple[str, float]]:
    """µs per call of each dispatch of `function` (`iree-benchmark-module --dispatch_statistics`, local-sync),
    slowest first; `inputs` as the tool takes them ("1x3x16x16xf32=0.5")."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "module.vmfb")
        with open(path, "wb") as f:
            f.write(vmfb)
        command = [tool("iree-benchmark-module"), f"--module={path}", f"--function={function}", "--device=local-sync",
                   "--dispatch_statistics", f"--benchmark_repetitions={repetitions}", *(f"--input={i}" for i in inputs)]
        out = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    found = [(m.group(1), float(m.group(2)) * UNIT_US[m.group(3)]) for m in map(DISPATCH_ROW.match, out.splitlines()) if m]
    return sorted(found, key=lambda item: -item[1])


def node_times(events: list[dict], skip: int = 10) -> list[tuple[str, str, float]]:
    """(node, op type, mean µs per call) of ONNX Runtime's profile `events` (its JSON), slowest first; each
    node's first `skip` calls (warm-up) left out."""
    calls: dict[tuple[str, str], list[float]] = {}
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            calls.setdefault((e["name"].removesuffix("_kernel_time"), e["args"]["op_name"]), []).append(e["dur"])
    found = [(node, op, float(np.mean(durs[skip:] or durs))) for (node, op), durs in calls.items()]
    return sorted(found, key=lambda item: -item[2])


def ort_node_times(model, x: np.ndarray, calls: int = 100) -> list[tuple[str, str, float]]:
    """ONNX Runtime's own profile of `calls` one-thread calls (`enable_profiling`): `node_times`."""
    import json

    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = 1, 1
    with tempfile.TemporaryDirectory() as tmp:
        options.enable_profiling, options.profile_file_prefix = True, os.path.join(tmp, "ort")
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        feed = {session.get_inputs()[0].name: x}
        for _ in range(calls):
            session.run(None, feed)
        with open(session.end_profiling()) as f:
            return node_times(json.load(f))


def input_spec(tensor_type: str) -> str:
    """`tensor<1x3x16x16xf32>` -> `1x3x16x16xf32=0.5` (iree-benchmark-module's --input)."""
    return tensor_type.removeprefix("tensor<").removesuffix(">") + "=0.5"


def dispatch_lines(p: Prepared, top: int) -> list[str]:
    """Each IREE module's dispatches by time: Cortex's (every segment of the entry's executable) and IREE alone's."""
    program = p.iree.program  # type: ignore[attr-defined]
    exe = program.executables[program.entry_part.executable]
    vmfb = exe.members.get("module.vmfb")
    modules: list[tuple[str, bytes, str, list[str]]] = []
    if isinstance(vmfb, bytes):
        for symbol, signature in exe.meta.get("segments", {}).items():
            modules.append((f"cortex iree @{symbol}", vmfb, symbol, [input_spec(t) for t in signature["args"]]))
    if p.alone is not None:
        dims = "x".join(str(d.dim_value) for d in p.model.graph.input[0].type.tensor_type.shape.dim)  # type: ignore[attr-defined]
        modules.append(("iree alone", p.alone, p.model.graph.name, [f"{dims}xf32=0.5"]))  # type: ignore[attr-defined]
    lines = [f"{p.name}: per dispatch, 1 thread (iree-benchmark-module --dispatch_statistics), µs per call:"]
    for label, module, function, inputs in modules:
        try:
            rows = dispatch_times(module, function, inputs)
        except (OSError, subprocess.CalledProcessError) as e:
            lines.append(f"  {label}: not measured ({' '.join(str(e).split())[:160]})")
            continue
        total = sum(t for _, t in rows)
        lines.append(f"  {label}: {len(rows)} dispatches, {total:.1f} us in all")
        lines += [f"    {t:9.1f} us {100 * t / max(total, 1e-9):5.1f} %  {name}" for name, t in rows[:top]]
    nodes = ort_node_times(p.model, p.x)
    total = sum(t for _, _, t in nodes)
    lines.append(f"  onnxruntime (its profile): {len(nodes)} nodes, {total:.1f} us in all")
    lines += [f"    {t:9.1f} us {100 * t / max(total, 1e-9):5.1f} %  {node} ({op})" for node, op, t in nodes[:top]]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--block", type=int, default=10, help="calls per contender per round")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 3 calls")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--models", default=DEFAULT_MODELS, help=f"any of {', '.join(BENCH_MODELS)}")
    parser.add_argument("--dispatches", action="store_true", help="also each IREE module's time per dispatch")
    parser.add_argument("--top", type=int, default=6, help="dispatches shown per module")
    for extra in ("reference", "baseline", "untuned"):
        parser.add_argument(f"--{extra}", action="store_true", help=f"also the '{extra}' contender (see extra_contenders)")
    args = parser.parse_args()
    rounds, block = (3, 3) if args.quick else (args.rounds, args.block)
    extras = {e for e in ("reference", "baseline", "untuned") if getattr(args, e)}

    import iree.compiler.version
    import iree.runtime as rt
    import onnxruntime

    load = os.getloadavg()
    print(f"# {cpu_isa()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; numpy {np.__version__}, "
          f"onnxruntime {onnxruntime.__version__}, iree {iree.compiler.version.VERSION}; {rounds} rounds x {block} calls")
    thread_counts = [int(t) for t in args.threads.split(",")]
    if max(thread_counts) > 1:  # IREE alone's local-task takes its workers from this process-wide flag
        rt.flags.parse_flags(f"--task_topology_max_group_count={max(thread_counts)}")
    rows: list[Row] = []
    for name in args.models.split(","):
        prepared = prepare(name, BENCH_MODELS[name](), extras)
        for threads in thread_counts:
            rows.append(bench(prepared, threads, rounds, block))
            print("\n".join(row_lines(rows[-1])), flush=True)
        if args.dispatches:
            print("\n".join(dispatch_lines(prepared, args.top)), flush=True)
    print("\n".join(table(sorted(rows, key=lambda r: r.threads))))
    load = os.getloadavg()
    print(f"# load at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")


if __name__ == "__main__":
    main()
