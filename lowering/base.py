"""What every lowering pattern shares: the op → pattern protocol and its diagnostics.

Each cortex op class has one `CortexLowering` subclass (a table built in
`cortex_to_linalg.py`, as MLIR's Toy chapter 5 has one pattern per toy op).
The base class checks the op's shapes are static, hands `lower` a
`LinalgBuilder` and replaces the op by what `lower` returns.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import FileLineColLoc, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import DiagnosticException

from cortex.dialects.shapes import DYNAMIC
from cortex.errors import CortexError
from cortex.lowering.builders import LinalgBuilder


class LoweringError(DiagnosticException, CortexError):
    """An op the lowering cannot handle: one line naming the op (and where it is).

    A DiagnosticException for the opt driver, a CortexError for the Python API.
    """


def describe(op: Operation) -> str:
    """`'cortex.add' (%sum) at model.mlir:3:5`: enough to find the op in the source."""
    text = f"'{op.name}'"
    hints = [r.name_hint for r in op.results if r.name_hint]
    if hints:
        text += f" (%{hints[0]})"
    loc = getattr(op, "location", None)
    if isinstance(loc, FileLineColLoc):
        text += f" at {loc.filename.data}:{loc.line.data}:{loc.column.data}"
    return text


def has_dynamic_shape(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and DYNAMIC in value.type.get_shape()


def require_static(op: Operation, pass_name: str) -> None:
    for value in (*op.operands, *op.results):
        if has_dynamic_shape(value):
            raise LoweringError(
                f"{pass_name}: {describe(op)} has the dynamic type {value.type}; "
                "run cortex-shape-inference first (lowering needs static shapes)"
            )


class CortexLowering(RewritePattern):
    """Replaces every op of class `op_type` by the values `lower` builds."""

    op_type: ClassVar[type[Operation]]
    pass_name: ClassVar[str] = "convert-cortex-to-linalg"

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) is not self.op_type:
            return
        require_static(op, self.pass_name)
        results = self.lower(op, LinalgBuilder(rewriter, op))
        rewriter.replace(op, [], list(results))

    def lower(self, op: Operation, b: LinalgBuilder) -> list[SSAValue]:
        raise NotImplementedError


__all__ = ["CortexLowering", "LoweringError", "describe", "require_static"]
