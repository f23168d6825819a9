"""What the memory plan buys: page faults and time per frame, plan on against plan off, in one plain process.

    python benchmarks/memory_plan.py [--size 1088x1920] [--rounds 4] [--block 3]

The L2 pipeline as a library user compiles it (`cortex.compile`, default
mode), run over the synthetic video under glibc's default malloc (no
`MALLOC_*` setting, no mallopt). "on": the generated code writes its large
intermediates into the program's buffer pool and text_roi keeps this
thread's MSER detector. "off": the pool hands out fresh arrays
(`BufferPool.enabled = False`) and text_roi gets a new detector per frame,
as before the plan. Contenders interleaved (benchmarks/timing.py); per frame,
minor page faults (`ru_minflt`) and wall ms, printed as medians, with the
pool's working set per frame in flight and the load.
"""

from __future__ import annotations

import argparse
import resource
import statistics

from timing import interleaved, load

import cortex
from cortex.semantics import vision_kernels
from cortex.video.synthetic import SyntheticVideo


def faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1088x1920")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--block", type=int, default=3)
    args = parser.parse_args(argv)
    h, w = (int(v) for v in args.size.split("x"))
    compiled = cortex.compile(cortex.build_l2_pipeline(h, w))
    pool = compiled._loaded.namespace.get("_pool")
    video = SyntheticVideo(h, w)
    frames = [video.frame(i) for i in range(8)]
    counts: dict[str, list[int]] = {"on": [], "off": []}
    at = [0]

    def frame(plan: str):
        def run() -> None:
            if pool is not None:
                pool.enabled = plan == "on"
            if plan == "off":
                vision_kernels._DETECTORS.__dict__.pop("mser", None)  # a new detector, as each frame made one
            before = faults()
            compiled(frames[at[0] % len(frames)])
            counts[plan].append(faults() - before)
            at[0] += 1
        return run

    for plan in ("off", "on"):  # warm-up: both plans' memory allocated once
        frame(plan)()
    counts = {"on": [], "off": []}
    samples = interleaved({"off": frame("off"), "on": frame("on")}, rounds=args.rounds, block=args.block)
    print(f"L2 pipeline {h}x{w}, {args.rounds * args.block} frames per plan, glibc's default malloc; {load()}")
    for plan in ("off", "on"):
        ms = 1e3 * statistics.median(samples[plan].wall)
        cpu = 1e3 * statistics.median(samples[plan].cpu)
        print(f"  plan {plan:3}: {statistics.median(counts[plan]):>8.0f} faults/frame   {ms:8.1f} ms/frame   {cpu:8.1f} ms CPU/frame")
    print(f"  working set per frame in flight (buffer pool): {compiled.working_set() / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
