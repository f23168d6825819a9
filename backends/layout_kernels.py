"""Reference kernels of the NHWC ops: the NCHW kernel on transposed data (one meaning per op)."""

from __future__ import annotations

import numpy as np

from cortex.backends import tensor_kernels as tk
from cortex.dialects.layout import HWIO_TO_OIHW, TO_NCHW, TO_NHWC


def nhwc(x) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, TO_NHWC))


def conv2d_nhwc(x, weight, bias=None, **params):
    return nhwc(tk.conv2d(np.transpose(x, TO_NCHW), np.transpose(weight, HWIO_TO_OIHW), bias, **params))


def max_pool_nhwc(x, **params):
    return nhwc(tk.max_pool(np.transpose(x, TO_NCHW), **params))


def avg_pool_nhwc(x, **params):
    return nhwc(tk.avg_pool(np.transpose(x, TO_NCHW), **params))


def batch_norm_nhwc(x, scale, bias, mean, var, **params):
    return nhwc(tk.batch_norm(np.transpose(x, TO_NCHW), scale, bias, mean, var, **params))


LAYOUT_KERNELS = {
    "cortex.conv2d_nhwc": conv2d_nhwc,
    "cortex.max_pool_nhwc": max_pool_nhwc,
    "cortex.avg_pool_nhwc": avg_pool_nhwc,
    "cortex.batch_norm_nhwc": batch_norm_nhwc,
}

__all__ = ["LAYOUT_KERNELS"]
