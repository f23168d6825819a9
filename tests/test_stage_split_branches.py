"""A stage never spans the two branches of an `scf.if`: each op runs only under its own branch's condition.

Consecutive ops with one `cortex.origin` are one stage. The last op of the then-branch and the first
op of the else-branch are consecutive in the branches' op list, and may carry one origin; were they
one stage, the else op would be cloned into the then-branch's copy of the `scf.if` and the
else-branch would read zeros. Staged (workers=2) calls must give the one-worker values on both
sides of the condition, for any branch contents (the Hypothesis strategy draws ops and origins so
that equal origins meet at the branch boundary)."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.scheduling import assert_same
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cortex

T = "tensor<16xf32>"
OPS = {
    "neg": "cortex.neg {x}{attrs} : {t} -> {t}",
    "abs": "cortex.abs {x}{attrs} : {t} -> {t}",
    "double": "cortex.add {x}, {x}{attrs} : ({t}, {t}) -> {t}",
    "square": "cortex.mul {x}, {x}{attrs} : ({t}, {t}) -> {t}",
}
ORIGINS = [None, "left", "right"]
INPUTS = [np.linspace(-2.0, 1.5, 16, dtype=np.float32), np.linspace(0.25, -3.0, 16, dtype=np.float32)]


def branch_lines(steps: list[tuple[str, str | None]], tag: str) -> tuple[list[str], str]:
    lines, x = [], "%x"
    for k, (op, origin) in enumerate(steps):
        attrs = f' {{cortex.origin = "{origin}"}}' if origin else ""
        lines.append(f"      %{tag}{k} = " + OPS[op].format(x=x, attrs=attrs, t=T))
        x = f"%{tag}{k}"
    return lines, x


def gated_text(then: list[tuple[str, str | None]], other: list[tuple[str, str | None]]) -> str:
    then_lines, then_value = branch_lines(then, "t")
    else_lines, else_value = branch_lines(other, "e")
    return "\n".join([
        f"func.func @f(%x: {T}, %c: i1) -> {T} {{",
        f"    %r = scf.if %c -> ({T}) {{",
        *then_lines, f"      scf.yield {then_value} : {T}",
        "    } else {",
        *else_lines, f"      scf.yield {else_value} : {T}",
        "    }",
        f"    func.return %r : {T}",
        "}",
    ])


def calls(text: str, workers: int) -> list:
    compiled = cortex.compile(cortex.parse(text), entry="f", mode=None, weights={})
    compiled.stage_threads = workers
    return [compiled(x, c) for x in INPUTS for c in (1, 0)]


STEP = st.tuples(st.sampled_from(sorted(OPS)), st.sampled_from(ORIGINS))


@st.composite
def branch_pairs(draw):
    """Two branches; often the then-branch's last origin is the else-branch's first (the boundary case)."""
    then = draw(st.lists(STEP, min_size=1, max_size=3))
    other = draw(st.lists(STEP, min_size=1, max_size=3))
    if draw(st.booleans()):
        origin = draw(st.sampled_from(ORIGINS[1:]))
        then[-1] = (then[-1][0], origin)
        other[0] = (other[0][0], origin)
    return then, other


@pytest.mark.slow
@settings(max_examples=6, deadline=None, derandomize=True)
@given(branches=branch_pairs())
@example(branches=([("neg", "left"), ("abs", "right")], [("double", "right"), ("neg", "left")]))
@example(branches=([("square", None), ("neg", "left")], [("abs", "left"), ("double", None)]))
def test_staged_calls_equal_one_worker_on_both_branches(branches):
    then, other = branches
    text = gated_text(then, other)
    want = calls(text, workers=1)
    assert_same(calls(text, workers=2), want)
