"""Helpers that generated NumPy code calls (imported there as `_rt`).

Only what has no direct NumPy spelling lives here: read-only constants built
from raw bytes, strided views for affine indexing maps, and the few integer
and math ops whose MLIR semantics differ from NumPy's operators.
"""

from __future__ import annotations

import base64

import numpy as np
from numpy.lib.stride_tricks import as_strided


def const(blob: bytes, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A read-only array over a constant's raw little-endian bytes (no copy)."""
    if dtype == "bool":
        array = np.frombuffer(blob, np.uint8) != 0
        array.setflags(write=False)
    else:
        array = np.frombuffer(blob, np.dtype(dtype).newbyteorder("<"))
        if not array.dtype.isnative:  # big-endian hosts only
            array = array.astype(dtype)
            array.setflags(write=False)
    size = int(np.prod(shape))
    if array.size == 1 and size != 1:  # a splat stored as one element
        return full(shape, array[0], dtype)
    return array.reshape(shape)


def array(values: list, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    """A small read-only constant written out as a literal list."""
    result = np.array(values, dtype=dtype).reshape(shape)
    result.setflags(write=False)
    return result


def unpack(text: str) -> bytes:
    """The bytes of a constant embedded (base64) in a self-contained module."""
    return base64.b64decode(text)


def full(shape: tuple[int, ...], value, dtype: str) -> np.ndarray:
    """A read-only constant array of one value."""
    array = np.full(shape, value, dtype=dtype)
    array.setflags(write=False)
    return array


def affine_view(x: np.ndarray, offset: tuple[int, ...], shape: tuple[int, ...], coefs: tuple[tuple[int, ...], ...]):
    """The view v[d] = x[offset + C·d] over d in `shape`, for non-negative C (no copy).

    `coefs[k][a]` is the coefficient of loop dimension k in the index of axis
    a of x. The emitter checks the bounds statically, so the view never leaves x.
    """
    key = (x.strides, offset, coefs)
    layout = _VIEW_LAYOUTS.get(key)
    if layout is None:
        strides = tuple(sum(c * s for c, s in zip(column, x.strides)) for column in coefs)
        layout = _VIEW_LAYOUTS[key] = (sum(o * s for o, s in zip(offset, x.strides)), strides)
    if x.flags.c_contiguous:
        # The ndarray constructor over x's buffer: 0.5 µs where as_strided takes 4 (and it checks the bounds).
        view = np.ndarray(shape, x.dtype, x, *layout)
        view.flags.writeable = False
        return view
    base = x[tuple(slice(o, None) for o in offset)]
    return as_strided(base, shape=shape, strides=layout[1], writeable=False)


_VIEW_LAYOUTS: dict[tuple, tuple[int, tuple[int, ...]]] = {}
"""(strides of x, offset, coefficients) → (byte offset, view strides): computed once per view of a program."""


# ---- integer semantics MLIR has and NumPy operators lack


def u(x, bits: int):
    """Reinterpret a signless integer as unsigned (view for arrays, modulo for scalars)."""
    if isinstance(x, np.ndarray):
        return x.view(f"uint{bits}") if bits > 1 else x
    return int(x) % (1 << bits)


def s(x, bits: int):
    """Reinterpret an unsigned integer as signless two's complement."""
    if isinstance(x, np.ndarray):
        return x.view(f"int{bits}") if bits > 1 else x
    x = int(x) % (1 << bits)
    return x - (1 << bits) if x >= 1 << (bits - 1) else x


def divsi(a, b):
    """Signed division rounding toward zero (C semantics), as arith.divsi."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q).astype(np.result_type(a, b))[()]


def ceildiv(a, b):
    return -(-a // b)


def round_half_away(x):
    """math.round: halfway cases away from zero (np.round rounds them to even)."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(np.result_type(x), copy=False)


def erf(x):
    """math.erf, vectorised: Abramowitz & Stegun 7.1.26 in float64 (|error| < 1.5e-7)."""
    x = np.asarray(x)
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = np.copysign(1.0 - poly * np.exp(-z * z), x)
    return y.astype(x.dtype if x.dtype.kind == "f" else np.float64)[()]
