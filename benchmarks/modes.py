"""What picking the mode per call costs: an all-power_save run of the multi-mode program against the
single-mode power_save program.

    python benchmarks/modes.py [--size 480x640] [--frames 20] [--rounds 8] [--block 5] [--quick]

Both are the L2 pipeline compiled as `cortex.compile` does (the multi-mode one with `modes="all"`,
every call with `mode="power_save"`), over the same synthetic frames. Two comparisons, interleaved
(`timing.interleaved`, each call timed on its own, the order alternating per round):

- sequential calls: one frame per timed call, `compiled(frame)` against `compiled(frame, mode=...)`;
- `run_video` on threads: one timed call per `--frames` frames, `modes=["power_save"] * n` against none.

Prints the medians and `ratio multi/single throughput` (single's median time over multi's: 1.0 is
equal, the target is >= 0.93) for each, and the machine's load.
"""

from __future__ import annotations

import argparse
import itertools

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
    args = parser.parse_args(argv)
    if args.quick:
        args.size, args.frames, args.rounds, args.block = "64x96", 4, 2, 2
    h, w = (int(v) for v in args.size.split("x"))
    shape = (h, w, 3)
    video = SyntheticVideo(max(h, 64), max(w, 64))
    frames = [video.frame(i)[:h, :w].copy() for i in range(args.frames)]
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


if __name__ == "__main__":
    raise SystemExit(main())
