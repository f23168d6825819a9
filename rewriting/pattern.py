"""A small declarative pattern matcher over xDSL SSA values.

Why: fusion rewrites (linear/conv + batch_norm, a GELU spelled out as single
ops) are trees of ops with wildcards, constants, optional operands and
commutative operators. Written by hand each one is a ladder of `isinstance`
checks that hides the shape being matched and cannot say why it failed. Here
the shape is a value (AND/OR/NOT, wildcards, attribute
constraints, optional parts, bound names, failure explanations), and a
rewrite is a table entry pattern → function, as in tinygrad's PatternMatcher:

    x = Any().bind("x")
    relu_of_relu = Op(ReluOp, Op(ReluOp, x).bind("inner"))
    m = match(relu_of_relu, value)        # Match | None
    m["x"], m.op("inner")                 # the bound SSA value, its defining op
    explain(relu_of_relu, value)          # which sub-pattern failed, and what it found

Matching is a backtracking search (each pattern yields every way it can
extend the bindings), so a name bound twice must be the same SSA value in
both places (`x` above), and OR / commutative operands try every
alternative before giving up. Patterns are immutable: `bind` returns a copy.

The matcher only matches: a rewrite is an xDSL `RewritePattern` rooted at
one op class, as every canonicalisation is, whose `match_and_rewrite` asks
`match` about the op's result and rewrites through the `PatternRewriter`;
passes apply their patterns with xDSL's `GreedyRewritePatternApplier` and
`PatternRewriteWalker`:

    class FoldReluOfRelu(RewritePattern):
        @op_type_rewrite_pattern
        def match_and_rewrite(self, op: ReluOp, rewriter: PatternRewriter, /) -> None:
            if (m := match(relu_of_relu, op.result)) is not None:
                rewriter.replace(op, [], [m.op("inner").results[0]])
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import Commutative, is_side_effect_free

from cortex.dialects.folding import constant_value
from cortex.dialects.tensor_ops import ConstantOp
from cortex.semantics.values import attr_value

Env = Mapping[str, SSAValue]

# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Match:
    """The bound values of a successful match (`name` → SSA value), plus the root."""

    root: SSAValue
    values: Mapping[str, SSAValue]

    def __getitem__(self, name: str) -> SSAValue:
        return self.values[name]

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def get(self, name: str) -> SSAValue | None:
        return self.values.get(name)

    def op(self, name: str) -> Operation:
        """The op defining the value bound to `name`."""
        owner = self.values[name].owner
        if not isinstance(owner, Operation):
            raise KeyError(f"'{name}' is bound to a block argument, not an op result")
        return owner

    def constant(self, name: str) -> np.ndarray | float:
        """The compile-time value of the constant bound to `name`."""
        value = constant_value(self.values[name])
        if value is None:
            raise KeyError(f"'{name}' is not bound to a constant")
        return value


@dataclass
class _Trace:
    """Failures seen during a search; the deepest one is the best explanation."""

    best: tuple[int, str] | None = None
    depth: int = 0
    path: list[str] = field(default_factory=list)

    def fail(self, message: str) -> None:
        if self.best is None or len(self.path) > self.best[0]:
            where = " > ".join(self.path) or "root"
            self.best = (len(self.path), f"at {where}: {message}")


def show(value: SSAValue | None) -> str:
    """A short description of what a pattern found: `%y = cortex.conv2d`, `block argument #0`."""
    if value is None:
        return "no operand (absent)"
    name = f"%{value.name_hint}" if value.name_hint else "a value"
    if isinstance(value, BlockArgument):
        return f"{name} (block argument #{value.index})"
    if isinstance(value, OpResult):
        return f"{name} = {value.op.name}"
    return name


# ---------------------------------------------------------------- patterns


class Pattern:
    """Base class: `_match` yields every extension of `env` under which the value matches."""

    _name: str | None = None

    def bind(self, name: str) -> Pattern:
        """A copy that also binds the matched value to `name` (absent values are not bound)."""
        bound = copy.copy(self)
        bound._name = name
        return bound

    def __or__(self, other: Pattern) -> Pattern:
        return Or(self, other)

    def __and__(self, other: Pattern) -> Pattern:
        return And(self, other)

    def __invert__(self) -> Pattern:
        return Not(self)

    def describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.describe() + (f" as '{self._name}'" if self._name else "")

    def _match(self, value: SSAValue | None, env: Env, trace: _Trace) -> Iterator[Env]:
        raise NotImplementedError

    def matches(self, value: SSAValue | None, env: Env, trace: _Trace) -> Iterator[Env]:
        """`_match`, then the binding: a name already bound must be the very same value."""
        trace.path.append(repr(self))
        try:
            if value is None and not isinstance(self, Optional):
                trace.fail(f"expected {self.describe()}, found {show(value)}")
                return
            for extended in self._match(value, env, trace):
                if self._name is None or value is None:
                    yield extended
                elif self._name in extended and extended[self._name] is not value:
                    trace.fail(f"'{self._name}' is already bound to {show(extended[self._name])}, found {show(value)}")
                else:
                    yield {**extended, self._name: value}
        finally:
            trace.path.pop()


class Any(Pattern):
    """Wildcard: any SSA value (an op result or a block argument)."""

    def describe(self) -> str:
        return "Any()"

    def _match(self, value, env, trace):
        yield env


class Optional(Pattern):
    """An operand that may be absent (linear's bias); when present it must match `inner`."""

    def __init__(self, inner: Pattern | None = None):
        self.inner = inner if inner is not None else Any()

    def describe(self) -> str:
        return f"Optional({self.inner!r})"

    def _match(self, value, env, trace):
        if value is None:
            yield env
        else:
            yield from self.inner.matches(value, env, trace)


class Op(Pattern):
    """A value produced by an op of `kind` (a class or an op name) whose operands match.

    `operands`: one pattern per operand, in order; trailing `Optional(...)`
    patterns may meet absent operands. Leave them out to accept any operands.
    `props`: property name → expected value (an Attribute, a plain value as
    `op_params` gives it, or a predicate on that plain value).
    `predicate`: any further test on the op. `one_use`: the value has no
    other use (so rewriting its user leaves the op dead, not duplicated).
    `commutative`: try both operand orders of a two-operand op; by default
    for ops with xDSL's `Commutative` trait (cortex.add, cortex.mul).
    """

    def __init__(
        self,
        kind: type[Operation] | str,
        *operands: Pattern,
        props: Mapping[str, object] | None = None,
        predicate: Callable[[Operation], bool] | None = None,
        one_use: bool = False,
        commutative: bool | None = None,
    ):
        self.kind = kind
        self.operands: Sequence[Pattern] | None = operands or None
        self.props = dict(props or {})
        self.predicate = predicate
        self.one_use = one_use
        self.commutative = commutative

    @property
    def op_name(self) -> str:
        return self.kind if isinstance(self.kind, str) else self.kind.name

    def describe(self) -> str:
        return self.op_name

    def _is_commutative(self, op: Operation) -> bool:
        if self.commutative is not None:
            return self.commutative
        return op.has_trait(Commutative)

    def _check_op(self, value: SSAValue, trace: _Trace) -> Operation | None:
        op = value.owner
        if not isinstance(op, Operation) or op.name != self.op_name:
            trace.fail(f"expected {self.op_name}, found {show(value)}")
            return None
        if self.one_use and not value.has_one_use():
            trace.fail(f"expected {show(value)} to have one use, it has {len(list(value.uses))}")
            return None
        for key, expected in self.props.items():
            attr = op.properties.get(key, op.attributes.get(key))
            actual = None if attr is None else attr_value(attr)
            if callable(expected) and not isinstance(expected, Attribute):
                ok = actual is not None and bool(expected(actual))
            else:
                ok = attr == expected or actual == expected
            if not ok:
                trace.fail(f"expected {self.op_name} with {key} = {expected!r}, found {key} = {actual!r}")
                return None
        if self.predicate is not None and not self.predicate(op):
            trace.fail(f"{show(value)} does not satisfy the predicate of {self.op_name}")
            return None
        return op

    def _match(self, value, env, trace):
        op = self._check_op(value, trace)
        if op is None:
            return
        if self.operands is None:
            yield env
            return
        actual = list(op.operands)
        if len(actual) > len(self.operands):
            trace.fail(f"expected {self.op_name} with at most {len(self.operands)} operands, found {len(actual)}")
            return
        orders = [actual]
        if len(actual) == 2 and self._is_commutative(op):
            orders.append(actual[::-1])
        for order in orders:
            padded: list[SSAValue | None] = order + [None] * (len(self.operands) - len(order))
            yield from _match_all(list(zip(self.operands, padded)), env, trace)


def _match_all(pairs: list[tuple[Pattern, SSAValue | None]], env: Env, trace: _Trace) -> Iterator[Env]:
    """Every way all (pattern, value) pairs match together, left to right."""
    if not pairs:
        yield env
        return
    (pattern, value), rest = pairs[0], pairs[1:]
    for extended in pattern.matches(value, env, trace):
        yield from _match_all(rest, extended, trace)


class Const(Pattern):
    """A `cortex.constant` or f32 `arith.constant`.

    `value`: every element within `tol` of this number (splat or not).
    `predicate`: a test on the constant's NumPy value.
    """

    def __init__(self, value: float | None = None, predicate: Callable[[np.ndarray], bool] | None = None, tol: float = 0.0):
        self.value = value
        self.predicate = predicate
        self.tol = tol

    def describe(self) -> str:
        if self.value is None:
            return "Const()"
        return f"Const({self.value!r}" + (f" ± {self.tol:g})" if self.tol else ")")

    def _match(self, value, env, trace):
        if not isinstance(value.owner, (ConstantOp, arith.ConstantOp)):
            trace.fail(f"expected a constant, found {show(value)}")
            return
        array = constant_value(value)
        if array is None:
            trace.fail(f"expected a constant, found {show(value)}, whose value is not known")
            return
        array = np.asarray(array)
        if self.value is not None and not (
            array.size > 0 and bool(np.all(np.abs(array.astype(np.float64) - self.value) <= self.tol))
        ):
            found = array.reshape(-1)[0] if array.size and np.all(array == array.reshape(-1)[0]) else array
            trace.fail(f"expected {self.describe()}, found {show(value)} holding {found!r}")
            return
        if self.predicate is not None and not self.predicate(array):
            trace.fail(f"{show(value)} does not satisfy the predicate of {self.describe()}")
            return
        yield env


class Or(Pattern):
    """Either alternative (both are tried, in order, when backtracking)."""

    def __init__(self, *alternatives: Pattern):
        self.alternatives = alternatives

    def describe(self) -> str:
        return "(" + " | ".join(map(repr, self.alternatives)) + ")"

    def _match(self, value, env, trace):
        for alternative in self.alternatives:
            yield from alternative.matches(value, env, trace)


class And(Pattern):
    """Both patterns, on the same value, with bindings combined."""

    def __init__(self, *parts: Pattern):
        self.parts = parts

    def describe(self) -> str:
        return "(" + " & ".join(map(repr, self.parts)) + ")"

    def _match(self, value, env, trace):
        yield from _match_all([(p, value) for p in self.parts], env, trace)


class Not(Pattern):
    """Matches when `inner` does not; binds nothing."""

    def __init__(self, inner: Pattern):
        self.inner = inner

    def describe(self) -> str:
        return f"Not({self.inner!r})"

    def _match(self, value, env, trace):
        if next(self.inner.matches(value, env, _Trace()), None) is None:
            yield env
        else:
            trace.fail(f"expected anything but {self.inner!r}, found {show(value)}")


# ---------------------------------------------------------------- entry points


def match(pattern: Pattern, value: SSAValue) -> Match | None:
    """The first match of `pattern` rooted at `value`, or None."""
    env = next(pattern.matches(value, {}, _Trace()), None)
    return None if env is None else Match(value, env)


def explain(pattern: Pattern, value: SSAValue) -> str:
    """Why `pattern` does not match `value`: the deepest sub-pattern that failed and what it found."""
    trace = _Trace()
    env = next(pattern.matches(value, {}, trace), None)
    if env is not None:
        return f"matched: {', '.join(f'{k} = {show(v)}' for k, v in env.items()) or 'no bindings'}"
    assert trace.best is not None, "a failed match always records why"
    return trace.best[1]


def erase_dead_producers(rewriter: PatternRewriter, values: Iterable[SSAValue]) -> None:
    """Erase the producers of `values` that a rewrite left unused, and theirs in turn.

    Why: after replacing a matched root, the rest of the matched tree is dead;
    erasing just that (side-effect-free ops only) keeps a fusion pass from
    touching unrelated dead code, which is DCE's business.
    """
    worklist = [v.owner for v in values if isinstance(v, OpResult)]
    while worklist:
        op = worklist.pop()
        if op.parent is None or any(r.uses for r in op.results) or not is_side_effect_free(op):
            continue
        operands = list(op.operands)
        rewriter.erase(op)
        worklist.extend(v.owner for v in operands if isinstance(v, OpResult))

