"""Contexts, parsing with source locations, located verification, printing.

xDSL's verifier reports no source position; `parse_and_verify` keeps the
span of every parsed op and verifies op by op, so a verifier error reads
`file:line:col: error: ...` with the offending line, as mlir-opt prints it.
"""

from __future__ import annotations

import io
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, linalg, math, scf, tensor
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Span

from cortex.dialects import Cortex

UPSTREAM_DIALECTS = (builtin.Builtin, func.Func, arith.Arith, math.Math, scf.Scf, tensor.Tensor, linalg.Linalg)


def make_context(allow_unregistered: bool = False) -> Context:
    """A context that knows cortex and the upstream dialects it lowers to."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in UPSTREAM_DIALECTS:
        ctx.load_dialect(dialect)
    ctx.load_dialect(Cortex)
    return ctx


class CortexError(Exception):
    """A user-facing diagnostic: one message, with a location when known."""


class LocatingParser(Parser):
    """A Parser that remembers where each op started, for verifier diagnostics."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.spans: dict[Operation, Span] = {}

    def parse_optional_operation(self):
        start = self._current_token.span
        op = super().parse_optional_operation()
        if op is not None:
            self.spans[op] = start
        return op


def verify_located(module: Operation, spans: dict[Operation, Span] | None = None) -> None:
    """Verify op by op (parents first); raise VerifyException with a location."""
    spans = spans or {}
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            message = f"'{op.name}' op {e}"
            span = spans.get(op)
            if span is not None:
                raise VerifyException(span.print_with_context(message)) from None
            raise VerifyException(message) from None


def parse_module(text: str, filename: str = "<input>", ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse (and verify) MLIR text into a module; errors carry file:line:col."""
    parser = LocatingParser(ctx or make_context(), text, filename)
    module = parser.parse_module()
    if verify:
        verify_located(module, parser.spans)
    return module


def parse(path_or_text: str | Path, ctx: Context | None = None) -> ModuleOp:
    """A module from a path to a .mlir file or from MLIR text."""
    if isinstance(path_or_text, Path) or (
        isinstance(path_or_text, str) and "\n" not in path_or_text and path_or_text.endswith(".mlir")
    ):
        path = Path(path_or_text)
        try:
            text = path.read_text()
        except OSError as e:
            raise CortexError(f"cannot read {path}: {e.strerror}") from None
        return parse_module(text, str(path), ctx)
    return parse_module(str(path_or_text), "<string>", ctx)


def to_text(op: Operation, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue() + "\n"


__all__ = [
    "CortexError",
    "DiagnosticException",
    "LocatingParser",
    "ParseError",
    "make_context",
    "parse",
    "parse_module",
    "to_text",
    "verify_located",
]
