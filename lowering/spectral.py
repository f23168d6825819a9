"""Compile-time matrices that turn saliency_dft's transforms and filters into matmuls.

A 2-D DFT of a real h×w image A is Wh·A·Ww with W[k, n] = exp(−2πi·kn/N),
so with C = cos and S = sin of 2π·kn/N (both symmetric):

    Re F = Ch·A·Cw − Sh·A·Sw        Im F = −(Ch·A·Sw + Sh·A·Cw)

and the inverse of G = Gr + i·Gi is (Ch + iSh)·G·(Cw + iSw)/(h·w). A
separable filter with edge replication along one axis is a band matrix B
whose out-of-range taps are folded onto the edge rows: filtering the
columns is B·X, filtering the rows is X·Bᵀ.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def dft_matrices(n: int) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) of 2π·k·j/n, in float64 (k·j reduced mod n first for accuracy)."""
    k = np.arange(n)
    phase = 2.0 * np.pi * ((k[:, None] * k[None, :]) % n) / n
    return np.cos(phase), np.sin(phase)


def replicate_band(n: int, taps: Sequence[float] | np.ndarray) -> np.ndarray:
    """n×n matrix of the centred correlation with `taps`, edges replicated: (B·x)[i] = Σ_t taps[t]·x[clip(i+t−r)]."""
    r = len(taps) // 2
    band = np.zeros((n, n))
    for i in range(n):
        for t, weight in enumerate(taps):
            band[i, min(max(i + t - r, 0), n - 1)] += weight
    return band


__all__ = ["dft_matrices", "replicate_band"]
