"""Builders for the Python syntax trees the NumPy emitter produces.

Generated code is built as `ast` nodes and rendered with `ast.unparse`, so
precedence and statement structure are right by construction: `binop(a, "*",
b)` of a sum gets its parentheses from the renderer, never from a guess about
the text. The builders are thin (one node each) and take expressions or
plain Python values: names as `str` (`"np.add"` becomes the attribute chain),
numbers, booleans, None, tuples and slices as constants (a negative number as a sign
applied to its magnitude, which is how Python parses it, so `(-2) ** x`
renders with its parentheses).
"""

from __future__ import annotations

import ast
import threading
from collections.abc import Sequence

Operand = ast.expr | str | int | float | bool | None | tuple | slice
"""What a builder accepts where an expression goes (see `expr`)."""

BINARY: dict[str, type[ast.operator]] = {
    "+": ast.Add,
    "-": ast.Sub,
    "*": ast.Mult,
    "/": ast.Div,
    "//": ast.FloorDiv,
    "%": ast.Mod,
    "**": ast.Pow,
    "@": ast.MatMult,
    "&": ast.BitAnd,
    "|": ast.BitOr,
    "^": ast.BitXor,
    "<<": ast.LShift,
    ">>": ast.RShift,
}
UNARY: dict[str, type[ast.unaryop]] = {"-": ast.USub, "+": ast.UAdd, "~": ast.Invert, "not": ast.Not}
COMPARE: dict[str, type[ast.cmpop]] = {
    "==": ast.Eq,
    "!=": ast.NotEq,
    "<": ast.Lt,
    "<=": ast.LtE,
    ">": ast.Gt,
    ">=": ast.GtE,
}


def code(node: ast.AST) -> str:
    """The Python source of a tree."""
    return ast.unparse(node)


_PARSING = threading.Lock()


def parse(text: str, mode: str = "exec") -> ast.AST:
    """`ast.parse`, one thread at a time: CPython 3.11's AST constructor keeps its recursion depth in
    interpreter-wide state, so two threads parsing at once can fail with "SystemError: AST constructor
    recursion depth mismatch" (seen compiling pipelines from 8 threads)."""
    with _PARSING:
        return ast.parse(text, mode=mode)


def parse_expr(text: str) -> ast.expr:
    """The tree of one Python expression (a syntax error fails here, not in generated code)."""
    tree = parse(text, mode="eval")
    assert isinstance(tree, ast.Expression)
    return tree.body


def name(identifier: str) -> ast.Name:
    return ast.Name(identifier, ast.Load())


def dotted(path: str) -> ast.expr:
    """`np.fmax.reduce` as a name and its attributes."""
    head, *rest = path.split(".")
    node: ast.expr = ast.Name(head, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node


def expr(value: Operand) -> ast.expr:
    """An expression from a tree, a (dotted) name, or a Python constant."""
    if isinstance(value, ast.expr):
        return value
    if isinstance(value, str):
        return dotted(value)
    if isinstance(value, tuple):
        return tuple_(*value)
    if isinstance(value, slice):
        return slice_(value.start, value.stop, value.step)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    return ast.Constant(value)


def string(text: str) -> ast.Constant:
    """A string literal (`expr` would read a `str` as a name)."""
    return ast.Constant(text)


def call(fn: Operand, *args: Operand, **kwargs: Operand) -> ast.Call:
    return ast.Call(expr(fn), [expr(a) for a in args], [ast.keyword(k, expr(v)) for k, v in kwargs.items()])


def attr(obj: Operand, name: str) -> ast.Attribute:
    return ast.Attribute(expr(obj), name, ast.Load())


def method(obj: Operand, name: str, *args: Operand, **kwargs: Operand) -> ast.Call:
    return call(attr(obj, name), *args, **kwargs)


def binop(lhs: Operand, op: str, rhs: Operand) -> ast.BinOp:
    return ast.BinOp(expr(lhs), BINARY[op](), expr(rhs))


def unary(op: str, operand: Operand) -> ast.UnaryOp:
    return ast.UnaryOp(UNARY[op](), expr(operand))


def compare(lhs: Operand, op: str, rhs: Operand) -> ast.Compare:
    return ast.Compare(expr(lhs), [COMPARE[op]()], [expr(rhs)])


def both(*values: Operand) -> ast.BoolOp:
    return ast.BoolOp(ast.And(), [expr(v) for v in values])


def either(*values: Operand) -> ast.BoolOp:
    return ast.BoolOp(ast.Or(), [expr(v) for v in values])


def if_else(body: Operand, test: Operand, orelse: Operand) -> ast.IfExp:
    """`body if test else orelse`."""
    return ast.IfExp(expr(test), expr(body), expr(orelse))


def tuple_(*elements: Operand) -> ast.Tuple:
    return ast.Tuple([expr(e) for e in elements], ast.Load())


def list_(*elements: Operand) -> ast.List:
    return ast.List([expr(e) for e in elements], ast.Load())


def slice_(lower: Operand = None, upper: Operand = None, step: Operand = None) -> ast.Slice:
    """`lower:upper:step`, each part left out when None."""
    return ast.Slice(*(None if part is None else expr(part) for part in (lower, upper, step)))


def index(obj: Operand, items: Sequence[Operand]) -> ast.Subscript:
    """`obj[i, j, ...]`; no items is `obj[()]`."""
    parts = [expr(i) for i in items]
    key = parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load())
    return ast.Subscript(expr(obj), key, ast.Load())


def assign(targets: str | Sequence[str] | ast.expr, value: Operand) -> ast.Assign:
    """`a = value`, `a, b = value`, or `x[i] = value` (a target tree)."""
    if isinstance(targets, ast.expr):
        target: ast.expr = targets
        if isinstance(target, (ast.Subscript, ast.Attribute, ast.Name)):
            target.ctx = ast.Store()
    elif isinstance(targets, str):
        target = ast.Name(targets, ast.Store())
    else:
        target = ast.Tuple([ast.Name(t, ast.Store()) for t in targets], ast.Store())
    return ast.Assign(targets=[target], value=expr(value), lineno=0)


def if_header(test: Operand) -> str:
    """`if test:`, the header line of a block (rendered from its tree, body left to the caller)."""
    return code(ast.If(expr(test), [], []))


def for_header(target: str, iterable: Operand) -> str:
    """`for target in iterable:`, the header line of a loop."""
    return code(ast.For(ast.Name(target, ast.Store()), expr(iterable), [], [], lineno=0))


def returns(*values: Operand) -> ast.Return:
    """`return (a, b, ...)`: functions of the generated module always return a tuple."""
    return ast.Return(tuple_(*values))


def evaluate(value: Operand) -> ast.Expr:
    """An expression statement (a call for its effect)."""
    return ast.Expr(expr(value))


def names(node: ast.AST) -> set[str]:
    """Every name a tree reads."""
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
