"""Contexts, parsing with source locations, located verification, printing.

xDSL's verifier reports no source position; `parse_and_verify` keeps the
span of every parsed op and verifies op by op, so a verifier error reads
`file:line:col: error: ...` with the offending line, as mlir-opt prints it.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

from xdsl.context import Context
from xdsl.dialects import arith, builtin, func, linalg, math, scf, tensor
from xdsl.dialects.builtin import AnyFloat, FileLineColLoc, IntAttr, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.parser import AttrParser, Parser
from xdsl.parser.core import ForwardDeclaredValue
from xdsl.parser.generic_parser import ParserState
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken

from cortex.dialects import Cortex, shapes
from cortex.dialects.base import CortexOp, attribute_problem
from cortex.dialects.shapes import ShapeError
from cortex.dialects.structure import dominance_problems, structural_problems, walk_iterative
from cortex.dialects.xdsl_patches import STRING_LITERAL, STRING_PREFIX  # xDSL's pattern backtracks exponentially
from cortex.errors import CortexError

UPSTREAM_DIALECTS = (builtin.Builtin, func.Func, arith.Arith, math.Math, scf.Scf, tensor.Tensor, linalg.Linalg)


def make_context(allow_unregistered: bool = False) -> Context:
    """A context that knows cortex and the upstream dialects it lowers to."""
    ctx = Context(allow_unregistered=allow_unregistered)
    for dialect in UPSTREAM_DIALECTS:
        ctx.load_dialect(dialect)
    ctx.load_dialect(Cortex)
    return ctx




PREFIXED_NAMES = {
    "%": "a value name (such as %x or %0)",
    "^": "a block label (such as ^bb0)",
    "#": "an attribute alias name (such as #map)",
    "!": "a type alias name (such as !t)",
}
"""What follows each identifier prefix, for the lexer's message when nothing does."""


class LinearTimeLexer(MLIRLexer):
    """xDSL's MLIR lexer with linear-time string literals and a located reason.

    Every token goes through it, the first included: the parser lexes its
    first token while it is constructed, so swapping the pattern afterwards
    left the first token to the exponential one.
    """

    _unescaped_characters_regex = STRING_LITERAL

    def _lex_prefixed_ident(self, start_pos: Position) -> MLIRToken:
        try:
            return super()._lex_prefixed_ident(start_pos)
        except ParseError as e:
            # xDSL 0.74 leaves its message's `{first_char}` placeholder unfilled.
            if "{first_char}" not in e.msg:
                raise
            prefix = self.input.content[start_pos]
            what = PREFIXED_NAMES.get(prefix, "a name")
            raise ParseError(Span(start_pos, self.pos, self.input), f"expected {what} after '{prefix}'") from None

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        if STRING_LITERAL.match(self.input.content, start_pos) is None:
            prefix = STRING_PREFIX.match(self.input.content, start_pos)
            stop = prefix.end() if prefix is not None else start_pos
            if stop < self.input.len and self.input.content[stop] == "\\":
                raise ParseError(Span(stop, stop + 2, self.input), "invalid escape sequence in string literal")
            raise ParseError(Span(start_pos, stop, self.input), "unterminated string literal")
        return super()._lex_string_literal(start_pos)


def _where(span: Span | None) -> str:
    """`file:line:col: ` of a span ('' without one), as a diagnostic starts."""
    if span is None:
        return ""
    loc = span.get_location()
    return f"{loc.file}:{loc.line}:{loc.col}: "


class LocatedVerifyException(VerifyException, CortexError):
    """A verifier failure that knows the failing op and, when parsed, where it was.

    `str(e)` is one line, `file:line:col: error: message` when parsed;
    `message` is the bare `'cortex.xxx' op ...` text and `span` its position,
    for tools (cortex-opt's --verify-diagnostics) that re-render or match it.
    """

    def __init__(self, op: Operation, message: str, span: Span | None):
        super().__init__(f"{_where(span)}error: {message}" if span is not None else message)
        self.op = op
        self.message = message
        self.span = span


