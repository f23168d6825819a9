"""Float32 scene change: its error against float64, and whether any decision changes.

    python benchmarks/scene_precision.py                     # synthetic 480x640 + OpenCV's sample clips
    python benchmarks/scene_precision.py --frames 60 --clips ''   # the synthetic video only

`cortex.compile(..., precision="f32")` (or `fast-math=true` in `passes`)
computes scene change's SSIM in float32; float64 is the default. Scene change
feeds one decision, the reset of temporal smoothing (scene > 0.5); the blur
gate reads only the sharpness. Per video this prints, over its frames:
the largest |scene_f32 − scene_f64| and relative error, the closest any f64
score came to the reset threshold (the margin an error would have to cross),
how many reset decisions differ, how many gate decisions differ, and whether
the whole pipeline's scores and JPEG bytes are identical in f32 and f64 (with
the auto gate, cortex-run's default). Also the time per frame of both
(interleaved; the load is printed). No figure is asserted anywhere.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from pathlib import Path

import numpy as np

import cortex
from cortex.examples import SCENE_ONLY
from cortex.semantics import defaults as D
from cortex.semantics.modes import BLUR_AUTO
from cortex.video.source import open_video

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import interleaved, load  # noqa: E402

CLIPS = "/usr/share/doc/opencv-doc/examples/data/*.avi"


def gated(outputs) -> list[bool]:
    previous = None
    out = []
    for _, score in outputs:
        out.append(previous is not None and np.asarray(score).tobytes() == previous)
        previous = np.asarray(score).tobytes()
    return out


def compare(name: str, frames: list[np.ndarray]) -> str:
    h, w = frames[0].shape[:2]
    scene = {p: cortex.compile(cortex.parse(SCENE_ONLY.format(h=h, w=w)), entry="scene", mode=None, precision=p, frame_work=True)
             for p in ("f64", "f32")}
    values = {p: np.array([s(f)[0] for f in frames], np.float64) for p, s in scene.items()}
    first = frames[:10]
    times = interleaved({p: (lambda s=s: [s(f) for f in first]) for p, s in scene.items()}, 3,
                        prepare={p: s.reset for p, s in scene.items()})
    err = np.abs(values["f32"] - values["f64"])
    rel = err / np.maximum(np.abs(values["f64"]), 1e-12)
    threshold = D.SMOOTH_RESET_THRESHOLD
    resets = {p: values[p] > threshold for p in values}
    margin = float(np.min(np.abs(values["f64"] - threshold)))
    module = cortex.build_l2_pipeline(h, w)
    full = {p: cortex.compile(module, mode="balanced", weights=BLUR_AUTO, precision=p, frame_work=True) for p in ("f64", "f32")}
    outs = {p: [c(f) for f in frames] for p, c in full.items()}
    same = all(
        np.asarray(a).tobytes() == np.asarray(b).tobytes() for x, y in zip(outs["f64"], outs["f32"]) for a, b in zip(x, y)
    )
    gate_diff = sum(a != b for a, b in zip(gated(outs["f64"]), gated(outs["f32"])))
    ms = {p: 1e-3 * t.median_us() / len(first) for p, t in times.items()}
    return (
        f"  {name:<22} {len(frames):4d} frames {h}x{w}: max |Δ| {err.max():.2e}  max rel {rel.max():.2e}  "
        f"resets f64 {int(resets['f64'].sum())}, differing {int((resets['f64'] != resets['f32']).sum())}  "
        f"closest f64 score to {threshold}: {margin:.3g}  gate decisions differing {gate_diff}  "
        f"outputs identical {same}  scene+gray ms/frame f64 {ms['f64']:.2f} f32 {ms['f32']:.2f} ({ms['f32'] / ms['f64']:.2f}×)"
    )


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--frames", type=int, default=120, help="frames per clip (the synthetic video: 60)")
    p.add_argument("--clips", default=CLIPS, help="glob of clips ('' for none)")
    args = p.parse_args(argv)
    print(f"scene_precision: float32 vs float64 scene change ({load()})")
    videos = [("synthetic", open_video(None, frames=60))]
    for path in sorted(glob.glob(args.clips)) if args.clips else []:
        videos.append((os.path.basename(path), open_video(path, frames=args.frames)))
    for name, source in videos:
        print(compare(name, list(source)), flush=True)
    print(f"scene_precision: done ({load()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
