"""Benchmarks: int8 vs f32, NCHW vs NHWC, fused vs unfused — one process, interleaved.

    python benchmarks/quant_layout_fusion.py            # all sections
    python benchmarks/quant_layout_fusion.py --quick    # smoke run: small sizes, few repeats

Sections:
  (q) int8 vs f32 on the NumPy backend: the small CNN (examples/small_cnn.py) and
      a 512x512 matmul graph (both operands activations, quantised with their
      zero points). NumPy has no BLAS for integer matmul, so int8 can be slower
      here: the same two matmul graphs are also timed natively (mlir-opt to LLVM,
      mlir-runner, the time read inside the program with rtclock()).
  (l) NCHW vs NHWC: one 3x3 conv (1x32x64x64 -> 32 channels) and the small CNN,
      after cortex-convert-layout{layout=nhwc},canonicalize.
  (f) fused vs unfused elementwise chain (the tanh GELU written as 9 ops) on a
      2048x2048 input: time per call and peak memory (tracemalloc) of one call.

Contenders run interleaved (benchmarks/timing.py); every figure is a median.
Nothing here is asserted by a test. Report `uptime` next to the figures.
BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1 unless set): on a shared,
loaded 2-core machine OpenBLAS's threads spin-wait, and a 128x128 f32 matmul
measured 40 ms instead of 0.06 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tracemalloc
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # see the module doc: BLAS threads spin on a loaded machine
import numpy as np  # noqa: E402
from timing import interleaved  # noqa: E402

import cortex  # noqa: E402
from cortex.examples.small_cnn import ENTRY, build_small_cnn, small_cnn_inputs  # noqa: E402
from cortex.ir import make_context, parse_module  # noqa: E402


def median_seconds(variants: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds per call of each variant, interleaved `repeat` times (after one warm-up each)."""
    for fn in variants.values():
        fn()
    return {name: statistics.median(s.wall) for name, s in interleaved(variants, repeat).items()}


def show(title: str, medians: dict[str, float], base: str) -> None:
    print(f"  {title}")
    for name, seconds in medians.items():
        print(f"    {name:<28} {seconds * 1e3:10.3f} ms   ratio to {base}: {seconds / medians[base]:.3f}")


# ---------------------------------------------------------------- (q) int8


def matmul_module(n: int):
    return parse_module(
        f"""
        func.func @mm(%a: tensor<{n}x{n}xf32>, %b: tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32> {{
          %c = cortex.matmul %a, %b : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
          func.return %c : tensor<{n}x{n}xf32>
        }}
        """
    )


BENCH_MAIN = """
func.func private @rtclock() -> f64
func.func private @printF64(f64)
func.func private @printNewline()
func.func @bench_main() {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %cn = arith.constant {iterations} : index
  %va = arith.constant 0.75 : f32
  %vb = arith.constant -0.5 : f32
  %zero = arith.constant 0.0 : f32
  %ea = tensor.empty() : tensor<{n}x{n}xf32>
  %a = linalg.fill ins(%va : f32) outs(%ea : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %eb = tensor.empty() : tensor<{n}x{n}xf32>
  %b = linalg.fill ins(%vb : f32) outs(%eb : tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
  %t0 = func.call @rtclock() : () -> f64
  %sum = scf.for %i = %c0 to %cn step %c1 iter_args(%acc = %zero) -> (f32) {{
    %r = func.call @mm(%a, %b) : (tensor<{n}x{n}xf32>, tensor<{n}x{n}xf32>) -> tensor<{n}x{n}xf32>
    %x = tensor.extract %r[%c0, %c0] : tensor<{n}x{n}xf32>
    %next = arith.addf %acc, %x : f32
    scf.yield %next : f32
  }}
  %t1 = func.call @rtclock() : () -> f64
  %dt = arith.subf %t1, %t0 : f64
  func.call @printF64(%dt) : (f64) -> ()
  func.call @printNewline() : () -> ()
  %s64 = arith.extf %sum : f32 to f64
  func.call @printF64(%s64) : (f64) -> ()
  func.call @printNewline() : () -> ()
  func.return
}}
"""


