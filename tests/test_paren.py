"""`paren` decides parentheses from the parsed expression, so composing generated code keeps its meaning."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.backends.numpy_codegen import paren


@pytest.mark.parametrize(
    "expr, expected",
    [
        ("x", "x"),
        ("np.float32", "np.float32"),
        ("f(a + b, c)", "f(a + b, c)"),
        ("a[:, None] * 2", "(a[:, None] * 2)"),
        ("x.T", "x.T"),
        ("2.5", "2.5"),
        ("-2.5", "(-2.5)"),  # a sign binds looser than ** and attribute access
        ("-x", "(-x)"),
        ("x ** 2", "(x ** 2)"),
        ("a if c else b", "(a if c else b)"),
        ("not a", "(not a)"),
        ("(1, 2)", "(1, 2)"),
        ("[1, 2]", "[1, 2]"),
        ("(a) + (b)", "((a) + (b))"),  # parentheses at both ends do not make it an atom
    ],
)
def test_paren(expr, expected):
    assert paren(expr) == expected


LEAVES = st.sampled_from(["a", "b", "2", "3.5", "-1", "f(a)", "v[1]"])
OPS = st.sampled_from(["+", "-", "*", "/", "**", "<", "and", "if"])


@st.composite
def expressions(draw, depth=3):
    if depth == 0 or draw(st.booleans()):
        return draw(LEAVES)
    op = draw(OPS)
    lhs, rhs = draw(expressions(depth=depth - 1)), draw(expressions(depth=depth - 1))
    if op == "if":
        return f"{paren(lhs)} if {paren(rhs)} else 0.5"
    if draw(st.booleans()):
        return f"-{paren(lhs)}"
    return f"{paren(lhs)} {op} {paren(rhs)}"


ENV = {"a": 1.5, "b": -0.75, "f": lambda x: x + 1, "v": [0.25, 2.0]}


def value(expr: str):
    try:
        return ("ok", eval(expr, {}, dict(ENV)))  # noqa: S307 - test expressions built above
    except (ZeroDivisionError, OverflowError, TypeError, ValueError) as e:
        return ("error", type(e).__name__)


@settings(max_examples=200, deadline=None)
@given(expressions(), expressions(), st.sampled_from(["*", "**", "-", "/"]))
def test_an_operand_keeps_its_meaning(left, right, op):
    """`paren(x) op paren(y)` computes `op` of the two values, whatever x and y are."""
    lv, rv = value(left), value(right)
    if lv[0] != "ok" or rv[0] != "ok":
        return
    if isinstance(lv[1], complex) or isinstance(rv[1], complex):
        return
    combined = value(f"{paren(left)} {op} {paren(right)}")
    assert combined == value(f"({lv[1]!r}) {op} ({rv[1]!r})")
