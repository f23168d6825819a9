"""Helpers that generated NumPy code calls (imported there as `_rt`).

Only what has no direct NumPy spelling lives here: read-only constants built
from raw bytes, strided views for affine indexing maps, and the few integer
and math ops whose MLIR semantics differ from NumPy's operators.
"""

from __future__ import annotations

import base64
import sys
import threading
import weakref
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt
from numpy.lib.stride_tricks import as_strided

IntValue: TypeAlias = "np.ndarray | np.integer[Any] | int"
"""An integer operand of generated code: an array, or a NumPy or Python integer (a 0-d result unwrapped)."""


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


def full(shape: tuple[int, ...], value: int | float | bool, dtype: str) -> np.ndarray:
    """A read-only constant array of one value."""
    array = np.full(shape, value, dtype=dtype)
    array.setflags(write=False)
    return array


def affine_view(x: np.ndarray, offset: tuple[int, ...], shape: tuple[int, ...], coefs: tuple[tuple[int, ...], ...]) -> np.ndarray:
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
        # The ndarray constructor over x's buffer: cheaper than as_strided (benchmarks/README.md), bounds checked.
        view = np.ndarray(shape, x.dtype, x, *layout)
        view.flags.writeable = False
        return view
    base = x[tuple(slice(o, None) for o in offset)]
    return as_strided(base, shape=shape, strides=layout[1], writeable=False)


_VIEW_LAYOUTS: dict[tuple, tuple[int, tuple[int, ...]]] = {}
"""(strides of x, offset, coefficients) → (byte offset, view strides): computed once per view of a program."""


# ---- the buffers a program writes its large intermediates into


class _Buffers:
    """One thread's buffers: `kinds` maps (shape, dtype) to the arrays of that kind."""

    __slots__ = ("kinds", "__weakref__")

    def __init__(self) -> None:
        self.kinds: dict[tuple[tuple[int, ...], str], list[np.ndarray]] = {}


def _refs(arrays: list, i: int) -> int:
    return sys.getrefcount(arrays[i])


_FREE = _refs([np.empty(0)], 0)
"""What `_refs` counts for an array nothing but its list refers to (measured: it depends on the interpreter)."""


class BufferPool:
    """The large arrays one loaded program writes its intermediates into (`out=`), kept from call to call.

    Without it each frame allocates its intermediates afresh, and glibc's default policy hands large freed
    blocks back to the OS between frames, so every page comes back zero-filled, one page fault each.
    Each thread has its own buffers (frames in flight on several threads never share one), and an array
    is handed out again only when nothing but the pool refers to it: a result the caller holds, a state
    carried to the next frame, or any view of them keeps its buffer out of reuse for as long as it lives.
    """

    KEEP_IN_USE = 8
    """Arrays of one kind the pool keeps while all are referred to elsewhere (results a caller collects): past
    this it forgets them, so holding every frame's result does not make the pool hold them too."""

    def __init__(self) -> None:
        self.enabled = True
        self._local = threading.local()
        self._threads: weakref.WeakSet[_Buffers] = weakref.WeakSet()
        self._lock = threading.Lock()

    def take(self, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        """An uninitialised array of `shape` and `dtype` that nothing else refers to."""
        if not self.enabled:
            return np.empty(shape, dtype)
        try:
            buffers = self._local.buffers
        except AttributeError:
            buffers = self._local.buffers = _Buffers()
            with self._lock:
                self._threads.add(buffers)
        key = (shape, dtype)
        arrays = buffers.kinds.get(key)
        if arrays is None:
            arrays = buffers.kinds[key] = []
        for i in range(len(arrays)):
            if _refs(arrays, i) == _FREE:
                return arrays[i]
        if len(arrays) >= self.KEEP_IN_USE:
            arrays.clear()
        array = np.empty(shape, dtype)
        arrays.append(array)
        return array

    def working_set(self) -> int:
        """Bytes of the buffers of the thread that holds most: the large intermediates of one frame in flight
        at their peak (with the results and states of its earlier frames still referred to elsewhere)."""
        with self._lock:
            threads = list(self._threads)
        return max((sum(a.nbytes for arrays in list(b.kinds.values()) for a in arrays) for b in threads), default=0)

    def clear(self) -> None:
        """Forget every buffer (this thread's and the others'): the next calls allocate afresh."""
        with self._lock:
            threads = list(self._threads)
        for buffers in threads:
            buffers.kinds.clear()


# ---- integer semantics MLIR has and NumPy operators lack


def u(x: IntValue, bits: int) -> np.ndarray | int:
    """Reinterpret a signless integer as unsigned (view for arrays, modulo for scalars)."""
    if isinstance(x, np.ndarray):
        return x.view(f"uint{bits}") if bits > 1 else x
    return int(x) % (1 << bits)


def s(x: IntValue, bits: int) -> np.ndarray | int:
    """Reinterpret an unsigned integer as signless two's complement."""
    if isinstance(x, np.ndarray):
        return x.view(f"int{bits}") if bits > 1 else x
    x = int(x) % (1 << bits)
    return x - (1 << bits) if x >= 1 << (bits - 1) else x


def divsi(a: IntValue, b: IntValue) -> IntValue:
    """Signed division rounding toward zero (C semantics), as arith.divsi."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q).astype(np.result_type(a, b))[()]


def ceildiv(a: IntValue, b: IntValue) -> IntValue:
    return -(-a // b)


def round_half_away(x: npt.ArrayLike) -> np.ndarray:
    """math.round: halfway cases away from zero (np.round rounds them to even)."""
    return np.copysign(np.floor(np.abs(x) + 0.5), x).astype(np.result_type(x), copy=False)


def erf(x: npt.ArrayLike) -> np.ndarray:
    """math.erf, vectorised: Abramowitz & Stegun 7.1.26 in float64 (|error| < 1.5e-7)."""
    x = np.asarray(x)
    z = np.abs(x.astype(np.float64))
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    y = np.copysign(1.0 - poly * np.exp(-z * z), x)
    return y.astype(x.dtype if x.dtype.kind == "f" else np.float64)[()]