NESTING_TOO_DEEP = "the input nests regions or types too deeply for the parser (at most about 100 levels)"


class BitPatternElement(AttrParser._TensorLiteralElement):
    """A hexadecimal element of a dense literal: for a float element type, the float's bits.

    MLIR prints a non-finite float (NaN, ±inf) as its bit pattern -- `0x7FC00000`
    for an f32 NaN -- and reads it back as that float; xDSL's printer does the
    same, but its parser reads a hexadecimal element of a `dense<...>` as the
    integer 2143289344. This element reads it as MLIR does, so NaN and inf
    survive a print/parse round trip.
    """

    def to_type(self, parser, type):
        if not isinstance(type, AnyFloat):
            return super().to_type(parser, type)
        size = type.compile_time_size
        if self.is_negative or not isinstance(self.value, int) or self.value >= 1 << (8 * size):
            parser.raise_error(
                f"hexadecimal float literal does not fit in {type}", at_position=self.span
            )
        return type.unpack(self.value.to_bytes(size, "little"), 1)[0]


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
        self._entries: tuple[int, dict[str, Attribute]] = (-1, {})

    def _parse_op_result_list(self):
        results = super()._parse_op_result_list()
        self._name_spans.append(self._current_token.span)
        return results

    def _parse_tensor_literal_element(self):
        hexadecimal = self._current_token.text[:2].lower() == "0x"
        element = super()._parse_tensor_literal_element()
        if hexadecimal and isinstance(element.value, int) and not isinstance(element.value, bool):
            return BitPatternElement(element.is_negative, element.value, element.span)
        return element

    def parse_optional_attr_dict(self):
        start = self._current_token.span.start
        entries = super().parse_optional_attr_dict()
        self._entries = (start, dict(entries))  # the format pops the properties out of `entries`
        return entries

    def _named_problem(self, name: Span, error: Exception) -> str:
        """A cortex op's property that failed while parsing, named (xDSL's message names none)."""
        op_type = self.ctx.get_optional_op(name.text.strip(chr(34)))
        start, entries = self._entries
        if op_type is not None and issubclass(op_type, CortexOp) and start > name.start:
            problem = attribute_problem(op_type.get_irdl_definition(), entries)
            if problem is not None:
                return problem
        return str(error)

    def _parse_dense_literal_type(self):
        start = self._current_token.span.start
        type = super()._parse_dense_literal_type()
        try:  # before xDSL expands the literal (a splat included) element by element
            shapes.check_element_count(type.get_shape(), shapes.MAX_CONSTANT_ELEMENTS, "a dense literal")
        except ShapeError as e:
            self.raise_error(str(e), start, self._current_token.span.start)
        return type

    def parse_optional_operation(self):
        start = self._current_token.span
        depth = len(self._name_spans)
        try:
            op = super().parse_optional_operation()
        except (VerifyException, ValueError, IndexError) as e:
            if len(self._name_spans) <= depth:
                raise
            name = self._name_spans[depth]
            raise ParseError(name, f"'{name.text.strip(chr(34))}' op {self._named_problem(name, e)}") from None
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
            raise ParseError(span, f"unknown operation '{name}' ({why}){self._closest_op(name, dialect if known else None)}") from None

    def _closest_op(self, name: str, dialect: str | None) -> str:
        """`; did you mean 'cortex.blur'?`: the closest op name of the dialect (or of every registered dialect)."""
        import difflib

        dialects = [dialect] if dialect else list(self.ctx.registered_dialect_names)
        names = [op.name for d in dialects if (loaded := self.ctx.get_optional_dialect(d)) for op in loaded.operations]
        close = difflib.get_close_matches(name, names, n=1)
        return f"; did you mean '{close[0]}'?" if close else ""

    def resolve_operand(self, operand, type):
        name = operand.operand_name
        if name not in self.ssa_values:
            self._first_uses.setdefault(name, operand.span)
        value = super().resolve_operand(operand, type)
        if value.name_hint is None and isinstance(value, ForwardDeclaredValue):
            with contextlib.suppress(ValueError):  # names xDSL cannot keep (e.g. `%0`) stay anonymous
                value.name_hint = name  # so a dominance error can name a value that never got defined here
        return value

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        try:
            return super().parse_module(allow_implicit_module)
        except RecursionError:
            # xDSL parses recursively: past ~100 nested regions or types Python's stack runs out.
            raise ParseError(self._current_token.span, NESTING_TOO_DEEP) from None
        except AssertionError as e:
            # A few xDSL parsers assert on the next token instead of raising a ParseError.
            raise ParseError(self._current_token.span, f"unexpected '{self._current_token.text}' ({e})") from None
        except ParseError:
            undefined = [self._first_uses[n] for n in self.forward_ssa_references if n in self._first_uses]
            if not undefined:
                raise
            first = min(undefined, key=lambda span: span.start)
            raise ParseError(first, f"use of undeclared SSA value name '{first.text}'") from None