def native_seconds(lowered, n: int, iterations: int) -> float:
    """Seconds per call of @mm compiled by mlir-opt to LLVM and run by mlir-runner (timed inside)."""
    from cortex.backends.mlir.upstream import run_on_llvm

    program = lowered.clone()
    bench = parse_module(BENCH_MAIN.format(n=n, iterations=iterations), ctx=make_context(), verify=False)
    for op in list(bench.ops):
        op.detach()
        program.body.block.add_op(op)
    out = run_on_llvm(program, "bench_main", "-O3", timeout=1200)
    return float(out.split()[0]) / iterations


def section_int8(quick: bool) -> None:
    repeat = 5 if quick else 30
    print("(q) int8 vs f32, NumPy backend")
    cnn = build_small_cnn()
    q_cnn, report = cortex.quantize(cnn, small_cnn_inputs(32))
    f_run = cortex.compile(cnn, entry=ENTRY, mode=None)
    q_run = cortex.compile(q_cnn, entry=ENTRY, mode=None)
    x = small_cnn_inputs(1, seed=5)[0]
    show("small CNN, one 1x3x16x16 input", median_seconds({"f32": lambda: f_run(x), "int8": lambda: q_run(x)}, repeat * 10), "f32")

    n = 128 if quick else 512
    rng = np.random.default_rng(0)
    samples = [(rng.standard_normal((n, n)).astype(np.float32), rng.standard_normal((n, n)).astype(np.float32)) for _ in range(4)]
    mm = matmul_module(n)
    q_mm, _ = cortex.quantize(mm, samples, schema="asymmetric", entry="mm")
    f_mm_run = cortex.compile(mm, entry="mm", mode=None)
    q_mm_run = cortex.compile(q_mm, entry="mm", mode=None)
    a, b = samples[0]
    show(f"{n}x{n} matmul graph", median_seconds({"f32": lambda: f_mm_run(a, b), "int8": lambda: q_mm_run(a, b)}, repeat), "f32")
    from cortex.backends.mlir.upstream import mlir_runner_available

    if not mlir_runner_available():
        print("    (mlir-runner not installed: no native figure)")
        return
    iterations = 2 if quick else 10
    native = {}
    for _ in range(1 if quick else 3):  # alternate the two programs, median of the runs
        for name, module in (("f32 native", mm), ("int8 native", q_mm)):
            native.setdefault(name, []).append(native_seconds(cortex.lower(module), n, iterations))
    show(f"{n}x{n} matmul graph, mlir-runner -O3 (linalg to loops, no tiling)", {k: statistics.median(v) for k, v in native.items()}, "f32 native")


# ---------------------------------------------------------------- (l) layout


def conv_module(c: int, hw: int):
    """conv3x3 (c -> c channels, constant weights, pads 1) + relu on a 1xcxhwxhw input."""
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from cortex.dialects import tensor_ops as ops
    from cortex.lowering.builders import dense_attr

    w = np.random.default_rng(1).standard_normal((c, c, 3, 3)).astype(np.float32) * 0.1
    block = Block(arg_types=[TensorType(f32, [1, c, hw, hw])])
    with ImplicitBuilder(block):
        y = ops.Conv2dOp(block.args[0], ops.ConstantOp(dense_attr(w)).result, None, pads=(1, 1, 1, 1)).result
        r = ops.ReluOp(y).result
        func.ReturnOp(r)
    module = ModuleOp([func.FuncOp("conv", ((block.args[0].type,), (r.type,)), Region(block))])
    module.verify()
    return module


