"""Reference kernels of the NHWC ops: the NCHW kernel on transposed data (one meaning per op)."""

from __future__ import annotations

import numpy as np

from cortex.semantics import tensor_kernels as tk
from cortex.semantics.defaults import HWIO_TO_OIHW, TO_NCHW, TO_NHWC
from cortex.semantics.kernel_table import kernel


def nhwc(x) -> np.ndarray:
    return np.ascontiguousarray(np.transpose(x, TO_NHWC))


@kernel("cortex.conv2d_nhwc")
def conv2d_nhwc(x, weight, bias=None, **params):
    return nhwc(tk.conv2d(np.transpose(x, TO_NCHW), np.transpose(weight, HWIO_TO_OIHW), bias, **params))


@kernel("cortex.max_pool_nhwc")
def max_pool_nhwc(x, **params):
    return nhwc(tk.max_pool(np.transpose(x, TO_NCHW), **params))


@kernel("cortex.avg_pool_nhwc")
def avg_pool_nhwc(x, **params):
    return nhwc(tk.avg_pool(np.transpose(x, TO_NCHW), **params))


@kernel("cortex.batch_norm_nhwc")
def batch_norm_nhwc(x, scale, bias, mean, var, **params):
    return nhwc(tk.batch_norm(np.transpose(x, TO_NCHW), scale, bias, mean, var, **params))


__all__ = []
