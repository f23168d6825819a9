"""Scheduling benchmark: the hand-written sequential pipeline against the compiled one, sequential and
frame-parallel, per mode, at 480×640 and 1080p (padded to 1088×1920, a multiple of the 32-pixel block).

    python benchmarks/bench_schedule.py                 # both sizes, every mode
    python benchmarks/bench_schedule.py --sizes 480x640 --modes balanced --repeat 5
    python benchmarks/bench_schedule.py --quick         # smoke run: 96x128, 6 frames, one repeat
    python benchmarks/bench_schedule.py --ray           # adds the Ray engine (starts a local Ray)

One process; the contenders run in turn (A, B, C, A, B, C, ...) on the same
frames of the synthetic video (a blurred frame included), each over a batch
of frames from a fresh state. Figures are medians over the repeats:
latency = time from a frame entering to its output coming out; throughput =
frames / batch time. The machine load (`os.getloadavg`) is printed with the
figures: other processes on the machine depress every parallel speed-up.
Targets: throughput ≥ 1.8× the hand-written pipeline,
latency ≤ 0.8×. No figure is asserted anywhere.

The `ratio ... frame-parallel throughput` line sets cortex-schedule's bound (`ThroughputBound`:
max(work/N, delayed, recurrence), the delayed part pipelined on the workers) computed from this run's
CPU time per part of the frame split beside the measured throughput: on a loaded machine the
measured figure is the bound times the share of the N cores the process got ("cores busy" / N).

The frame's own work: every compiled contender runs twice, with
`frame_work=True` (the default: scene change decomposed, temporal reuse) and
without ("before": `frame_work=False`), interleaved, so the table
shows each engine before and after; `--scene` (on by default) times scene
change alone per frame after each step: the OpenCV-backed op, decomposed,
+ temporal reuse, + operator stacking, and in float32.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from handwritten_pipeline import HandwrittenPipeline  # noqa: E402
from timing import interleaved, load  # noqa: E402

import cortex  # noqa: E402
from cortex.examples import SCENE_ONLY  # noqa: E402
from cortex.runtime.threads import machine_cores  # noqa: E402
from cortex.video.synthetic import SyntheticVideo  # noqa: E402

MODES = ("balanced", "power_save", "motion")


def sequential(make: Callable[[], Callable]) -> Callable[[list], tuple[list[float], float]]:
    def run(frames):
        pipeline = make()
        latencies = []
        start = time.perf_counter()
        for f in frames:
            t = time.perf_counter()
            pipeline(f)
            latencies.append(time.perf_counter() - t)
        return latencies, time.perf_counter() - start

    return run


def parallel(compiled, workers: int, engine: str = "threads") -> Callable[[list], tuple[list[float], float]]:
    def run(frames):
        compiled.reset()
        entered: list[float] = []

        def source():
            for f in frames:
                entered.append(time.perf_counter())
                yield f

        latencies = []
        start = time.perf_counter()
        for k, _ in enumerate(compiled.run_video(source(), workers=workers, engine=engine)):
            latencies.append(time.perf_counter() - entered[k])
        return latencies, time.perf_counter() - start

    return run


def measure(contenders: dict[str, Callable], frames: list, repeat: int) -> dict[str, tuple[float, float, float, float]]:
    """name → medians of (latency ms, throughput frames/s, process CPU ms per frame, CPU/wall), interleaved.

    CPU/wall is how many cores the process kept busy: on a loaded machine a
    parallel contender can only be as fast as the cores it is given."""
    lat: dict[str, list[float]] = {n: [] for n in contenders}
    fps: dict[str, list[float]] = {n: [] for n in contenders}
    cpu: dict[str, list[float]] = {n: [] for n in contenders}
    busy: dict[str, list[float]] = {n: [] for n in contenders}
    for _ in range(repeat):
        for name, run in contenders.items():
            start = time.process_time()
            latencies, seconds = run(frames)
            used = time.process_time() - start
            lat[name].append(statistics.median(latencies))
            fps[name].append(len(frames) / seconds)
            cpu[name].append(1e3 * used / len(frames))
            busy[name].append(used / seconds)
    return {
        n: (1e3 * statistics.median(lat[n]), statistics.median(fps[n]), statistics.median(cpu[n]), statistics.median(busy[n]))
        for n in contenders
    }


def compiled_for(size, mode, stage_threads=1, frame_work=True):
    module = cortex.build_l2_pipeline(*size)
    compiled = cortex.compile(module, mode=mode, passes=f"cortex-specialize-mode{{mode={mode}}},canonicalize,dce",
                              frame_work=frame_work)
    compiled.stage_threads = stage_threads
    return compiled


BEFORE = " [before]"
"""Suffix of the contenders compiled without the frame-work passes (`frame_work=False`)."""


def bench(size, mode, frames_n, repeat, workers, ray) -> dict[str, tuple[float, float]]:
    h, w = size
    video = SyntheticVideo(h, w)
    frames = [video.frame(i) for i in range(frames_n)]
    contenders: dict[str, Callable] = {"hand-written sequential": sequential(lambda: HandwrittenPipeline(h, w, mode))}
    for suffix, frame_work in (("", True), (BEFORE, False)):
        seq, par = compiled_for(size, mode, frame_work=frame_work), compiled_for(size, mode, frame_work=frame_work)
        stages = compiled_for(size, mode, workers, frame_work=frame_work)
        par.loaded_split()  # load the splits before timing (cortex.compile compiled them)
        stages.loaded_split(stages=True)
        contenders |= {
            f"compiled sequential{suffix}": sequential(lambda seq=seq: (seq.reset(), seq)[1]),
            f"compiled concurrent stages ({workers} threads){suffix}": sequential(lambda stages=stages: (stages.reset(), stages)[1]),
            f"compiled frame-parallel ({workers} threads){suffix}": parallel(par, workers),
        }
    if ray:
        contenders[f"compiled frame-parallel ({workers} Ray actors)"] = parallel(compiled_for(size, mode), workers, "ray")
    return measure(contenders, frames, repeat)


def part_times(size, mode, frames: list, repeat: int) -> dict[str, float]:
    """CPU ms per frame of each part of the frame split (delayed, parallel, recurrence, tail), run in order on one
    thread (`time.thread_time`: the work, whatever the machine's load), medians over `repeat` passes."""
    compiled = compiled_for(size, mode)
    split = compiled.loaded_split()
    samples: dict[str, list[float]] = {name: [] for name in split.parts}
    for _ in range(max(repeat, 1)):
        compiled.reset()
        spent = dict.fromkeys(split.parts, 0.0)
        for frame in frames:
            env = split.enter((frame,), compiled.state)
            for name, part in split.parts.items():
                t = time.thread_time()
                part(env, None)
                spent[name] += time.thread_time() - t
            _, compiled.state = split.outputs(env, (frame,))
        for name, seconds in spent.items():
            samples[name].append(1e3 * seconds / len(frames))
    return {name: statistics.median(ms) for name, ms in samples.items()}


def predicted(times: dict[str, float], workers: int) -> str:
    """cortex-schedule's throughput bound (`ThroughputBound`) from measured part times, pipelined and on the caller."""
    from cortex.passes.schedule import ThroughputBound

    work = sum(times.values())
    bound = ThroughputBound(work, times["delayed"], times["recurrence"], workers)
    caller = ThroughputBound(work, times["delayed"], times["recurrence"], workers, pipelined=False)
    return (f"predicted {1e3 / bound.frame_ms:.2f} frames/s (1 frame per {bound.explain()}; with the delayed part on "
            f"the caller {1e3 / caller.frame_ms:.2f})")


def predicted_batch(times: dict[str, float], workers: int, frames: int, cpu_ms: float) -> str:
    """The same bound for the batch that ran: the run's own CPU per frame (`cpu_ms`: two frames at once are slower
    than the parts alone, and the caller's work counts) per frame, plus the last frame's own path (delayed, parallel,
    tail), of which (N - 1)/N finishes after the other workers ran out of frames (the batch's drain)."""
    per_frame = max(cpu_ms / workers, times["delayed"], times["recurrence"])
    path = times["delayed"] + times["parallel"] + times["tail"]
    batch_ms = frames * per_frame + path * (workers - 1) / workers
    return (f"for this batch ({frames} frames at the run's {cpu_ms:.2f} CPU ms/frame, and its drain): "
            f"{1e3 * frames / batch_ms:.2f} frames/s")


def report(title: str, results: dict[str, tuple[float, float, float, float]]) -> str:
    base_lat, base_fps, _, _ = results["hand-written sequential"]
    width = max(len(n) for n in results)
    header = (f"  {'contender':<{width}}  {'latency ms':>10}  {'× hand':>6}  {'frames/s':>8}  {'× hand':>6}"
              f"  {'CPU ms/frame':>12}  {'cores busy':>10}")
    lines = [title, header]
    for name, (lat, fps, cpu, busy) in results.items():
        lines.append(f"  {name:<{width}}  {lat:>10.2f}  {lat / base_lat:>6.2f}  {fps:>8.2f}  {fps / base_fps:>6.2f}"
                     f"  {cpu:>12.1f}  {busy:>10.2f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])  # the first sentence runs over two lines
    p.add_argument("--sizes", default="480x640,1088x1920")
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--frames", type=int, default=None, help="frames per batch (default: 16 at 480x640, 8 larger)")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=None, help="default: the machine's cores")
    p.add_argument("--scaling", default=None, help="worker counts of the scaling table (default: 1,2,4,... up to 2×cores)")
    p.add_argument("--ray", action="store_true", help="also the Ray engine (starts a local Ray)")
    p.add_argument("--quick", action="store_true", help="smoke run: 96x128, 6 frames, one repeat, balanced")
    p.add_argument("--no-scene", dest="scene", action="store_false", help="skip the scene-change-per-step table")
    p.add_argument("--scene-only", action="store_true", help="only the scene-change-per-step table, per size")
    p.add_argument(
        "--blas-threads", type=int, default=1,
        help="BLAS threads for every contender (default 1: OpenBLAS threads spin on a loaded machine; 0: BLAS default)",
    )
    args = p.parse_args(argv)
    if args.blas_threads > 0:
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=args.blas_threads, user_api="blas")
    if args.quick:
        args.sizes, args.modes, args.frames, args.repeat = "96x128", "balanced", 6, 1
    if args.scene_only:
        for text in args.sizes.split(","):
            print(scene_report(tuple(int(v) for v in text.split("x")), args.repeat, args.frames or 12))
        return 0
    workers = args.workers or machine_cores()
    blas = f"BLAS limited to {args.blas_threads} thread(s)" if args.blas_threads > 0 else "BLAS threads: library default"
    print(f"bench_schedule: {load()}; {workers} workers; {blas}")
    ratios = []
    first = None
    for text in args.sizes.split(","):
        size = tuple(int(v) for v in text.split("x"))
        n = args.frames or (16 if size[0] * size[1] <= 480 * 640 else 8)
        for mode in args.modes.split(","):
            results = bench(size, mode, n, args.repeat, workers, args.ray)
            first = first or (size, mode, n)
            print(report(f"{size[0]}x{size[1]} {mode}, {n} frames per batch, {args.repeat} repeats ({load()})", results))
            base_lat, base_fps, _, _ = results["hand-written sequential"]
            par = f"compiled frame-parallel ({workers} threads)"
            con = f"compiled concurrent stages ({workers} threads)"
            ceiling = workers * results["compiled sequential"][1] / base_fps  # N workers losing nothing
            ratios.append(f"ratio {text} {mode} throughput frame-parallel/hand-written: {results[par][1] / base_fps:.3g}  "
                          f"(target >= 1.8; {workers} × compiled sequential = {ceiling:.3g})")
            ratios.append(f"ratio {text} {mode} throughput compiled sequential/hand-written: {results['compiled sequential'][1] / base_fps:.3g}")
            ratios.append(f"ratio {text} {mode} latency concurrent stages/hand-written: {results[con][0] / base_lat:.3g}  (target <= 0.85, goal 0.8)")
            ratios.append(f"ratio {text} {mode} throughput concurrent stages/hand-written: {results[con][1] / base_fps:.3g}")
            ratios.append(f"ratio {text} {mode} latency compiled sequential/hand-written: {results['compiled sequential'][0] / base_lat:.3g}")
            ratios.append(f"ratio {text} {mode} latency frame-parallel/hand-written: {results[par][0] / base_lat:.3g}")
            times = part_times(size, mode, [SyntheticVideo(*size).frame(i) for i in range(n)], args.repeat)
            ratios.append(f"ratio {text} {mode} frame-parallel throughput: {predicted(times, workers)}; "
                          f"{predicted_batch(times, workers, n, results[par][2])}; measured "
                          f"{results[par][1]:.2f} frames/s (part CPU ms/frame: "
                          + ", ".join(f"{k} {v:.2f}" for k, v in times.items()) + ")")
            for name in (par, con, "compiled sequential"):
                (lat, fps, cpu, _), (lat0, fps0, cpu0, _) = results[name], results[name + BEFORE]
                ratios.append(f"ratio {text} {mode} {name} after/before issue-21 passes: throughput {fps / fps0:.3g}, "
                              f"latency {lat / lat0:.3g}, CPU per frame {cpu / cpu0:.3g}")
        if args.scene:
            print(scene_report(size, args.repeat))
    size, mode, n = first
    counts = [int(c) for c in args.scaling.split(",")] if args.scaling else _scaling(machine_cores())
    if args.quick:
        counts = counts[:2]
    h, w = size
    video = SyntheticVideo(h, w)
    frames = [video.frame(i) for i in range(n)]
    runs = {"hand-written sequential": sequential(lambda: HandwrittenPipeline(h, w, mode))}
    for c in counts:
        compiled = compiled_for(size, mode)
        compiled.loaded_split()
        runs[f"{c} worker{'s' if c > 1 else ''}"] = parallel(compiled, c)
    scaling = measure(runs, frames, args.repeat)
    base = scaling["hand-written sequential"][1]
    print(f"scaling, {h}x{w} {mode}, frame-parallel threads ({load()})")
    for name, (_, fps, _, busy) in scaling.items():
        print(f"  {name:<24} {fps:8.2f} frames/s  {fps / base:5.2f}× hand-written  {busy:5.2f} cores busy")
    print("\n".join(ratios))
    print(f"bench_schedule: done; {load()}")
    return 0


SCENE_STEPS = {
    "scene_change op (OpenCV-backed extern)": {"frame_work": False},
    "decomposed (f64)": {"frame_work": False, "passes": "cortex-decompose-scene-change"},
    "+ temporal reuse (f64)": {"frame_work": True},
    "+ operator stacking (f64)": {"frame_work": False, "passes": "cortex-decompose-scene-change,"
                                  "cortex-temporal-reuse{report=false},cortex-stack-stencils"},
    "+ float32 (precision=\"f32\")": {"frame_work": True, "precision": "f32"},
    "+ float32 + stacking": {"frame_work": False, "passes": "cortex-decompose-scene-change{precision=f32},"
                             "cortex-temporal-reuse{report=false},cortex-stack-stencils"},
}


def scene_report(size, repeat: int, frames_n: int = 12) -> str:
    """ms per frame of scene change (+ gray) after each step, interleaved, medians; with the error vs the op."""
    h, w = size
    video = SyntheticVideo(h, w)
    frames = [video.frame(i) for i in range(frames_n)]
    text = SCENE_ONLY.format(h=h, w=w)
    pipelines = {name: cortex.compile(cortex.parse(text), entry="scene", mode=None, **kw) for name, kw in SCENE_STEPS.items()}
    scores = {name: [p(f)[0] for f in frames] for name, p in pipelines.items()}
    samples = interleaved({name: (lambda p=p: [p(f) for f in frames]) for name, p in pipelines.items()}, max(repeat, 3),
                          prepare={name: p.reset for name, p in pipelines.items()})
    times = {n: [t / len(frames) for t in s.wall] for n, s in samples.items()}
    cpu = {n: [t / len(frames) for t in s.cpu] for n, s in samples.items()}
    base_name = next(iter(pipelines))
    base, base_cpu = statistics.median(times[base_name]), statistics.median(cpu[base_name])
    lines = [f"scene change (+ gray) per frame, {h}x{w}, {frames_n} frames, medians of {max(repeat, 3)} ({load()})"]
    for name in pipelines:
        ms, cpu_ms = statistics.median(times[name]), statistics.median(cpu[name])
        err = max(abs(a - b) for a, b in zip(scores[name], scores[base_name]))
        lines.append(f"  {name:<42} wall {1e3 * ms:8.2f} ms ({ms / base:5.2f}×)  CPU {1e3 * cpu_ms:8.2f} ms "
                     f"({cpu_ms / base_cpu:5.2f}× the op)  max |Δscene| {err:.2e}")
    return "\n".join(lines)


def _scaling(cores: int) -> list[int]:
    counts, c = [], 1
    while c <= max(2 * cores, 2):
        counts.append(c)
        c *= 2
    return counts


if __name__ == "__main__":
    sys.exit(main())
