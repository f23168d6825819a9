"""Traits that classify cortex ops, and the one question passes ask of any op.

`Compilable` ops have a reference kernel in NumPy and a lowering to linalg;
`External` ops are OpenCV kernels that stay calls to declared externs;
`FrameBoundary` ops (state and weights) carry values across the frame
boundary and become function arguments/results when lowered.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import Operation
from xdsl.traits import OpTrait

from cortex.dialects import abi


@dataclass(frozen=True)
class Compilable(OpTrait):
    """Lowered to upstream linalg/arith/math/tensor by convert-cortex-to-linalg."""


@dataclass(frozen=True)
class External(OpTrait):
    """Kept as a `func.call` to an OpenCV-backed extern by convert-cortex-to-extern."""


@dataclass(frozen=True)
class FrameBoundary(OpTrait):
    """Reads or writes a value that lives outside one frame (state, runtime weight)."""


def _is_extern_call(op: Operation) -> bool:
    if not isinstance(op, func.CallOp):
        return False
    from xdsl.traits import SymbolTable

    callee = SymbolTable.lookup_symbol(op, op.callee)
    return isinstance(callee, func.FuncOp) and (
        callee.is_declaration or abi.EXTERN in callee.attributes
    )


def op_kind(op: Operation) -> str:
    """One of "compilable", "external", "boundary" for any op.

    Upstream ops (arith, math, linalg, tensor, scf, func) are compilable,
    except calls to declared externs; an op with regions is compilable only
    if everything inside it is.
    """
    if op.has_trait(External) or _is_extern_call(op):
        return "external"
    if op.has_trait(FrameBoundary):
        return "boundary"
    for region in op.regions:
        for inner in region.walk():
            if op_kind(inner) != "compilable":
                return "external"
    return "compilable"


def is_compilable(op: Operation) -> bool:
    return op_kind(op) == "compilable"
