"""linalg region bodies on whole arrays (step 3 of `linalg`), and how reductions combine.

`Body` evaluates a body one ufunc per op, reusing dying temporaries with
`out=`; the reduction tables say which NumPy reduction a combiner op is and
what its identity is, so a fill of the identity is never materialised.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.dialects.linalg.ops import (
    FillOp,
    IndexOp,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from cortex.backends.numpy import syntax
from cortex.backends.numpy.arith import elementwise, in_place_capable, is_elementwise
from cortex.backends.numpy.codegen import (
    FunctionEmitter,
    Term,
    literal_expr,
    np_dtype,
    op_error,
)

# ---------------------------------------------------------------- bodies


class Body:
    """Evaluates a linalg body on whole arrays: one line per body op, reusing dying temporaries."""

    def __init__(self, fe: FunctionEmitter, op: Operation, block: Block, args: dict[BlockArgument, Callable[[], Term]], ranges):
        self.fe, self.op, self.block, self.args, self.ranges = fe, op, block, args, ranges
        self.values: dict[SSAValue, Term] = {}
        self._depends: dict[SSAValue, frozenset[BlockArgument | str]] = {}

    def term(self, value: SSAValue) -> Term:
        if value in self.values:
            return self.values[value]
        if isinstance(value, BlockArgument) and value.owner is self.block:
            thunk = self.args.get(value)
            if thunk is None:
                raise op_error(self.op, "body reads a value the vectorised form cannot provide")
            term = thunk()
        elif self.in_body(value):
            owner = value.owner
            assert isinstance(owner, Operation)
            self.evaluate_upstream(owner)
            term = self.evaluate(owner)
        else:  # defined outside the body: a scalar the whole loop shares
            term = self.fe.term(value)
            if term.is_array:
                raise op_error(self.op, "body captures a tensor from outside")
        self.values[value] = term
        return term

    def in_body(self, value: SSAValue) -> bool:
        return isinstance(value.owner, Operation) and value.owner.parent_block() is self.block

    def check_evaluable(self, op: Operation) -> None:
        if not (isinstance(op, IndexOp) or isinstance(op, arith.ConstantOp) or is_elementwise(op)):
            raise op_error(self.op, f"body op '{op.name}' has no whole-array NumPy form")

    def evaluate_upstream(self, root: Operation) -> None:
        """Evaluate every body op `root` depends on, operands first, with an explicit stack.

        The order is the recursive one (operand by operand, depth first), so the
        emitted code is the same; only Python's recursion limit is gone (a fused
        chain of thousands of ops would exceed it).
        """
        self.check_evaluable(root)
        stack: list[tuple[Operation, int]] = [(root, 0)]
        while stack:
            op, i = stack[-1]
            if i < len(op.operands):
                stack[-1] = (op, i + 1)
                value = op.operands[i]
                if value in self.values:
                    continue
                if self.in_body(value):
                    owner = value.owner
                    assert isinstance(owner, Operation)
                    self.check_evaluable(owner)
                    stack.append((owner, 0))
                else:
                    self.term(value)  # a block argument or a value from outside: no deeper
                continue
            stack.pop()
            if op is not root:
                self.values[op.results[0]] = self.evaluate(op)

    def dies_at(self, value: SSAValue, op: Operation) -> bool:
        uses = list(value.uses)
        return len(uses) == 1 and uses[0].operation is op

    def evaluate(self, op: Operation) -> Term:
        result = op.results[0]
        dtype = np_dtype(result.type)
        if isinstance(op, IndexOp):
            d = op.dim.value.data
            along = tuple(n if k == d else 1 for k, n in enumerate(self.ranges))
            return self.assign(syntax.method(syntax.call("np.arange", self.ranges[d]), "reshape", along), "int64", along)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, (IntegerAttr, FloatAttr)):
            return Term(literal_expr(op.value.value.data, dtype), dtype)
        if not is_elementwise(op):
            raise op_error(self.op, f"body op '{op.name}' has no whole-array NumPy form")
        args = [self.term(v) for v in op.operands]
        shapes = [a.shape for a in args if a.shape is not None]
        shape = tuple(np.broadcast_shapes(*shapes)) if shapes else None
        out = None
        if shape is not None and in_place_capable(op):
            for value, a in zip(op.operands, args):
                if (
                    a.owned
                    and a.shape == shape
                    and a.dtype == dtype
                    and self.dies_at(value, op)
                    and list(op.operands).count(value) == 1
                ):
                    out = a.expr
                    break
        if out is not None:
            self.fe.statement(syntax.evaluate(elementwise(op, args, out)))
            return Term(out, dtype, shape, owned=True)
        if shape is not None and in_place_capable(op) and all(a.dtype == dtype for a in args):
            # every operand of the result's dtype: the ufunc computes in it, so writing into a buffer is exact
            buffer = self.fe.buffer(dtype, shape)
            if buffer is not None:
                return self.assign(elementwise(op, args, buffer), dtype, shape)
        return self.assign(elementwise(op, args), dtype, shape)

    def assign(self, expr: ast.expr, dtype: str, shape) -> Term:
        name = self.fe.temp()
        self.fe.sized(name, dtype, shape)
        self.fe.statement(syntax.assign(name, expr))
        # NumPy arithmetic on rank-0 arrays returns scalars, which `out=` cannot write into
        return Term(syntax.name(name), dtype, shape, owned=bool(shape))

    def depends(self, value: SSAValue) -> frozenset[BlockArgument | str]:
        """The block arguments (and 'index' for linalg.index) a body value depends on."""
        memo = self._depends
        stack = [value]  # post-order with an explicit stack: bodies may be thousands of ops deep
        while stack:
            top = stack[-1]
            if top in memo:
                stack.pop()
                continue
            if isinstance(top, BlockArgument) and top.owner is self.block:
                memo[top] = frozenset([top])
            elif self.in_body(top):
                op = top.owner
                assert isinstance(op, Operation)
                pending = [v for v in op.operands if v not in memo]
                if pending:
                    stack.extend(reversed(pending))
                    continue
                deps: frozenset[BlockArgument | str] = frozenset(["index"]) if isinstance(op, IndexOp) else frozenset()
                for v in op.operands:
                    deps |= memo[v]
                memo[top] = deps
            else:
                memo[top] = frozenset()
            stack.pop()
        return memo[value]


def finish(fe: FunctionEmitter, value: SSAValue, term: Term, *, owned: bool) -> Term:
    """Bind `value` to `term`, naming the last temporary after the value when that is all it takes.

    Works on the chunk's syntax trees: `_t3 = f(...)` is retargeted to `name = f(...)`,
    and `np.add(a, b, out=_t3)` becomes `name = np.add(a, b, out=_t3)`.
    """
    statements = fe.current.statements
    name = fe.name(value)
    target = ast.Name(name, ast.Store())
    last = statements[-1] if statements else None
    held = term.expr.id if isinstance(term.expr, ast.Name) else None  # the name holding the value, if any
    if (
        held is not None
        and held.startswith("_t")
        and isinstance(last, ast.Assign)
        and len(last.targets) == 1
        and isinstance(last.targets[0], ast.Name)
        and last.targets[0].id == held
    ):
        last.targets = [target]
    elif held is not None and isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) and _writes_out(last.value, held):
        statements[-1] = ast.Assign(targets=[target], value=last.value, lineno=0)
    else:
        statements.append(ast.Assign(targets=[target], value=term.expr, lineno=0))
    return fe.defined(value, name, owned=owned)


def _writes_out(call: ast.Call, name: str) -> bool:
    return any(k.arg == "out" and isinstance(k.value, ast.Name) and k.value.id == name for k in call.keywords)


# ---------------------------------------------------------------- reductions

COMBINERS: dict[type[Operation], str] = {
    arith.AddfOp: "sum",
    arith.AddiOp: "sum",
    arith.MulfOp: "prod",
    arith.MuliOp: "prod",
    arith.MaximumfOp: "max",
    arith.MaxSIOp: "max",
    arith.MaxnumfOp: "fmax",
    arith.MinimumfOp: "min",
    arith.MinSIOp: "min",
    arith.MinnumfOp: "fmin",
    arith.OrIOp: "any",
    arith.AndIOp: "all",
}
REDUCE = {
    "sum": "np.sum",
    "prod": "np.prod",
    "max": "np.maximum.reduce",  # np.max's Python wrapper doubles the time of a small reduction
    "fmax": "np.fmax.reduce",
    "min": "np.minimum.reduce",
    "fmin": "np.fmin.reduce",
    "any": "np.any",
    "all": "np.all",
}
COMBINE = {
    "sum": "np.add",
    "prod": "np.multiply",
    "max": "np.maximum",
    "fmax": "np.fmax",
    "min": "np.minimum",
    "fmin": "np.fmin",
    "any": "np.logical_or",
    "all": "np.logical_and",
}


def identity_of(kind: str, dtype: str):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if kind in ("any", "all"):
        return kind == "all"
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        return info.min if kind in ("max", "fmax") else info.max
    return float("-inf") if kind in ("max", "fmax") else float("inf")


def combiner(op: Operation, out_arg: BlockArgument, body: Body, yielded: SSAValue) -> tuple[str, SSAValue] | None:
    """(kind, f) when the body yields `combine(f(ins), out)` with f independent of out."""
    owner = yielded.owner
    if not isinstance(owner, Operation) or type(owner) not in COMBINERS or owner.parent_block() is not body.block:
        return None
    kind = COMBINERS[type(owner)]
    if kind in ("any", "all") and np_dtype(yielded.type) != "bool":
        return None
    lhs, rhs = owner.operands
    for acc, other in ((lhs, rhs), (rhs, lhs)):
        if acc is out_arg and out_arg not in body.depends(other):
            return kind, other
    return None


def initial_value(value: SSAValue) -> SSAValue | float | int | bool | None:
    """What an `outs` tensor is known to be filled with: a constant, a scalar value, or None."""
    owner = value.owner
    if isinstance(owner, FillOp):
        scalar = owner.inputs[0]
        if isinstance(scalar.owner, arith.ConstantOp) and isinstance(scalar.owner.value, (IntegerAttr, FloatAttr)):
            return scalar.owner.value.value.data
        return scalar
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        if owner.value.is_splat():
            return owner.value.get_values()[0]
    return None
