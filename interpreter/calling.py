"""What the reference interpreter and the compiled runtime share at the call boundary.

Both runners take the same arguments (module, entry, mode, weights) and
must reject the same mistakes with the same words: an unknown entry, an
unknown mode, a weight that is not a number, an argument of the wrong type;
and both start a state from the same zeros.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, ModuleOp, TensorType
from xdsl.ir import Attribute

from cortex.dialects.modes import INPUT_DEFAULTS, UnknownModeError, mode_weights
from cortex.errors import CortexError
from cortex.semantics.values import numpy_dtype


def find_entry(module: ModuleOp, entry: str) -> func.FuncOp:
    """The function `@entry` with a body, or a CortexError listing those there are."""
    functions = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]
    for f in functions:
        if f.sym_name.data == entry:
            return f
    names = ", ".join(f.sym_name.data for f in functions) or "none"
    raise CortexError(f"no function '@{entry}' in the module (functions: {names})")


def resolve_weights(mode: str | None, weights: Mapping[str, float] | None) -> tuple[dict[str, float], str]:
    """The weight table (the mode's row, overridden by explicit `weights`) and,
    for the diagnostic of a missing weight, where weights were looked for."""
    table: dict[str, float] = dict(INPUT_DEFAULTS)
    if mode is not None:
        try:
            table.update(mode_weights(mode))
        except UnknownModeError as e:
            raise CortexError(str(e)) from None
    if weights is not None and not isinstance(weights, Mapping):
        raise CortexError(f"weights must be a mapping of weight name to number, got {type(weights).__name__}")
    for name, value in (weights or {}).items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise CortexError(f"weight '{name}' must be a number, got {value!r}")
        try:
            number = float(value)
        except OverflowError:
            number = float("inf")
        if not np.isfinite(number):
            raise CortexError(f"weight '{name}' must be a finite number, got {value!r}")
        table[name] = number
    if mode is None and weights is None:
        return table, "the module reads runtime weights, so give a mode or weights={...}"
    sources = ([f"mode '{mode}'"] if mode is not None else []) + (["weights="] if weights is not None else [])
    return table, f"known weights ({' and '.join(sources)}): {', '.join(sorted(table)) or 'none'}"


# ---------------------------------------------------------------- values at the boundary


def describe_type(type_: Attribute, unsigned: bool = False) -> str:
    """What a caller must pass for `type_`: `a uint8 array of shape (480, 640, 3)`, `an f32 scalar`.

    `unsigned` marks lowered `i8` data the caller exchanges as uint8 (`{cortex.unsigned}`).
    """
    if isinstance(type_, TensorType):
        dtype = "uint8" if unsigned else numpy_dtype(type_.element_type).name
        shape = tuple(None if d < 0 else d for d in type_.get_shape())
        return f"{'an' if dtype.startswith('i') else 'a'} {dtype} array of shape {shape}"
    return f"an {type_} scalar"


def describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{'an' if value.dtype.name.startswith('i') else 'a'} {value.dtype} array of shape {value.shape}"
    return f"a {type(value).__name__}"


def check_value(type_: Attribute, value: Any, what: str, unsigned: bool = False) -> Any:
    """`value` as an argument of type `type_` (arrays unchanged, scalars as Python numbers),
    or a CortexError naming `what` and saying what was expected. Both runners call this."""
    if isinstance(value, np.ma.MaskedArray):
        raise CortexError(f"{what}: masked arrays are not accepted (pass np.ma.filled(value))")
    if isinstance(type_, TensorType):
        dtype = np.dtype("uint8") if unsigned else numpy_dtype(type_.element_type)
        shape = type_.get_shape()
        if not (
            isinstance(value, np.ndarray)
            and value.dtype == dtype
            and value.ndim == len(shape)
            and all(d < 0 or d == s for d, s in zip(shape, value.shape))
        ):
            raise CortexError(f"{what}: expected {describe_type(type_, unsigned)}, got {describe_value(value)}")
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise CortexError(f"{what}: expected {describe_type(type_)}, got {describe_value(value)}")
    if isinstance(type_, Float32Type):
        return float(np.float32(value))
    try:
        return numpy_dtype(type_).type(value).item()
    except CortexError:
        raise CortexError(f"{what}: arguments of type {type_} are not supported") from None


def initial_zeros(type_: Attribute, what: str, unsigned: bool = False) -> Any:
    """The value a state holds before the first frame: zeros of its type."""
    if isinstance(type_, TensorType):
        shape = tuple(type_.get_shape())
        if any(d < 0 for d in shape):
            raise CortexError(f"{what} has a dynamic shape ({type_}); its initial zeros are undefined")
        return np.zeros(shape, "uint8" if unsigned else numpy_dtype(type_.element_type))
    if isinstance(type_, Float32Type):
        return 0.0
    try:
        return numpy_dtype(type_).type(0).item()
    except CortexError:
        raise CortexError(f"{what} has type {type_}, which has no zero value") from None
