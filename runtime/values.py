"""Values at a compiled program's boundary: what a caller may pass, and what it gets back.

Both runners (the reference interpreter and the compiled runtime) take the
same arguments and must reject the same mistakes with the same words, so the
checks live here once, over `ValueSpec` (plain data: the runtime runs
programs without the compiler's IR). The interpreter reaches them through
`cortex.interpreter.calling`, which turns an MLIR type into its `ValueSpec`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from cortex.errors import CortexError
from cortex.semantics.abi_facts import Port, ValueSpec


def describe_type(spec: ValueSpec) -> str:
    """What a caller must pass: `a uint8 array of shape (480, 640, 3)`, `an f32 scalar`."""
    if spec.shape is not None:
        dtype = "uint8" if spec.unsigned else _dtype(spec).name
        shape = tuple(None if d < 0 else d for d in spec.shape)
        return f"{'an' if dtype.startswith('i') else 'a'} {dtype} array of shape {shape}"
    return f"an {spec.type} scalar"


def describe_value(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"{'an' if value.dtype.name.startswith('i') else 'a'} {value.dtype} array of shape {value.shape}"
    return f"a {type(value).__name__}"


def _dtype(spec: ValueSpec) -> np.dtype:
    if spec.dtype is None:
        element = spec.type.removeprefix("tensor<").rstrip(">").rpartition("x")[2]
        raise CortexError(f"no NumPy dtype for element type {element}")
    return np.dtype(spec.dtype)


def check_value(spec: ValueSpec, value: Any, what: str) -> Any:
    """`value` as an argument of `spec` (arrays unchanged, scalars as Python numbers),
    or a CortexError naming `what` and saying what was expected. Both runners call this."""
    if isinstance(value, np.ma.MaskedArray):
        raise CortexError(f"{what}: masked arrays are not accepted (pass np.ma.filled(value))")
    if spec.shape is not None:
        dtype = np.dtype("uint8") if spec.unsigned else _dtype(spec)
        shape = spec.shape
        if not (
            isinstance(value, np.ndarray)
            and value.dtype == dtype
            and value.ndim == len(shape)
            and all(d < 0 or d == s for d, s in zip(shape, value.shape))
        ):
            raise CortexError(f"{what}: expected {describe_type(spec)}, got {describe_value(value)}")
        return value
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value[()]
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise CortexError(f"{what}: expected {describe_type(spec)}, got {describe_value(value)}")
    if spec.dtype == "float32":
        return float(np.float32(value))
    if spec.dtype is None:
        raise CortexError(f"{what}: arguments of type {spec.type} are not supported")
    return np.dtype(spec.dtype).type(value).item()


def initial_zeros(spec: ValueSpec, what: str) -> Any:
    """The value a state holds before the first frame: zeros of its type."""
    if spec.shape is not None:
        if any(d < 0 for d in spec.shape):
            raise CortexError(f"{what} has a dynamic shape ({spec.type}); its initial zeros are undefined")
        return np.zeros(spec.shape, "uint8" if spec.unsigned else _dtype(spec))
    if spec.dtype == "float32":
        return 0.0
    if spec.dtype is None:
        raise CortexError(f"{what} has type {spec.type}, which has no zero value")
    return np.dtype(spec.dtype).type(0).item()


class RunnerState(dict):
    """A compiled runner's `state`: the caller's states by the reference runner's names.

    The states a program derives from another (temporal reuse carries f(prev_gray) from the
    previous frame) ride along hidden in `derived`, name → (source name, the source object they
    were derived from, value): they hold only while the dict still holds that very object, so an
    assigned source (`state["prev_gray"] = x`, a dict copied from another runner) is honoured by
    recomputing them (`cortex.runtime.parts.DerivedStates`). `dict(state)` and `{**state}` are
    plain dicts of the caller's states, which every runner accepts.
    """

    derived: dict[str, tuple[str, Any, Any]]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.derived = {}


# ---------------------------------------------------------------- the compiled code's side of the boundary


def to_internal(port: Port, value: Any, what: str) -> Any:
    """A caller's value as the generated code takes it (checked as the reference interpreter checks it)."""
    value = check_value(port.spec, value, what)
    if port.spec.shape is not None:
        return value.view(np.int8) if port.spec.unsigned else value
    return np.dtype(_dtype(port.spec)).type(value)


def to_caller(port: Port, value: Any) -> Any:
    """A value the generated code computed, as the caller gets it (uint8 views, Python scalars, our own arrays)."""
    if port.spec.shape is not None and not isinstance(value, np.ndarray):
        value = np.array(value, _dtype(port.spec))  # a rank-0 tensor computed as a NumPy scalar
    if isinstance(value, np.ndarray):
        if port.spec.unsigned and value.dtype == np.int8:
            value = value.view(np.uint8)
        return value if value.flags.writeable else value.copy()  # constants and views stay ours
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


def aliased(value: np.ndarray, outputs: Iterable[Any], inputs: Iterable[Any]) -> bool:
    """Whether `value` shares memory with one of `outputs` or `inputs` (then the state gets a copy)."""
    for group in (outputs, inputs):
        for o in group:
            if isinstance(o, np.ndarray) and np.may_share_memory(value, o):
                return True
    return False


__all__ = ["RunnerState", "aliased", "check_value", "describe_type", "describe_value", "initial_zeros", "to_caller", "to_internal"]
