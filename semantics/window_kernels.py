"""Reference kernels of the window ops (`cortex.dialects.window`): their meaning."""

from __future__ import annotations

import numpy as np

from cortex.semantics.kernel_table import kernel


@kernel("cortex.window_push")
def window_push(window: np.ndarray, value: float) -> np.ndarray:
    """window[1:] followed by `value` (float32)."""
    return np.append(np.asarray(window, np.float32)[1:], np.float32(value)).astype(np.float32)


@kernel("cortex.window_median")
def window_median(window: np.ndarray) -> float:
    """Lower median of the positive entries: the ((k−1)//2)-th smallest of k; 0.0 when k = 0."""
    positive = np.sort(np.asarray(window, np.float32)[np.asarray(window) > 0])
    return float(positive[(positive.size - 1) // 2]) if positive.size else 0.0


__all__ = ["window_median", "window_push"]
