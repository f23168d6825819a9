"""What every lowering pattern shares: the op → pattern protocol and its diagnostics.

Each compilable cortex op class has one `CortexLowering`, registered with
`@lowers(OpClass)` where it is written (as MLIR's Toy chapter 5 has one
pattern per toy op). `LowerByTable` finds it by the op's class, checks the
shapes are static, hands `lower` a `LinalgBuilder` and replaces the op by
what `lower` returns.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import DiagnosticException

from cortex.dialects.shapes import DYNAMIC
from cortex.errors import CortexError
from cortex.ir import describe
from cortex.lowering.builders import LinalgBuilder


class LoweringError(DiagnosticException, CortexError):
    """An op the lowering cannot handle: one line naming the op (and where it is).

    A DiagnosticException for the opt driver, a CortexError for the Python API.
    """


def has_dynamic_shape(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and DYNAMIC in value.type.get_shape()


def require_static(op: Operation, pass_name: str) -> None:
    for value in (*op.operands, *op.results):
        if has_dynamic_shape(value):
            raise LoweringError(
                f"{pass_name}: {describe(op)} has the dynamic type {value.type}; "
                "run cortex-shape-inference first (lowering needs static shapes; a shape-generic entry is "
                "bound to one input shape by cortex-specialize-shapes{shapes=...})"
            )


OpT = TypeVar("OpT", bound=Operation)


class CortexLowering(Generic[OpT]):
    """How one cortex op class becomes upstream IR: `lower` builds the replacement values.

    Registered by op class with `@lowers(OpClass)`; convert-cortex-to-linalg
    looks the lowering up in `LOWERINGS` by the op's class. The type parameter
    is the op class `lower` takes, so each lowering reads its op's typed
    operands and properties (`CortexLowering[GrayOp]`).
    """

    def lower(self, op: OpT, b: LinalgBuilder) -> list[SSAValue]:
        raise NotImplementedError


LOWERINGS: dict[type[Operation], CortexLowering[Any]] = {}
"""The op class → lowering table (one entry per compilable cortex op class)."""

LoweringT = TypeVar("LoweringT", bound=type[CortexLowering[Any]])


def register_lowering(op_class: type[Operation], lowering: CortexLowering[Any]) -> None:
    if op_class in LOWERINGS:
        raise ValueError(f"two lowerings for '{op_class.name}'")
    LOWERINGS[op_class] = lowering


def lowers(*op_classes: type[Operation]) -> Callable[[LoweringT], LoweringT]:
    """Class decorator: an instance of the decorated lowering handles each of `op_classes`."""

    def register(cls: LoweringT) -> LoweringT:
        for op_class in op_classes:
            register_lowering(op_class, cls())
        return cls

    return register


class LowerByTable(RewritePattern):
    """The one pattern of convert-cortex-to-linalg: look the op's class up in `LOWERINGS`."""

    def __init__(self, pass_name: str = "convert-cortex-to-linalg"):
        self.pass_name = pass_name

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        lowering = LOWERINGS.get(type(op))
        if lowering is None:
            return
        require_static(op, self.pass_name)
        results = lowering.lower(op, LinalgBuilder(rewriter, op))
        rewriter.replace(op, [], list(results))


__all__ = [
    "LOWERINGS",
    "CortexLowering",
    "LowerByTable",
    "LoweringError",
    "lowers",
    "register_lowering",
    "require_static",
]
