"""What the relative (`auto`) blur gate costs: its two window ops against the whole compiled frame.

    python benchmarks/blur_gate.py [--frames 40] [--size 480x640]

The L2 pipeline compiled as cortex-run builds it (power_save specialised,
canonicalize, dce; profiled per source op), run over the synthetic video
with `--blur-threshold auto`'s inputs. Per frame: ms of window_median,
window_push and the whole frame; printed as medians, and the gate's share.
One process; the gate and the frame are timed in the same calls.
"""

from __future__ import annotations

import argparse
import statistics

import cortex
from cortex.semantics.modes import BLUR_AUTO
from cortex.video.synthetic import SyntheticVideo

GATE_OPS = ("sharpness_median", "new_history")  # the window ops' origins (result names) in the L2 pipeline


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=40)
    parser.add_argument("--size", default="480x640")
    args = parser.parse_args()
    h, w = (int(v) for v in args.size.split("x"))
    module = cortex.build_l2_pipeline(h, w)
    compiled = cortex.compile(module, mode="power_save", weights=dict(BLUR_AUTO))
    compiled.profiling = True
    video = SyntheticVideo(h, w)
    gate, frame = [], []
    for i in range(args.frames + 3):
        compiled.profile(reset=True)
        compiled(video.frame(i))
        profile = compiled.profile()
        if i >= 3:  # warm-up
            gate.append(1e3 * sum(profile.get(k, 0.0) for k in GATE_OPS))
            frame.append(1e3 * sum(profile.values()))
    g, f = statistics.median(gate), statistics.median(frame)
    print(f"L2 {h}x{w} power_save, compiled, {args.frames} frames (medians)")
    print(f"  window ops (median + push)  {g:8.3f} ms/frame")
    print(f"  whole frame (profiled ops)  {f:8.3f} ms/frame")
    print(f"ratio auto-gate/frame {g / f:.4f}")


if __name__ == "__main__":
    main()