def section_layout(quick: bool) -> None:
    repeat = 5 if quick else 30
    print("(l) NCHW vs NHWC, NumPy backend")
    c, hw = (8, 16) if quick else (32, 64)
    nchw = conv_module(c, hw)
    nhwc = nchw.clone()
    cortex.run_passes(nhwc, "cortex-convert-layout{layout=nhwc},canonicalize")
    x = np.random.default_rng(2).standard_normal((1, c, hw, hw)).astype(np.float32)
    a, b = cortex.compile(nchw, entry="conv", mode=None), cortex.compile(nhwc, entry="conv", mode=None)
    show(f"conv3x3 + relu, 1x{c}x{hw}x{hw}, {c} filters", median_seconds({"NCHW": lambda: a(x), "NHWC": lambda: b(x)}, repeat), "NCHW")
    cnn = build_small_cnn()
    cnn_nhwc = cnn.clone()
    cortex.run_passes(cnn_nhwc, "cortex-convert-layout{layout=nhwc},canonicalize")
    x = small_cnn_inputs(1, seed=5)[0]
    a, b = cortex.compile(cnn, entry=ENTRY, mode=None), cortex.compile(cnn_nhwc, entry=ENTRY, mode=None)
    show("small CNN", median_seconds({"NCHW": lambda: a(x), "NHWC": lambda: b(x)}, repeat * 10), "NCHW")


# ---------------------------------------------------------------- (f) fusion


def gelu_module(n: int):
    t = f"tensor<{n}x{n}xf32>"
    return parse_module(
        f"""
        func.func @gelu(%x: {t}) -> {t} {{
          %half = cortex.constant dense<0.5> : tensor<f32>
          %one = cortex.constant dense<1.0> : tensor<f32>
          %c = cortex.constant dense<0.7978845608> : tensor<f32>
          %k = cortex.constant dense<0.044715> : tensor<f32>
          %x2 = cortex.mul %x, %x : ({t}, {t}) -> {t}
          %x3 = cortex.mul %x2, %x : ({t}, {t}) -> {t}
          %kx3 = cortex.mul %k, %x3 : (tensor<f32>, {t}) -> {t}
          %inner = cortex.add %x, %kx3 : ({t}, {t}) -> {t}
          %arg = cortex.mul %c, %inner : (tensor<f32>, {t}) -> {t}
          %th = cortex.tanh %arg : {t} -> {t}
          %one_plus = cortex.add %one, %th : (tensor<f32>, {t}) -> {t}
          %xh = cortex.mul %half, %x : (tensor<f32>, {t}) -> {t}
          %out = cortex.mul %xh, %one_plus : ({t}, {t}) -> {t}
          func.return %out : {t}
        }}
        """
    )


def peak_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    tracemalloc.reset_peak()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def section_fusion(quick: bool) -> None:
    repeat = 5 if quick else 20
    n = 256 if quick else 2048
    print(f"(f) fused vs unfused elementwise chain (tanh GELU as 9 ops), {n}x{n} f32, NumPy backend")
    module = gelu_module(n)
    fused = cortex.compile(module, entry="gelu", mode=None)
    unfused = cortex.compile(module, entry="gelu", mode=None, post_passes=None)
    x = np.random.default_rng(3).standard_normal((n, n)).astype(np.float32)
    np.testing.assert_allclose(fused(x)[0], unfused(x)[0], rtol=1e-6, atol=1e-6)
    show("time per call", median_seconds({"unfused": lambda: unfused(x), "fused": lambda: fused(x)}, repeat), "unfused")
    peaks = {"unfused": peak_bytes(lambda: unfused(x)), "fused": peak_bytes(lambda: fused(x))}
    print("  peak memory of one call (tracemalloc, NumPy buffers)")
    for name, value in peaks.items():
        print(f"    {name:<28} {value / 2**20:10.1f} MiB   ratio to unfused: {value / peaks['unfused']:.3f}")
    print(f"    (the input itself: {x.nbytes / 2**20:.1f} MiB)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes, few repeats (a smoke run)")
    p.add_argument("--int8", action="store_true", help="only section (q)")
    p.add_argument("--layout", action="store_true", help="only section (l)")
    p.add_argument("--fusion", action="store_true", help="only section (f)")
    args = p.parse_args(argv)
    every = not (args.int8 or args.layout or args.fusion)
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1/5/15 min), {os.cpu_count()} CPUs")
    if every or args.int8:
        section_int8(args.quick)
    if every or args.layout:
        section_layout(args.quick)
    if every or args.fusion:
        section_fusion(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