def verify_located(module: Operation, spans: dict[Operation, Span] | None = None) -> None:
    """Verify op by op (parents first); raise LocatedVerifyException with a location."""
    spans = spans or {}
    for op in walk_iterative(module):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as e:
            raise LocatedVerifyException(op, f"'{op.name}' op {e}", _span_of(op, spans, str(e))) from None
        except ValueError:
            # xDSL's trait verifiers ask operands for their owner, which the parser's placeholder
            # for a value defined later, in another region, does not have: that is a dominance error.
            for bad, message in dominance_problems(module):
                raise LocatedVerifyException(bad, f"'{bad.name}' op {message}", _span_of(bad, spans, message)) from None
            raise
    for op, message in structural_problems(module):
        raise LocatedVerifyException(op, f"'{op.name}' op {message}", _span_of(op, spans, message))


def reject_byte_order_mark(text: str, filename: str) -> None:
    """A leading U+FEFF is not MLIR (mlir-opt rejects it too): say so at 1:1, not 'Unexpected character'."""
    if text.startswith("\ufeff"):
        raise ParseError(
            Span(0, 1, Input(text, filename)),
            "the input starts with a UTF-8 byte-order mark (U+FEFF), which MLIR text must not have; save it without one",
        )


ONLY_COMMENTS = re.compile(r"\A(?:\s|//[^\n]*)*\Z")
"""Text with nothing but whitespace and comments: as for mlir-opt, an empty module."""


def _span_of(op: Operation, spans: dict[Operation, Span], message: str) -> Span | None:
    """The op's own location; for an op the parser made up (an implicit `scf.yield`), its
    nearest located ancestor's; for the implicit top-level module, a location inside it."""
    if not spans:
        return None
    ancestor: Operation | None = op
    while ancestor is not None:
        if ancestor in spans:
            return spans[ancestor]
        ancestor = ancestor.parent_op()
    return _span_inside(op, spans, message)


def _span_inside(op: Operation, spans: dict[Operation, Span], message: str) -> Span | None:
    """Where to report an error of an op that has no location (the implicit top-level module).

    A redefined symbol is reported at its second definition, as mlir-opt does;
    otherwise at the first located op inside.
    """
    redefined = re.search(r'Redefinition of symbol "([^"]*)"', message)
    located = [o for o in walk_iterative(op) if o in spans]
    if redefined:
        named = [o for o in located if getattr(o.properties.get("sym_name"), "data", None) == redefined.group(1)]
        if len(named) > 1:
            return spans[named[1]]
    return spans[located[0]] if located else None


def parse_module(text: str, filename: str = "<input>", ctx: Context | None = None, verify: bool = True) -> ModuleOp:
    """Parse (and verify) MLIR text into a module; errors carry file:line:col."""
    reject_byte_order_mark(text, filename)
    if ONLY_COMMENTS.match(text):
        return ModuleOp([])
    parser = LocatingParser(ctx or make_context(), text, filename)
    module = parser.parse_module()
    if verify:
        verify_located(module, parser.spans)
    return module


