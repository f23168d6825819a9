"""Diagnostics of cortex-opt, and the `--verify-diagnostics` checker.

Every failure the driver reports (a parse error, a verifier error, a failing
pass, a bad flag) becomes one `Diagnostic`, rendered as mlir-opt renders it:

    file.mlir:3:8: error: 'cortex.add' op shapes 4 and 5 do not broadcast
      %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
           ^

With `--verify-diagnostics` the diagnostics are not printed but matched
against `// expected-error {{...}}` comments of the input, as MLIR's
SourceMgrDiagnosticVerifierHandler does; only mismatches are reported.
xDSL's flag of that name prints the error and exits 0: this one checks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.utils.exceptions import MultipleSpansParseError, ParseError
from xdsl.utils.lexer import Span

SEVERITIES = ("error", "warning", "note", "remark")


@dataclass
class Diagnostic:
    """One message, with a source position when one is known."""

    message: str
    severity: str = "error"
    file: str | None = None
    line: int | None = None
    col: int | None = None
    source_line: str | None = None
    width: int = 1
    notes: list[Diagnostic] = field(default_factory=list)

    def __post_init__(self) -> None:
        # One line, as mlir-opt prints it (xDSL splits some constraint messages).
        self.message = " ".join(part.strip() for part in self.message.splitlines() if part.strip())

    @classmethod
    def at(cls, span: Span[Any] | None, message: str, severity: str = "error") -> Diagnostic:
        """A diagnostic at `span` (None: no location)."""
        if span is None:
            return cls(message, severity)
        file, line, col = span.get_location()
        text = span.input.content
        start = span.input.get_start_of_line(span.start)
        end = span.input.get_end_of_line(span.start)
        source = text[start:end]
        if isinstance(source, bytes):
            source = source.decode("utf-8", "replace")
        width = max(1, min(span.end, end) - span.start)
        return cls(message, severity, file, line, col, source.rstrip("\r"), width)

    @property
    def location(self) -> str | None:
        """`file:line:col`, or just `file` for a diagnostic about a whole file (an ONNX model that does not import)."""
        if self.file is None:
            return None
        if self.line is None:
            return self.file
        return f"{self.file}:{self.line}:{self.col}"

    def headline(self) -> str:
        """`file:line:col: error: message`, the first line of the rendering."""
        prefix = f"{self.location}: " if self.location else ""
        return f"{prefix}{self.severity}: {self.message}"

    def render(self) -> str:
        """The diagnostic as mlir-opt prints it: headline, source line, caret, notes."""
        lines = [self.headline()]
        if self.source_line is not None and self.col is not None:
            lines.append(self.source_line)
            lines.append(" " * (self.col - 1) + "^" + "~" * (self.width - 1))
        text = "\n".join(lines) + "\n"
        return text + "".join(note.render() for note in self.notes)


def from_parse_error(e: ParseError) -> Diagnostic:
    """A ParseError (xDSL keeps its span and bare message apart) as a Diagnostic."""
    diag = Diagnostic.at(e.span, e.msg.strip())
    if isinstance(e, MultipleSpansParseError):
        diag.notes = [Diagnostic.at(span, msg or "see here", "note") for span, msg in e.refs]
    elif (note := type_mismatch_note(e)) is not None:
        diag.notes = [note]
    return diag


_USED_WITH_TYPE = re.compile(r"operand is used with type .*, but has been previously used or defined with type")
_DEFINED_WITH_TYPE = re.compile(r"Result (?P<name>%[^ ]+) is defined with type (?P<defined>.+), but used with type (?P<used>.+)$")


def type_mismatch_note(e: ParseError) -> Diagnostic | None:
    """MLIR's note for an SSA value whose types disagree: "prior use here" at the value's first
    appearance (its definition or an earlier use), or "previously used here with type T" at the first
    use of a value defined later. xDSL's error names only the later position; the first one is found
    in the text, as the first occurrence of the same `%name` token before it."""
    span = e.span
    if span is None:
        return None
    content = span.input.content
    text = content.decode("utf-8", "replace") if isinstance(content, bytes) else content
    message = e.msg.strip()
    if _USED_WITH_TYPE.match(message):
        name, before, note = text[span.start : span.end], span.start, "prior use here"
    elif (match := _DEFINED_WITH_TYPE.match(message)) is not None:
        name, before, note = match["name"], span.start, f"previously used here with type '{match['used']}'"
    else:
        return None
    if not re.fullmatch(r"%[\w$.#-]+", name):
        return None
    for found in re.finditer(re.escape(name) + r"(?![\w$.#-])", text[:before]):
        line_start = text.rfind("\n", 0, found.start()) + 1
        if "//" in text[line_start : found.start()]:  # in a comment
            continue
        return Diagnostic.at(Span(found.start(), found.end(), span.input), note, "note")
    return None


# --------------------------------------------------------------------------
# --verify-diagnostics
# --------------------------------------------------------------------------

DIRECTIVE = re.compile(
    r"expected-(?P<severity>error|warning|note|remark)(?P<regex>-re)?"
    r"[ \t]*(?:@(?P<designator>\S+?))?[ \t]*\{\{(?P<message>.*)\}\}[ \t]*$"
)
DIRECTIVE_START = re.compile(r"//.*\bexpected-(?:error|warning|note|remark)\b")


@dataclass
class Expectation:
    """One `// expected-<severity>@<designator> {{message}}` comment."""

    severity: str
    message: str
    line: int
    """The line the diagnostic is expected on."""
    directive: Diagnostic
    """Where the comment itself is, for reporting it."""
    regex: re.Pattern[str] | None = None
    matched: bool = False

    def matches(self, diag: Diagnostic) -> bool:
        if diag.severity != self.severity or diag.line != self.line:
            return False
        if self.regex is not None:
            return self.regex.search(diag.message) is not None
        return self.message in diag.message


def _regex_of(message: str) -> re.Pattern[str]:
    """`expected-error-re`: text is literal except `{{regex}}` parts, as in MLIR."""
    parts = re.split(r"\{\{(.*?)\}\}", message)
    return re.compile("".join(re.escape(p) if i % 2 == 0 else f"(?:{p})" for i, p in enumerate(parts)))


def parse_expectations(text: str, file: str) -> tuple[list[Expectation], list[Diagnostic]]:
    """The expectations written in `text`, and diagnostics for malformed directives.

    Lines are numbered from 1 in `text` (the driver pads a split chunk with
    newlines so they are the file's line numbers). Designators: none (this
    line), `@+N`/`@-N` (relative), `@above`/`@below` (the closest line above or
    below that holds IR, not only a comment or a directive).
    """
    expectations: list[Expectation] = []
    problems: list[Diagnostic] = []
    pending_below: list[Expectation] = []
    last_plain_line: int | None = None
    for number, source in enumerate(text.split("\n"), start=1):
        start = DIRECTIVE_START.search(source)
        if start is None:
            if source.strip() and not source.lstrip().startswith("//"):
                last_plain_line = number
                for exp in pending_below:
                    exp.line = number
                pending_below.clear()
            continue
        col = source.index("expected-", start.start()) + 1
        where = Diagnostic("", "error", file, number, col, source, 1)
        match = DIRECTIVE.search(source, col - 1)
        if match is None:
            problems.append(_at(where, "malformed expected-* directive: expected `expected-error {{message}}`"))
            continue
        designator, message = match["designator"], match["message"]
        exp = Expectation(match["severity"], message, number, where)
        if match["regex"]:
            try:
                exp.regex = _regex_of(message)
            except re.error as err:
                problems.append(_at(where, f"invalid regex in expected-{exp.severity}-re: {err}"))
                continue
        if designator is None:
            # A directive that shares its line with IR expects that line.
            if not source[: start.start()].strip():
                problems.append(
                    _at(where, "expected-* directive on a line of its own needs @above, @below, @+N or @-N")
                )
                continue
        elif re.fullmatch(r"[+-]\d+", designator):
            exp.line = number + int(designator)
        elif designator == "above":
            if last_plain_line is None:
                problems.append(_at(where, "@above: there is no line above to expect a diagnostic on"))
                continue
            exp.line = last_plain_line
        elif designator == "below":
            pending_below.append(exp)
        else:
            problems.append(_at(where, f"unknown designator '@{designator}' (use @+N, @-N, @above or @below)"))
            continue
        expectations.append(exp)
    for exp in pending_below:
        problems.append(_at(exp.directive, "@below: there is no line below to expect a diagnostic on"))
        expectations.remove(exp)
    return expectations, problems


def _at(where: Diagnostic, message: str) -> Diagnostic:
    return Diagnostic(message, "error", where.file, where.line, where.col, where.source_line, where.width)


def check_expectations(expected: Sequence[Expectation], produced: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Match produced diagnostics (and their notes) against expectations.

    Returns one error per unexpected diagnostic and per expectation that was
    not produced; empty when everything matched. Notes that nobody expected
    are ignored (they only explain an error), as are remarks.
    """
    mismatches: list[Diagnostic] = []
    for diag in produced:
        for d in (diag, *diag.notes):
            exp = next((e for e in expected if not e.matched and e.matches(d)), None)
            if exp is not None:
                exp.matched = True
            elif d.severity in ("error", "warning"):
                unexpected = Diagnostic(
                    f"unexpected {d.severity}: {d.message}", "error", d.file, d.line, d.col, d.source_line, d.width
                )
                mismatches.append(unexpected)
    for exp in expected:
        if not exp.matched:
            mismatches.append(_at(exp.directive, f'expected {exp.severity} "{exp.message}" was not produced'))
    return mismatches


__all__ = [
    "Diagnostic",
    "Expectation",
    "SEVERITIES",
    "check_expectations",
    "from_parse_error",
    "parse_expectations",
]
