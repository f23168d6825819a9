"""The kernel table: one reference kernel per cortex op, and how to call it on an op.

`KERNELS[op.name](*operands, **op_params(op))` is the meaning of every
cortex op except `cortex.state`, `cortex.update_state` and `cortex.weight`,
whose values come from outside the frame (the interpreter or the runtime
provides them). `run_kernel` calls the kernel for an op instance: it
groups the operands of variadic groups into lists (score_fusion's maps
and weights), passes an absent optional operand as `None`, adds what the
op states only in its result type (reshape's target `shape`), and always
returns a tuple of results.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from xdsl.dialects.builtin import TensorType
from xdsl.irdl import IRDLOperation, OptOperandDef, VarOperandDef

from cortex.errors import CortexError
from cortex.semantics.all_kernels import FLOAT_ERRORS, KERNELS, NO_KERNEL
from cortex.semantics.values import numpy_dtype, op_params


def _reshape_shape(op: IRDLOperation) -> dict[str, object]:
    (result,) = op.results
    assert isinstance(result.type, TensorType)
    return {"shape": tuple(result.type.get_shape())}


def _result_dtype(op: IRDLOperation) -> dict[str, object]:
    (result,) = op.results
    element = result.type.element_type if isinstance(result.type, TensorType) else result.type
    return {"dtype": numpy_dtype(element)}


TYPE_PARAMS: dict[str, Callable[[IRDLOperation], dict[str, object]]] = {
    "cortex.reshape": _reshape_shape,
    "cortex.cast": _result_dtype,
    "cortex.to_scalar": _result_dtype,
}
"""Keyword arguments a kernel needs that the op states in its types, not its properties."""


def group_operands(op: IRDLOperation, values: Sequence[Any]) -> list[Any]:
    """The operand values as the kernel takes them: one entry per operand definition.

    A variadic group becomes a list, an optional operand its value or None;
    the op's own accessors give each group's length, so segment sizes are
    respected whether they come from a property or from a single
    variadic/optional group.
    """
    definitions = type(op).get_irdl_definition().operands
    if not any(isinstance(d, VarOperandDef) for _, d in definitions):
        return list(values)
    grouped: list[Any] = []
    position = 0
    for name, definition in definitions:
        if isinstance(definition, OptOperandDef):
            present = getattr(op, name) is not None
            grouped.append(values[position] if present else None)
            position += present
        elif isinstance(definition, VarOperandDef):
            n = len(getattr(op, name))
            grouped.append(list(values[position : position + n]))
            position += n
        else:
            grouped.append(values[position])
            position += 1
    return grouped


def kernel_for(op: IRDLOperation) -> Callable[..., Any]:
    kernel = KERNELS.get(op.name)
    if kernel is None:
        raise CortexError(f"no reference kernel for '{op.name}'")
    return kernel


def kernel_params(op: IRDLOperation) -> dict[str, object]:
    """The keyword arguments of `op`'s kernel: its properties, plus what its types state."""
    params = op_params(op)
    extra = TYPE_PARAMS.get(op.name)
    if extra is not None:
        params.update(extra(op))
    return params


def run_kernel(op: IRDLOperation, operand_values: Sequence[Any]) -> tuple[Any, ...]:
    """Run `op`'s reference kernel on the values of its operands; returns its results as a tuple."""
    result = kernel_for(op)(*group_operands(op, operand_values), **kernel_params(op))
    return result if isinstance(result, tuple) else (result,)


__all__ = ["FLOAT_ERRORS", "KERNELS", "NO_KERNEL", "TYPE_PARAMS", "group_operands", "kernel_for", "kernel_params", "run_kernel"]