class InvalidIRError(CortexError):
    """Text that does not parse or verify: `str(e)` is one line, `file:line:col: message`.

    `span` and `message` are kept for tools that render the source line.
    """

    def __init__(self, message: str, span: Span[Any] | None = None):
        super().__init__(f"{_where(span)}error: {message}")
        self.message = message
        self.span = span


def _parse_error_message(e: ParseError) -> str:
    """The message of xDSL's ParseError without its rendering (location, source lines, carets).

    Not the rendering's last line: a span over several lines ends in carets.
    """
    return e.msg.strip() or "parse error"


def parse(path_or_text: str | Path, ctx: Context | None = None) -> ModuleOp:
    """A module from MLIR text, a `pathlib.Path`, or a `str` naming an existing file.

    A one-line `str` ending in `.mlir` that names no file is reported as a
    missing file, not parsed as text. Errors are `CortexError`s (`InvalidIRError`
    for text that does not parse or verify).
    """
    if not isinstance(path_or_text, (str, Path)):
        raise CortexError(
            f"cortex.parse takes MLIR text (str) or a path (str or pathlib.Path), got {type(path_or_text).__name__}"
        )
    text, filename = None, "<string>"
    if isinstance(path_or_text, Path) or _looks_like_path(path_or_text):
        path = Path(path_or_text)
        try:
            text = path.read_bytes().decode("utf-8")
        except OSError as e:
            raise CortexError(f"cannot read {path}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise CortexError(f"{path} is not UTF-8 text (byte {e.start})") from None
        filename = str(path)
    else:
        text = path_or_text
    try:
        return parse_module(text, filename, ctx)
    except ParseError as e:
        raise InvalidIRError(_parse_error_message(e), e.span) from None
    except LocatedVerifyException as e:
        raise InvalidIRError(e.message, e.span) from None
    except VerifyException as e:
        raise InvalidIRError(str(e)) from None


def _looks_like_path(text: str) -> bool:
    if "\n" in text or not text.strip() or len(text) > 4096:
        return False
    if text.endswith(".mlir"):
        return True
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def functions(module: ModuleOp, defined: bool = True) -> list[func.FuncOp]:
    """The `func.func`s at the top of `module`, in order (only those with a body when `defined`)."""
    return [op for op in module.ops if isinstance(op, func.FuncOp) and not (defined and op.is_declaration)]


def function_named(module: ModuleOp, name: str, defined: bool = True) -> func.FuncOp | None:
    """`@name` of `module` (with a body when `defined`), or None: the one lookup of a function by name."""
    return next((f for f in functions(module, defined) if f.sym_name.data == name), None)


def describe(op: Operation) -> str:
    """`'cortex.add' op (model.mlir:3:5, in @f, defining %sum)`: enough to find `op` in the source.

    The one way diagnostics name an op (shape inference, the lowering): its
    source location when it has one, its function, and the values it defines.
    """
    where = []
    if isinstance(op.location, FileLineColLoc):
        loc = op.location
        where.append(f"{loc.filename.data}:{loc.line.data}:{loc.column.data}")
    fn = op.parent_op()
    while fn is not None and not isinstance(fn, func.FuncOp):
        fn = fn.parent_op()
    if fn is not None:
        where.append(f"in @{fn.sym_name.data}")
    names = [f"%{r.name_hint}" for r in op.results if r.name_hint]
    if names:
        where.append(f"defining {', '.join(names)}")
    return f"'{op.name}' op" + (f" ({', '.join(where)})" if where else "")


def to_text(op: Operation, generic: bool = False) -> str:
    out = io.StringIO()
    Printer(stream=out, print_generic_format=generic).print_op(op)
    return out.getvalue() + "\n"


__all__ = [
    "DiagnosticException",
    "InvalidIRError",
    "LocatedVerifyException",
    "LinearTimeLexer",
    "LocatingParser",
    "ParseError",
    "make_context",
    "parse",
    "parse_module",
    "reject_byte_order_mark",
    "to_text",
    "verify_located",
]
