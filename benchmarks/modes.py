"""What picking the mode per call costs: an all-power_save run of the multi-mode program against the
single-mode power_save program.

    python benchmarks/modes.py [--size 480x640] [--frames 20] [--rounds 8] [--block 5] [--quick]
    python benchmarks/modes.py --switching [--seed 0] [--chunk 4] ...

Both are the L2 pipeline compiled as `cortex.compile` does (the multi-mode one with `modes="all"`,
every call with `mode="power_save"`), over the same synthetic frames. Two comparisons, interleaved
(`timing.interleaved`, each call timed on its own, the order alternating per round):

- sequential calls: one frame per timed call, `compiled(frame)` against `compiled(frame, mode=...)`;
- `run_video` on threads: one timed call per `--frames` frames, `modes=["power_save"] * n` against none.

Prints the medians and `ratio multi/single throughput` (single's median time over multi's: 1.0 is
equal, the target is >= 0.93) for each, and the machine's load.

`--switching` measures a mode picked at random per frame instead (seeded, `--seed`), on the multi-mode
program alone, interleaved, one timed call per `--frames` frames: the frames called one after the other in
their modes, then on threads and on processes (chunks of `--chunk` frames) each
`run_video(frames, workers=..., modes=schedule)` (frames in flight across switches) and the same run
drained at every switch (each run of one mode through the variant's own `run_video`). The processes'
pools are started before the timing (one untimed run of each). It prints each against the sequential
calls, `ratio in flight/drained throughput` per engine, and how many runs of one mode the schedule has.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import random

from timing import interleaved, load

import cortex
from cortex.video.synthetic import SyntheticVideo


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="480x640")
    parser.add_argument("--frames", type=int, default=20, help="frames per run_video call (and distinct frames)")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--block", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--quick", action="store_true", help="smoke run: 64x96, 4 frames, 2 rounds")
    parser.add_argument("--switching", action="store_true", help="a random mode per frame: run_video against calls")
    parser.add_argument("--seed", type=int, default=0, help="the random schedule's seed (--switching)")
    parser.add_argument("--chunk", type=int, default=4, help="frames a worker process gets at once (--switching)")
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.frames, args.rounds, args.block = "64x96", 4, 2, 2
    h, w = (int(v) for v in args.size.split("x"))
    shape = (h, w, 3)
    video = SyntheticVideo(max(h, 64), max(w, 64))
    frames = [video.frame(i)[:h, :w].copy() for i in range(args.frames)]
    if args.switching:
        return switching(args, frames, shape)
    single = cortex.compile(cortex.examples.L2_PIPELINE, mode="power_save").specialize(shape)
    multi = cortex.compile(cortex.examples.L2_PIPELINE, modes="all").specialize(shape)
    assert multi.modes[0] != "power_save", "the default mode must not be the one measured"

    single_frames, multi_frames = itertools.cycle(frames), itertools.cycle(frames)
    calls = interleaved({
        "single": lambda: single(next(single_frames)),
        "multi": lambda: multi(next(multi_frames), mode="power_save"),
    }, rounds=args.rounds, block=args.block)
    schedule = ["power_save"] * len(frames)
    runs = interleaved({
        "single": lambda: list(single.run_video(frames, workers=args.workers)),
        "multi": lambda: list(multi.run_video(frames, workers=args.workers, modes=schedule)),
    }, rounds=args.rounds, block=1)
    print(f"L2 {h}x{w}, power_save: single-mode program vs multi-mode program (modes='all'), interleaved; {load()}")
    for title, samples, unit in (("sequential calls", calls, "frame"),
                                 (f"run_video threads x{args.workers}, {len(frames)} frames", runs, "run")):
        s, m = samples["single"].median_us() / 1e3, samples["multi"].median_us() / 1e3
        print(f"  {title:<40} single {s:9.3f} ms/{unit}   multi {m:9.3f} ms/{unit}")
        print(f"ratio multi/single throughput ({title}) {s / m:.3f}")
    print(f"frames per mode (multi): {dict(multi.frames_per_mode)}")
    return 0


def switching(args: argparse.Namespace, frames: list, shape: tuple[int, int, int]) -> int:
    """A random mode per frame, the multi-mode program five ways: sequential calls, and on threads and on
    processes `run_video` with frames in flight across switches and `run_video` drained at each switch (each
    run of one mode on its own, what an engine without per-frame variants gets: `ModeSwitch._runs`)."""
    from cortex.runtime.engines.processes import close_pools

    multi = cortex.compile(cortex.examples.L2_PIPELINE, modes="all").specialize(shape)
    rng = random.Random(args.seed)
    schedule = [rng.choice(multi.modes) for _ in frames]
    runs = 1 + sum(a != b for a, b in itertools.pairwise(schedule))
    options = {"threads": {}, "processes": {"chunk": args.chunk}}

    def sequential() -> None:
        for frame, mode in zip(frames, schedule):
            multi(frame, mode=mode)

    def in_flight(engine: str) -> None:
        list(multi.run_video(frames, workers=args.workers, engine=engine, modes=schedule, **options[engine]))

    def drained(engine: str) -> None:
        list(multi._runs(iter(frames), multi.schedule(schedule), args.workers, engine, options[engine]))

    contenders = {"sequential": sequential}
    for engine in options:
        contenders[f"{engine}_in_flight"] = functools.partial(in_flight, engine)
        contenders[f"{engine}_drained"] = functools.partial(drained, engine)
    try:
        for warm in ("processes_in_flight", "processes_drained"):  # the pools start here, untimed
            multi.reset()
            contenders[warm]()
        samples = interleaved(contenders, rounds=args.rounds, block=1, prepare={name: multi.reset for name in contenders})
    finally:
        close_pools()
    h, w = shape[:2]
    print(f"L2 {h}x{w}, a random mode per frame ({len(frames)} frames, {runs} runs of one mode, seed {args.seed}): "
          f"run_video x{args.workers} (processes: chunks of {args.chunk}) vs sequential calls, interleaved; {load()}")
    ms = {name: samples[name].median_us() / 1e3 / len(frames) for name in samples}
    print("  " + "   ".join(f"{name} {value:9.3f} ms/frame" for name, value in ms.items()))
    for engine in options:
        flight, drain = ms[f"{engine}_in_flight"], ms[f"{engine}_drained"]
        print(f"ratio {engine} run_video/sequential throughput {ms['sequential'] / flight:.3f}")
        print(f"ratio {engine} drained run_video/sequential throughput {ms['sequential'] / drain:.3f}")
        print(f"ratio {engine} in flight/drained throughput {drain / flight:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
