"""Imported ONNX models: Cortex's NumPy backend vs ONNX Runtime, one thread each, interleaved.

    python benchmarks/onnx_vs_ort.py              # the CNN and the MLP of cortex.frontends.onnx_models
    python benchmarks/onnx_vs_ort.py --quick      # smoke run
    python benchmarks/onnx_vs_ort.py --reference  # also the reference interpreter (slow)
    python benchmarks/onnx_vs_ort.py --baseline   # also the NumPy backend without cortex-conv-im2col
    python benchmarks/onnx_vs_ort.py --iree       # the IREE backend on the 128x128 CNN (cnn_large) instead

`benchmarks/iree_vs_ort.py` prints the IREE backend side by side with ONNX Runtime, IREE alone (its
own ONNX importer) and the NumPy backend, per model, at 1 and 2 threads. `--iree` here times `cortex.compile(cortex.from_onnx(m), backend="iree")` and
`cortex.onnx_backend.prepare(m, backend="iree")` against ONNX Runtime (one
thread; IREE's local-sync driver is one thread by construction), and the
same compile without this CPU's tuning flags (`cpu_tuning_flags` in
`cortex.backends.iree.compiler`: im2col convolutions on AVX2 without AVX-512),
and prints `ratio cnn_large iree/ort` with the medians.

Each model is imported with `cortex.from_onnx` and run through the ONNX
backend interface (`cortex.onnx_backend.prepare(model).run([x])`, what a user
calls), and through an `onnxruntime.InferenceSession` with one intra-op and
one inter-op thread on the same input. NumPy's BLAS is pinned to one thread
too (the environment variables below are set before NumPy loads). Rounds
alternate the contenders (A, B, A, B, ...), each running a block of calls,
every call timed on its own; the figures are medians of those times. Outputs are
checked to agree before timing. Prints one table per model and a
`ratio <model> cortex/ort` line each; no figure is asserted anywhere.
"""

from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
from timing import interleaved  # noqa: E402


def ort_session(model):
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    model.ir_version = min(model.ir_version, 8)
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def per_call_us(contenders: dict[str, Callable[[], object]], rounds: int, block: int) -> dict[str, float]:
    """Median microseconds per call, interleaved, every call timed on its own (benchmarks/timing.py)."""
    return {name: s.median_us() for name, s in interleaved(contenders, rounds, block).items()}


def bench_model(name: str, model, rounds: int, block: int, with_reference: bool, baseline: bool) -> list[str]:
    import cortex.onnx_backend as backend
    from cortex.frontends.onnx_models import sample_input

    x = sample_input(model)
    session = ort_session(model)
    start = time.perf_counter()
    compiled = backend.prepare(model)
    compile_ms = 1e3 * (time.perf_counter() - start)
    (want,) = session.run(None, {"x": x})
    (got,) = compiled.run([x])
    diff = float(np.abs(got - want).max())
    contenders: dict[str, Callable[[], object]] = {
        "onnxruntime": lambda: session.run(None, {"x": x}),
        "cortex numpy": lambda: compiled.run([x]),
    }
    if baseline:  # the same backend with only the default post-lowering passes (no im2col, pooling, folding)
        saved, backend.COMPILE_PASSES = backend.COMPILE_PASSES, backend.POST_LOWERING_PASSES
        plain = backend.prepare(model)
        backend.COMPILE_PASSES = saved
        contenders["cortex numpy, plain lowering"] = lambda: plain.run([x])
    if with_reference:
        reference = backend.ReferenceBackend.prepare(model)
        contenders["cortex reference"] = lambda: reference.run([x])
    per_call_us(contenders, 2, block)  # warm-up
    us = per_call_us(contenders, rounds, block)
    lines = [f"{name}: {model.graph.input[0].name} {[d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]}, "
             f"{len(model.graph.node)} nodes; import+compile {compile_ms:.0f} ms; max |cortex - ort| = {diff:.2e}"]
    lines += [f"  {k:<28} {v:9.1f} us/call  ({v / us['onnxruntime']:.2f}x ort)" for k, v in us.items()]
    lines.append(f"ratio {name} cortex/ort: {us['cortex numpy'] / us['onnxruntime']:.2f}  (target <= 3 on the cnn)")
    return lines


