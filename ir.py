"""Contexts, parsing with source locations, located verification, printing.

xDSL's verifier reports no source position; `parse_and_verify` keeps the
span of every parsed op and verifies op by op, so a verifier error reads
`file:line:col: error: ...` with the offending line, as mlir-opt prints it.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, linalg, math, scf, tensor
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken

from cortex.dialects import Cortex
from cortex.errors import CortexError

UPSTREAM_DIALECTS = (builtin.Builtin, func.Func, arith.Arith, math.Math, scf.Scf, tensor.Tensor, linalg.Linalg)


def make_context(allow_unregistered: bool = False) -> Context:
    """A context that knows cortex and the upstream dialects it lowers to."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in UPSTREAM_DIALECTS:
        ctx.load_dialect(dialect)
    ctx.load_dialect(Cortex)
    return ctx


# A string literal: one character or one escape per step. xDSL 0.74 nests a
# `+` inside the `*` (`(?:[^"...]+|\\...)*"`), so an unterminated string
# backtracks in time exponential in the rest of its line; this pattern
# accepts the same language and fails in linear time.
STRING_BODY = r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*'
STRING_LITERAL = re.compile(STRING_BODY + '"')
STRING_PREFIX = re.compile(STRING_BODY)


class LinearTimeLexer(MLIRLexer):
    """xDSL's MLIR lexer with linear-time string literals and a located reason.

    Every token goes through it, the first included: the parser lexes its
    first token while it is constructed, so swapping the pattern afterwards
    left the first token to the exponential one.
    """

    _unescaped_characters_regex = STRING_LITERAL

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        if STRING_LITERAL.match(self.input.content, start_pos) is None:
            stop = STRING_PREFIX.match(self.input.content, start_pos).end()
            if stop < self.input.len and self.input.content[stop] == "\\":
                raise ParseError(Span(stop, stop + 2, self.input), "invalid escape sequence in string literal")
            raise ParseError(Span(start_pos, stop, self.input), "unterminated string literal")
        return super()._lex_string_literal(start_pos)


class LocatedVerifyException(VerifyException):
    """A verifier failure that knows the failing op and, when parsed, where it was.

    `str(e)` is the rendered diagnostic (location, source line, carets);
    `message` is the bare `'cortex.xxx' op ...` text and `span` its position,
    for tools (cortex-opt's --verify-diagnostics) that re-render or match it.
    """

    def __init__(self, op: Operation, message: str, span: Span | None):
        super().__init__(span.print_with_context(message) if span is not None else message)
        self.op = op
        self.message = message
        self.span = span


class LocatingParser(Parser):
    """A Parser that remembers where each op is, for diagnostics with locations.

    `spans[op]` is the op's name token (where mlir-opt puts an op's location).
    It also locates two errors xDSL reports without a useful position: an
    attribute or property that fails verification while an op is parsed
    (re-raised as a ParseError at that op), and an SSA value that is used but
    never defined (reported at its first use, not at the end of the input).
    """

    def __init__(self, ctx: Context, input: str | bytes, name: str = "<unknown>"):
        super().__init__(ctx, "", name)  # lexes nothing: the real input goes to our lexer
        text = input.decode("utf-8") if isinstance(input, bytes) else input
        self._parser_state = ParserState(LinearTimeLexer(Input(text, name)))
        self.spans: dict[Operation, Span] = {}
        self._name_spans: list[Span] = []
        self._first_uses: dict[str, Span] = {}

    def _parse_op_result_list(self):
        results = super()._parse_op_result_list()
        self._name_spans.append(self._current_token.span)
        return results

    def parse_optional_operation(self):
        start = self._current_token.span
        depth = len(self._name_spans)
        try:
            op = super().parse_optional_operation()
        except (VerifyException, ValueError, IndexError) as e:
            if len(self._name_spans) <= depth:
                raise
            name = self._name_spans[depth]
            raise ParseError(name, f"'{name.text.strip(chr(34))}' op {e}") from None
        if op is not None:
            span = self.spans[op] = self._name_spans[depth] if len(self._name_spans) > depth else start
            del self._name_spans[depth:]
            if not isinstance(op.location, FileLineColLoc):
                # Passes report a located error from the op alone (printed only with debug info).
                where = span.get_location()
                op.location = FileLineColLoc(StringAttr(where.file), IntAttr(where.line), IntAttr(int(where.col)))
        return op

    def _get_op_by_name(self, name: str):
        try:
            return super()._get_op_by_name(name)
        except ParseError as e:
            # xDSL points past the name; mlir-opt points at it.
            span = self._name_spans[-1] if self._name_spans else e.span
            dialect = name.split(".", 1)[0] if "." in name else None
            known = dialect is not None and dialect in self.ctx.registered_dialect_names
            why = (
                f"the '{dialect}' dialect has no such op"
                if known
                else f"no dialect '{dialect}' is registered"
                if dialect
                else "op names are 'dialect.op'"
            )
            raise ParseError(span, f"unknown operation '{name}' ({why})") from None

    def resolve_operand(self, operand, type):
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_uses.setdefault(name, operand.span)
        return super().resolve_operand(operand, type)

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except ParseError:
            undefined = [self._first_uses[n] for n in self.forward_ssa_references if n in self._first_uses]
            if not undefined:
                raise
            first = min(undefined, key=lambda span: span.start)
            raise ParseError(first, f"use of undeclared SSA value name '{first.text}'") from None


def verify_located(module: Operation, spans: dict[Operation, Span] | None = None) -> None:
    """Verify op by op (parents first); raise LocatedVerifyException with a location."""
    spans = spans or {}
    for op in module.walk():
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise LocatedVerifyException(op, f"'{op.name}' op {e}", spans.get(op)) from None


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
    "DiagnosticException",
    "LocatedVerifyException",
    "LinearTimeLexer",
    "LocatingParser",
    "ParseError",
    "make_context",
    "parse",
    "parse_module",
    "to_text",
    "verify_located",
]
