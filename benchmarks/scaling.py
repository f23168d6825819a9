"""Scaling: frames/s of every engine for 1, 2, 4, ... workers up to the machine's cores, with the hand-written
sequential pipeline's rate beside them.

    python benchmarks/scaling.py                         # 480x640 and 1088x1920, threads and processes
    python benchmarks/scaling.py --sizes 480x640 --ray   # also Ray actors on one node (starts a local Ray)
    python benchmarks/scaling.py --quick                 # smoke run: 96x128, few frames

One process; for each size and worker count the contenders run in turn (A, B, C, A, B, C, ...) over the
same frames of the synthetic video from a fresh state, `--repeat` rounds; figures are medians. Each
engine's pool (processes, Ray actors) is started before its first timed batch and kept, as a user's
second `run_video` keeps it: start-up is printed apart. Efficiency = rate / (workers × the engine's own
1-worker rate). Each engine's CPU a frame is printed beside its rate (`cpu`: the caller process, all its threads,
and for the processes engine its worker processes too; not for Ray, whose actors run in Ray's workers): the
work the engine adds to a frame, which bounds it where every core is busy. For the engines whose frames run
elsewhere (processes, Ray) the caller process's own CPU a frame is printed too (`caller`): the serial work
that bounds the engine where cores are many. The machine load is printed with the figures. No figure is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from handwritten_pipeline import HandwrittenPipeline  # noqa: E402
from timing import load  # noqa: E402

import cortex  # noqa: E402
from cortex.runtime.engines.processes import close_pools, worker_cpu_seconds  # noqa: E402
from cortex.runtime.threads import machine_cores  # noqa: E402
from cortex.video.synthetic import SyntheticVideo  # noqa: E402


def worker_counts(cores: int) -> list[int]:
    counts, c = [], 1
    while c < cores:
        counts.append(c)
        c *= 2
    return [*counts, cores]


def batch_seconds(run, frames, elsewhere=lambda: 0.0) -> tuple[float, float, float]:
    """(wall seconds, the caller process's CPU seconds, all its threads, and the CPU seconds `elsewhere()` counts
    in other processes) of one batch."""
    start, cpu, other = time.perf_counter(), time.process_time(), elsewhere()
    for _ in run(frames):
        pass
    return time.perf_counter() - start, time.process_time() - cpu, elsewhere() - other


def engine_run(compiled, engine: str, workers: int, options: dict):
    def run(frames):
        compiled.reset()
        return compiled.run_video(frames, workers=workers, engine=engine, **options)

    return run


def scaling_table(size: tuple[int, int], frames_n: int, repeat: int, engines: list[str], cores: int) -> str:
    h, w = size
    video = SyntheticVideo(h, w)
    frames = [video.frame(i) for i in range(frames_n)]
    compiled = cortex.compile(cortex.build_l2_pipeline(h, w))
    hand = HandwrittenPipeline(h, w)
    hand_times: list[float] = []
    lines = [f"scaling {h}x{w}, {frames_n} frames a batch, medians of {repeat} ({load()})"]
    options: dict[str, dict] = {}
    if "ray" in engines:  # one Ray and its actors kept across the runs of a worker count, as a user's session keeps them
        from cortex.runtime.engines.ray import RaySession

        options["ray"] = {"session": RaySession(num_cpus=cores)}
    base: dict[str, float] = {}
    rows: list[tuple[int, dict[str, float], dict[str, float]]] = []
    for workers in worker_counts(cores):
        runs = {engine: engine_run(compiled, engine, workers, options.get(engine, {})) for engine in engines}
        startup = {}
        for engine, run in runs.items():  # pools start here, apart from the timed batches
            t = time.perf_counter()
            list(run(frames[: 2 * workers]))
            startup[engine] = time.perf_counter() - t
        times: dict[str, list[float]] = {e: [] for e in engines}
        caller: dict[str, list[float]] = {e: [] for e in engines}  # the caller's CPU per frame
        work: dict[str, list[float]] = {e: [] for e in engines}  # the CPU per frame, caller and worker processes
        order = [*engines, "hand"]  # the hand-written pipeline interleaved with the engines, at every count
        for r in range(repeat):
            for engine in order if r % 2 == 0 else order[::-1]:
                if engine == "hand":
                    hand_times.append(batch_seconds(lambda fs: [hand(f) for f in fs], frames)[0])
                else:
                    wall, cpu, elsewhere = batch_seconds(runs[engine], frames, lambda: worker_cpu_seconds(compiled))
                    times[engine].append(wall)
                    caller[engine].append(cpu / frames_n)
                    work[engine].append((cpu + elsewhere) / frames_n)
        rows.append((workers, {e: frames_n / statistics.median(times[e]) for e in engines}, startup,
                     {e: statistics.median(caller[e]) for e in engines if e != "threads"},
                     {e: statistics.median(work[e]) for e in engines if e != "ray"}))
    close_pools()
    if "ray" in options:
        options["ray"]["session"].close()
    hand_rate = frames_n / statistics.median(hand_times)
    lines.append(f"  hand-written sequential: {hand_rate:7.1f} frames/s (interleaved with the engines)")
    for workers, rates, startup, caller_cpu, work_cpu in rows:
        cells = []
        for engine, rate in rates.items():
            base.setdefault(engine, rate)
            own = f", cpu {1000 * work_cpu[engine]:.1f} ms/f" if engine in work_cpu else ""
            own += f", caller {1000 * caller_cpu[engine]:.1f} ms/f" if engine in caller_cpu else ""
            cells.append(f"{engine} {rate:7.1f}/s {rate / hand_rate:5.2f}× hand {rate / (workers * base[engine]):4.0%} eff "
                         f"(start {startup[engine]:.1f} s{own})")
        if "threads" in rates and "processes" in rates:
            cells.append(f"processes/threads {rates['processes'] / rates['threads']:4.2f}")
        lines.append(f"  workers {workers:3d}: " + " | ".join(cells))
    lines.append(f"  ({load()} after)")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="480x640,1088x1920")
    p.add_argument("--frames", type=int, default=None, help="frames a batch (default: 24 per core, at least 32: 3 chunks a worker for the chunked engines at the most workers)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--cores", type=int, default=None, help="the largest worker count (default: the machine's cores)")
    p.add_argument("--ray", action="store_true", help="also the Ray engine (a local Ray on this machine)")
    p.add_argument("--quick", action="store_true", help="smoke run: 96x128, 8 frames, one round")
    args = p.parse_args(argv)
    cores = args.cores or machine_cores()
    engines = ["threads", "processes"] + (["ray"] if args.ray else [])
    sizes = [(96, 128)] if args.quick else [tuple(int(x) for x in s.split("x")) for s in args.sizes.split(",")]
    frames_n = 8 if args.quick else (args.frames or max(32, 24 * cores))
    repeat = 1 if args.quick else args.repeat
    for size in sizes:
        print(scaling_table(size, frames_n, repeat, engines, cores), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