def bench_iree(rounds: int, block: int) -> list[str]:
    """The IREE backend on cnn_large: compile, prepare, the untuned compile, ONNX Runtime (see the module)."""
    import cortex
    import cortex.onnx_backend as backend
    from cortex.backends.iree import compiler as iree_compile
    from cortex.frontends.onnx_models import cnn_large, sample_input

    model = cnn_large()
    x = sample_input(model)
    session = ort_session(model)
    compiled = cortex.compile(cortex.from_onnx(model), backend="iree")
    prepared = backend.prepare(model, backend="iree")
    tuning = iree_compile.cpu_tuning_flags(iree_compile.cpu_features())
    saved = iree_compile.cpu_tuning_flags
    iree_compile.cpu_tuning_flags = lambda features: ()  # type: ignore[assignment]
    try:
        untuned = cortex.compile(cortex.from_onnx(model), backend="iree")
    finally:
        iree_compile.cpu_tuning_flags = saved  # type: ignore[assignment]
    (want,) = session.run(None, {"x": x})
    diffs = {name: float(np.abs(np.asarray(y) - want).max())
             for name, y in (("compile", compiled(x)[0]), ("prepare", prepared.run([x])[0]), ("untuned", untuned(x)[0]))}
    contenders: dict[str, Callable[[], object]] = {
        "onnxruntime": lambda: session.run(None, {"x": x}),
        "cortex iree compile": lambda: compiled(x),
        "cortex iree prepare": lambda: prepared.run([x]),
        "cortex iree, no cpu tuning": lambda: untuned(x),
    }
    per_call_us(contenders, 2, block)  # warm-up
    us = per_call_us(contenders, rounds, block)
    ort_us = us["onnxruntime"]
    lines = [f"cnn_large on IREE; this CPU's tuning flags: {' '.join(tuning) or 'none'}; max |cortex - ort| "
             + ", ".join(f"{k} {v:.1e}" for k, v in diffs.items())]
    lines += [f"  {k:<28} {v / 1e3:9.2f} ms/call  ({v / ort_us:.2f}x ort)" for k, v in us.items()]
    lines.append(f"ratio cnn_large iree/ort: compile {us['cortex iree compile'] / ort_us:.2f}, "
                 f"prepare {us['cortex iree prepare'] / ort_us:.2f}  (target <= 1.1)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="default 40 (15 with --iree)")
    parser.add_argument("--block", type=int, help="calls per contender per round: default 25 (5 with --iree)")
    parser.add_argument("--quick", action="store_true", help="3 rounds of 3 calls")
    parser.add_argument("--reference", action="store_true", help="also time the reference interpreter")
    parser.add_argument("--baseline", action="store_true", help="also time the NumPy backend without the extra lowering passes")
    parser.add_argument("--iree", action="store_true", help="the IREE backend on cnn_large instead (see the module)")
    args = parser.parse_args()
    defaults = (15, 5) if args.iree else (40, 25)  # an IREE call of the large CNN is milliseconds, not microseconds
    rounds, block = (3, 3) if args.quick else (args.rounds or defaults[0], args.block or defaults[1])

    import onnxruntime

    from cortex.frontends.onnx_models import MODELS

    load = os.getloadavg()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
          f"numpy {np.__version__}, onnxruntime {onnxruntime.__version__}; {rounds} rounds x {block} calls, medians")
    if args.iree:
        print("\n".join(bench_iree(rounds, block)))
        return
    for name, build in MODELS.items():
        print("\n".join(bench_model(name, build(), rounds, block, args.reference, args.baseline)))


if __name__ == "__main__":
    main()
