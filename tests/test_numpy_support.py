"""numpy_support.affine_view: strided windows built through the ndarray constructor, and their cached layouts."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.backends import numpy_support


def naive_view(x: np.ndarray, offset, shape, coefs) -> np.ndarray:
    out = np.empty(shape, x.dtype)
    for d in itertools.product(*(range(n) for n in shape)):
        index = tuple(o + sum(coefs[k][a] * d[k] for k in range(len(shape))) for a, o in enumerate(offset))
        out[d] = x[index]
    return out


@settings(max_examples=60, deadline=None)
@given(
    dims=st.tuples(st.integers(1, 4), st.integers(1, 4), st.integers(1, 3)),
    kernel=st.tuples(st.integers(1, 2), st.integers(1, 2)),
    stride=st.integers(1, 2),
    start=st.tuples(st.integers(0, 1), st.integers(0, 1)),
    transposed=st.booleans(),
)
def test_affine_view_is_the_strided_window(dims, kernel, stride, start, transposed):
    """Windows x[c, oh*s + kh + o0, ow*s + kw + o1], on contiguous and on transposed (non-contiguous) arrays."""
    c, oh, ow = dims
    kh, kw = kernel
    h, w = (oh - 1) * stride + kh + start[0], (ow - 1) * stride + kw + start[1]
    x = np.arange(c * h * w, dtype=np.float32).reshape(c, h, w)
    if transposed:
        x = np.ascontiguousarray(x.transpose(0, 2, 1)).transpose(0, 2, 1)
    coefs = ((1, 0, 0), (0, stride, 0), (0, 0, stride), (0, 1, 0), (0, 0, 1))
    shape = (c, oh, ow, kh, kw)
    for _ in range(2):  # the second call takes the cached layout
        view = numpy_support.affine_view(x, (0, *start), shape, coefs)
        np.testing.assert_array_equal(view, naive_view(x, (0, *start), shape, coefs))
        assert not view.flags.writeable


def test_affine_view_layout_depends_on_the_strides():
    a = np.arange(24, dtype=np.float32).reshape(4, 6)
    b = np.arange(24, dtype=np.float64).reshape(4, 6)  # same shape, other strides
    coefs = ((1, 0), (0, 2))
    np.testing.assert_array_equal(numpy_support.affine_view(a, (0, 1), (4, 2), coefs), a[:, 1::2][:, :2])
    np.testing.assert_array_equal(numpy_support.affine_view(b, (0, 1), (4, 2), coefs), b[:, 1::2][:, :2])
