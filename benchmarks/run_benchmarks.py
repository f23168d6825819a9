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

Competing variants run interleaved (benchmarks/timing.py) so that machine noise
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
from timing import interleaved  # noqa: E402

import cortex  # noqa: E402
from cortex.driver import build_pipeline, compile_program  # noqa: E402
from cortex.ir import make_context, parse_module, to_text  # noqa: E402
from cortex.runtime.pipeline import LoadedProgram  # noqa: E402

L2_FILE = Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir"
CLEANUP = "canonicalize,cse,dce"


# --------------------------------------------------------------------------- timing helpers


def median_ms(seconds: Sequence[float]) -> float:
    return 1e3 * statistics.median(seconds) if seconds else float("nan")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in header]] + [[f"{c:.3f}" if isinstance(c, float) else str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    fmt = lambda r: "  " + "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))  # noqa: E731
    return "\n".join([title, fmt(cells[0]), "  " + "  ".join("-" * w for w in widths), *map(fmt, cells[1:])])


def ratio_line(name: str, value: float, target: str) -> str:
    return f"ratio {name}: {value:.3g}  (target {target})"


# --------------------------------------------------------------------------- (a) L2 pipeline

COMPILABLE_STAGES = ("gray", "center_crop", "saliency_dft", "motion_map", "score_fusion", "temporal_smooth")
MODES = ("balanced", "power_save", "motion")


def bench_pipeline(frame_count: int, warmup: int, modes: Sequence[str], size: tuple[int, int] | None) -> tuple[str, list[str]]:
    """Both backends exactly as cortex-run builds them: the bundled (shape-generic) pipeline bound to 480x640, or to `size`."""
    from cortex.frame_runners import make_runner
    from cortex.video.source import open_video

    h, w = size or (480, 640)
    module = cortex.build_l2_pipeline(h, w)
    frames = list(open_video(None, frames=warmup + frame_count, height=h, width=w))  # decoded up front: untimed
    rows, per_stage, ratios = [], {}, []
    for mode in modes:
        backends = {name: make_runner(backend, module, "l2_frame", mode, None)
                    for name, backend in (("reference", None), ("numpy", "numpy"))}
        samples: dict[tuple[str, str], list[float]] = {}  # (what, backend) -> seconds per frame
        max_diff = 0.0
        for index, frame in enumerate(frames):
            # Interleaved, and in alternating order (AB, BA, ...), so that neither backend
            # is always the one that finds the frame in cache.
            order = list(backends.items()) if index % 2 == 0 else list(backends.items())[::-1]
            scores = {}
            for name, backend in order:
                start = time.perf_counter()
                scores[name] = backend(frame)[1]
                seconds = time.perf_counter() - start
                stages = backend.stage_times(reset=True).stages
                if index < warmup:
                    continue
                per_kind = {"frame": seconds, "compilable": 0.0, "external": 0.0}
                for stage in stages.values():
                    if stage.name in COMPILABLE_STAGES:
                        per_kind["compilable"] += stage.seconds
                    elif stage.kind == "external":
                        per_kind["external"] += stage.seconds
                for stage_name in COMPILABLE_STAGES:
                    stage = stages.get(stage_name)
                    per_kind[stage_name] = stage.seconds if stage else 0.0
                for what, value in per_kind.items():
                    samples.setdefault((what, name), []).append(value)
            max_diff = max(max_diff, float(abs(scores["reference"] - scores["numpy"]).max()))
        med = {key: median_ms(values) for key, values in samples.items()}
        ratio = {what: med[(what, "numpy")] / med[(what, "reference")] for what in ("frame", "compilable", "external")}
        rows.append(
            [
                mode,
                *(f"{med[(what, 'reference')]:.2f} / {med[(what, 'numpy')]:.2f}  {ratio[what]:.3f}" for what in ("frame", "compilable", "external")),
                f"{max_diff:.1e}",
            ]
        )
        per_stage[mode] = med
        ratios.append(ratio_line(f"pipeline {mode} compilable stages numpy/reference", ratio["compilable"], "<= 0.5"))
        ratios.append(ratio_line(f"pipeline {mode} whole frame numpy/reference", ratio["frame"], "<= 1.0"))
    out = table(
        f"(a) L2 pipeline {h}x{w}, synthetic video, {frame_count} frames per mode after {warmup} warm-up: "
        "median ms/frame, reference / numpy  numpy/reference",
        ["mode", "whole frame", "compilable stages", "external (OpenCV) stages", "max |score diff|"],
        rows,
    )
    stage_rows = [
        [stage, *(f"{per_stage[m][(stage, 'reference')]:.3f} / {per_stage[m][(stage, 'numpy')]:.3f}" for m in modes)]
        for stage in COMPILABLE_STAGES
    ]
    out += "\n" + table("  per compilable stage: median ms/frame, reference / numpy", ["stage", *modes], stage_rows)
    return out, ratios


# --------------------------------------------------------------------------- (b) vs xDSL's interpreter


def bench_interpreter(n_ops: int, size: int, repeat: int) -> tuple[str, list[str]]:
    import numpy as np
    import xdsl_interp

    graph = random_tensor_graph(n_ops, seed=2, size=size)  # a seed whose values stay finite and varied
    compilation = compile_program(graph, entry="graph", mode=None)
    compiled = LoadedProgram(compilation.program)
    lowered = compilation.lowered  # the very IR the NumPy backend was generated from
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((size, size)).astype(np.float32) for _ in range(len(compiled.inputs))]
    expected = compiled(*inputs)
    interpreted = xdsl_interp.InterpretedFunction(lowered, "graph")
    got = interpreted(*inputs)
    rel = max(relative_difference(a, b) for a, b in zip(got, expected))
    inner = max(1, int(0.2 / _seconds(lambda: compiled(*inputs))))  # NumPy calls per sample: ~0.2 s
    times = interleaved(
        {
            "xdsl": lambda: interpreted(*inputs),
            "numpy": lambda: [compiled(*inputs) for _ in range(inner)],
        },
        repeat,
    )
    t_x, t_np = median_ms(times["xdsl"].wall), median_ms(times["numpy"].wall) / inner
    counts = {}
    for op in lowered.walk():
        if op.name.startswith("linalg.") and op.name != "linalg.yield":
            counts[op.name] = counts.get(op.name, 0) + 1
    ops = ", ".join(f"{n} {k.removeprefix('linalg.')}" for k, n in sorted(counts.items()))
    out = table(
        f"(b) random tensor graph, {n_ops} cortex ops on {size}x{size} f32, lowered to linalg ({ops}): median ms per call",
        ["runner", "ms/call", "max rel diff vs numpy"],
        [["xDSL interpreter", t_x, f"{rel:.1e}"], ["NumPy backend", t_np, "-"]],
    )
    return out, [ratio_line("numpy backend speed-up over the xDSL interpreter", t_x / t_np, ">= 1000")]


def relative_difference(a, b) -> float:
    """Largest |a - b| / (|b| + 1e-6), where equal values (inf included) and shared NaNs count as 0."""
    import numpy as np

    same = (a == b) | (np.isnan(a) & np.isnan(b))
    with np.errstate(invalid="ignore", over="ignore"):
        rel = np.where(same, 0.0, np.abs(a.astype(np.float64) - b) / (np.abs(b.astype(np.float64)) + 1e-6))
    return float(np.max(rel))


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return max(time.perf_counter() - start, 1e-7)


# --------------------------------------------------------------------------- (c) compile time


def compile_in_process(text: str) -> dict[str, float]:
    """Seconds for parse (+verify), the cleanup pipeline, and printing, of one module."""
    t0 = time.perf_counter()
    module = parse_module(text, "<bench>")
    t1 = time.perf_counter()
    build_pipeline(CLEANUP).apply(make_context(), module)  # as cortex-opt runs it (parse already verified)
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
    parser.add_argument("--frames", type=int, default=None, help="(a) frames per mode (default 30, quick 2)")
    args = parser.parse_args(argv)
    if not (args.pipeline or args.interp or args.compile):
        args.pipeline = args.interp = args.compile = True
    repeat = args.repeat or (1 if args.quick else 3)

    print(f"cortex benchmarks: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    frames = args.frames or (2 if args.quick else 30)
    ratios: list[str] = []
    if args.pipeline:
        text, lines = bench_pipeline(frames, 1 if args.quick else 3, MODES, (96, 128) if args.quick else None)
        print(text, flush=True)
        ratios += lines
    if args.interp:
        text, lines = bench_interpreter(12 if args.quick else 40, 4 if args.quick else 16, repeat)
        print(text, flush=True)
        ratios += lines
    if args.compile:
        sizes = (100, 200) if args.quick else (1000, 2000, 4000, 8000)
        text, lines = bench_compile(sizes, repeat)
        print(text, flush=True)
        ratios += lines
    print("\n".join(ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
