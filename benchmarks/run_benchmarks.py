"""Cortex benchmarks: every figure is measured in this one process, interleaved.

    python benchmarks/run_benchmarks.py            # all sections
    python benchmarks/run_benchmarks.py --compile  # only (c)
    python benchmarks/run_benchmarks.py --quick    # smoke run: tiny sizes, one repeat

Sections:
  (a) --pipeline  the L2 pipeline per frame, NumPy backend vs the reference
                  interpreter, per mode: the whole frame and the compilable
                  stages only (targets: compilable <= 0.5x, frame <= 1.0x);
  (b) --interp    the NumPy backend vs xDSL's own interpreter on the same
                  lowered linalg IR of a small tensor graph (target >= 1000x);
  (c) --compile   cortex-opt compile time (parse + canonicalize,cse,dce + print)
                  for the L2 pipeline and random graphs of 1k..8k ops, in
                  process and as a CLI subprocess (target: 8k/4k <= 2.3).

Competing variants run alternately (A, B, A, B, ...) so that machine noise
hits both; the figures are medians. Each section prints a compact table and
`ratio` lines; no figure here is asserted anywhere.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from graphs import count_ops, random_tensor_graph  # noqa: E402

import cortex  # noqa: E402
from cortex.ir import parse_module, to_text  # noqa: E402
from cortex.passes.pipeline import run_pipeline  # noqa: E402

L2_FILE = Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir"
CLEANUP = "canonicalize,cse,dce"


# --------------------------------------------------------------------------- timing helpers


def interleaved(variants: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Seconds of each call, the variants called in turn (A, B, A, B, ...) `repeat` times."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, fn in variants.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    return times


def median_ms(seconds: Sequence[float]) -> float:
    return 1e3 * statistics.median(seconds) if seconds else float("nan")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in header]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fmt = lambda r: "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([title, fmt(cells[0]), "  " + "  ".join("-" * w for w in widths), *map(fmt, cells[1:])])


def ratio_line(name: str, value: float, target: str) -> str:
    return f"ratio {name}: {value:.3g}  (target {target})"


# --------------------------------------------------------------------------- (c) compile time


def compile_in_process(text: str) -> dict[str, float]:
    """Seconds for parse (+verify), the cleanup pipeline, and printing, of one module."""
    t0 = time.perf_counter()
    module = parse_module(text, "<bench>")
    t1 = time.perf_counter()
    run_pipeline(module, CLEANUP)
    t2 = time.perf_counter()
    to_text(module)
    t3 = time.perf_counter()
    return {"parse": t1 - t0, "passes": t2 - t1, "print": t3 - t2, "total": t3 - t0}


def compile_cli(path: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "cortex.tools.cortex_opt", str(path), "-p", CLEANUP, "-o", os.devnull],
        check=True,
    )
    return time.perf_counter() - start


def bench_compile(sizes: Sequence[int], repeat: int) -> tuple[str, list[str]]:
    inputs: dict[str, str] = {"l2_pipeline": L2_FILE.read_text()}
    for n in sizes:
        graph = random_tensor_graph(n, seed=n)
        assert count_ops(graph) == n
        inputs[f"graph {n} ops"] = to_text(graph)
    samples: dict[str, dict[str, list[float]]] = {k: {} for k in inputs}
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for i, (name, text) in enumerate(inputs.items()):
            paths[name] = Path(tmp) / f"input{i}.mlir"
            paths[name].write_text(text)
        for _ in range(repeat):  # round-robin over the inputs, so noise spreads over all sizes
            for name, text in inputs.items():
                for key, seconds in compile_in_process(text).items():
                    samples[name].setdefault(key, []).append(seconds)
                samples[name].setdefault("cli", []).append(compile_cli(paths[name]))
    keys = ("parse", "passes", "print", "total", "cli")
    rows = [[name, *(median_ms(samples[name][k]) for k in keys)] for name in inputs]
    out = table(
        f"(c) cortex-opt -p {CLEANUP}: median ms over {repeat} run(s) (in-process parse/passes/print/total; cli = subprocess)",
        ["input", *keys],
        rows,
    )
    ratios = []
    if len(sizes) >= 2:
        big, small = f"graph {sizes[-1]} ops", f"graph {sizes[-2]} ops"
        label = f"{sizes[-1]}/{sizes[-2]}"
        for key in ("total", "passes"):
            r = statistics.median(samples[big][key]) / statistics.median(samples[small][key])
            ratios.append(ratio_line(f"compile {key} {label} ops", r, f"<= {1.15 * sizes[-1] / sizes[-2]:.3g}; linear = {sizes[-1] / sizes[-2]:.3g}"))
    return out, ratios


# --------------------------------------------------------------------------- driver


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pipeline", action="store_true", help="(a) L2 pipeline: NumPy backend vs reference")
    parser.add_argument("--interp", action="store_true", help="(b) NumPy backend vs xDSL interpreter")
    parser.add_argument("--compile", action="store_true", help="(c) cortex-opt compile time")
    parser.add_argument("--quick", action="store_true", help="smoke run: tiny sizes, one repeat")
    parser.add_argument("--repeat", type=int, default=None, help="repeats per measurement (default 3, quick 1)")
    args = parser.parse_args(argv)
    if not (args.pipeline or args.interp or args.compile):
        args.pipeline = args.interp = args.compile = True
    repeat = args.repeat or (1 if args.quick else 3)

    print(f"cortex benchmarks: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    ratios: list[str] = []
    if args.compile:
        sizes = (100, 200) if args.quick else (1000, 2000, 4000, 8000)
        text, lines = bench_compile(sizes, repeat)
        print(text, flush=True)
        ratios += lines
    print("\n".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
