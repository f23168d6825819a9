"""BLAS or elementwise for the tiny contractions the NumPy emitter meets in the L2 pipeline.

The emitter turns gray (a 3-term weighted sum per pixel) into `pixels @ weights` (a BLAS gemv) and
the window median's rank count (a 25-term sum) into `mask @ ones`; the reference kernels compute
the same sums elementwise. BLAS sums in a CPU-dependent order, so the two differ by an ULP on some
pixels (tests compare them within float32 rounding: tests/helpers/numerics.py). Whether that is
worth it is a speed question: this times each generated form against the elementwise form the
kernels use, interleaved in one process, and prints medians, minima and the ratio.

    python benchmarks/tiny_contractions.py [--repeat 200]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits


def interleaved(contenders: dict, repeat: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for i in range(repeat):
        order = list(contenders.items()) if i % 2 == 0 else list(reversed(contenders.items()))
        for name, fn in order:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def gray_forms(h: int, w: int):
    frame = np.random.default_rng(0).integers(0, 256, (h, w, 3), dtype=np.uint8)
    weights = np.array([0.114, 0.587, 0.299], np.float32)  # BGR, as semantics.defaults

    def blas():
        return frame.astype(np.float32) @ weights

    def elementwise():
        pixels = frame.astype(np.float32)
        y = pixels[..., 0] * weights[0]
        y += pixels[..., 1] * weights[1]
        y += pixels[..., 2] * weights[2]
        return y

    return {"blas": blas, "elementwise": elementwise}


def window_forms():
    mask = (np.random.default_rng(0).random((25, 25)) > 0.5).astype(np.float32)
    ones = np.ones(25, np.float32)
    return {"blas": lambda: mask @ ones, "elementwise": lambda: np.add.reduce(mask, axis=1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    blas = [i.get("architecture") for i in threadpool_info() if i["internal_api"] == "openblas"]
    print(f"OpenBLAS kernel {blas}, load average {os.getloadavg()[0]:.1f}, BLAS threads 1")
    cases = [(f"gray {h}x{w}", gray_forms(h, w), max(20, args.repeat * 96 * 128 // (h * w))) for h, w in
             ((96, 128), (480, 640), (1080, 1920))]
    cases.append(("window median ranks 25x25", window_forms(), args.repeat * 10))
    print(f"{'case':28} {'blas ms (median/min)':>22} {'elementwise ms':>22} {'elementwise/blas':>17}")
    with threadpool_limits(1):
        for name, forms, repeat in cases:
            t = interleaved(forms, repeat)
            med = {k: statistics.median(v) * 1e3 for k, v in t.items()}
            low = {k: min(v) * 1e3 for k, v in t.items()}
            print(f"{name:28} {med['blas']:>10.4f} / {low['blas']:<9.4f} {med['elementwise']:>10.4f} / "
                  f"{low['elementwise']:<9.4f} {med['elementwise'] / med['blas']:>10.2f}")


if __name__ == "__main__":
    main()
