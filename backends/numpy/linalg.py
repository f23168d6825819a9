"""linalg on tensors as whole-array NumPy: never a Python loop per element.

This module holds the structured-op translators; the steps below live in
`access` (1, 2), `bodies` (3, and the reduction tables) and
`contraction` (4's contractions).

Every structured op (`linalg.generic` and the named ops, which xDSL gives
indexing maps and a body too) is translated the same way:

1. *Access*: each operand becomes a view whose axes are loop dimensions,
   read off its indexing map: a projected permutation is plain slicing
   (`x[:, :, 0]`), anything affine-linear with non-negative coefficients
   (convolution and pooling windows, `d0 * 2 + d3`) a strided view
   (`_rt.affine_view`, no copy, bounds checked here).
2. *Alignment*: for elementwise work the view is transposed to loop order
   and given `None` axes for the dimensions it lacks, so NumPy broadcasting
   is the iteration space.
3. *Body*: the arith/math body runs once, on whole arrays, one ufunc per body
   op, writing into a temporary that dies there (`out=`) instead of
   allocating.
4. *Reductions*: a body `yield combine(f(ins), out)` becomes `np.sum` /
   `np.max` / ... of `f` over the reduction axes; a sum of products of
   operands becomes a contraction (`@`, `np.tensordot`, `np.einsum`) on the
   un-aligned views, so matmul and convolution reach BLAS. An `outs` value
   that is a fill of the reduction's identity is never materialised.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from math import prod
from typing import Any

import numpy as np
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    FillOp,
    PoolingNchwMaxOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from cortex.backends.numpy import syntax
from cortex.backends.numpy.access import Access, access, align, loop_ranges, permutation_expr
from cortex.backends.numpy.bodies import COMBINE, REDUCE, Body, combiner, finish, identity_of, initial_value
from cortex.backends.numpy.codegen import (
    FunctionEmitter,
    Term,
    dt,
    literal_expr,
    np_dtype,
    op_error,
    static_shape,
    tensor_shape,
    translates,
    yielded_value,
)
from cortex.backends.numpy.contraction import contraction, product_factors

# ---------------------------------------------------------------- structured ops


class Structured:
    """One structured op being translated: maps, loop extents, operand views."""

    def __init__(self, fe: FunctionEmitter, op: LinalgStructuredOperation):
        self.fe, self.op = fe, op
        self.maps = [m.data for m in op.get_indexing_maps().data]
        self.operands = list(op.inputs) + list(op.outputs)
        if any(static_shape(v.type) is None for v in op.outputs):
            raise op_error(op, "on memrefs or scalars has no NumPy translation (tensors only)")
        self.ranges = loop_ranges(op, self.maps, self.operands)
        iterators = [it.data for it in op.get_iterator_types().data]
        self.reduction = tuple(d for d, it in enumerate(iterators) if it == IteratorType.REDUCTION)
        self.parallel = tuple(d for d, it in enumerate(iterators) if it != IteratorType.REDUCTION)
        self.block = op.body.block

    def access(self, index: int) -> tuple[Access, Term]:
        value = self.operands[index]
        term = self.fe.term(value)
        if not term.is_array:
            return Access(term.expr, ()), term  # a scalar input broadcasts everywhere
        return access(self.op, term, self.maps[index], self.ranges), term

    def aligned(self, index: int) -> Callable[[], Term]:
        def thunk() -> Term:
            acc, term = self.access(index)
            if not term.is_array:
                return term
            expr, shape = align(acc, self.ranges)
            value = self.operands[index]
            owned = (
                acc.identity
                and self.fe.reusable(value, self.op) is not None
                and self.operands.count(value) == 1
                and shape == self.ranges
            )
            return Term(expr, term.dtype, shape, owned)

        return thunk

    def body(self) -> Body:
        args = {arg: self.aligned(i) for i, arg in enumerate(self.block.args)}
        return Body(self.fe, self.op, self.block, args, self.ranges)

    def out_dims(self, index: int) -> tuple[int, ...]:
        m = self.maps[len(self.op.inputs) + index]
        dims = []
        for e in m.results:
            if not isinstance(e, AffineDimExpr):
                raise op_error(self.op, f"output indexing map {m} is not a projected permutation")
            dims.append(e.position)
        return tuple(dims)

    # ---- parallel

    def parallel_result(self, body: Body, index: int, yielded: SSAValue) -> None:
        result = self.op.results[index]
        dtype = np_dtype(result.type)
        out_dims = self.out_dims(index)
        if sorted(out_dims) != list(range(len(self.ranges))):
            raise op_error(self.op, "has a parallel output that does not cover every loop")
        term = body.term(yielded)
        if not term.is_array:
            full = syntax.call("np.full", static_shape(result.type), term.expr, dt(dtype))
            finish(self.fe, result, Term(full, dtype), owned=True)
            return
        expr, owned = term.expr, term.owned
        if term.shape != self.ranges:
            expr, owned = syntax.call("np.broadcast_to", expr, self.ranges), False
        if term.dtype != dtype:
            expr, owned = syntax.method(expr, "astype", dt(dtype)), True
        expr = permutation_expr(expr, list(out_dims))
        finish(self.fe, result, Term(expr, dtype, self.ranges, owned), owned=owned)

    # ---- reductions

    def reduction_result(self, body: Body, index: int, kind: str, f: SSAValue) -> None:
        result = self.op.results[index]
        dtype = np_dtype(result.type)
        out_dims = self.out_dims(index)
        if sorted(out_dims) != list(self.parallel):
            raise op_error(self.op, "has a reduction output that is not indexed by exactly the parallel loops")
        scalars: list[SSAValue] = []
        if kind == "sum":
            factors = product_factors(f, body)
            scalars = [v for v in factors if not body.depends(v)]
            arrays = [v for v in factors if body.depends(v)]
            single = [v for v in arrays if len(body.depends(v)) == 1 and next(iter(body.depends(v))) in self.block.args[: len(self.op.inputs)]]
            if len(arrays) >= 2 and len(single) == len(arrays):
                red = self.contract(body, arrays, out_dims, dtype)
            else:
                red = self.reduce_aligned(body, kind, arrays, out_dims, dtype)
        else:
            red = self.reduce_aligned(body, kind, [f], out_dims, dtype)
        for s in scalars:
            red = self.apply(red, "np.multiply", body.term(s).expr, dtype)
        init = initial_value(self.op.outputs[index])
        identity = identity_of(kind, dtype)
        if isinstance(init, SSAValue):
            red = self.apply(red, COMBINE[kind], self.fe.expr(init), dtype)
        elif init is None:
            red = self.apply(red, COMBINE[kind], self.fe.expr(self.op.outputs[index]), dtype)
        elif init != identity:
            red = self.apply(red, COMBINE[kind], literal_expr(init, dtype), dtype)
        finish(self.fe, result, red, owned=red.owned)

    def apply(self, red: Term, ufunc: str, other: ast.expr, dtype: str) -> Term:
        """`ufunc(red, other)`, in place when `red` is an owned temporary of the right dtype."""
        if red.owned and red.dtype == dtype:
            self.fe.statement(syntax.evaluate(syntax.call(ufunc, red.expr, other, out=red.expr)))
            return red
        name = self.fe.temp()
        self.fe.sized(name, dtype, red.shape)
        self.fe.statement(syntax.assign(name, syntax.call(ufunc, red.expr, other)))
        return Term(syntax.name(name), dtype, red.shape, owned=True)

    def contract(self, body: Body, factors: list[SSAValue], out_dims: tuple[int, ...], dtype: str) -> Term:
        operands = []
        for v in factors:
            (arg,) = body.depends(v)
            if not isinstance(arg, BlockArgument):
                raise op_error(self.op, "contracts a factor that is not read from one operand")
            acc, term = self.access(arg.index)
            view = Term(acc.expr, term.dtype, tuple(self.ranges[d] for d in acc.dims))
            sub = Body(self.fe, self.op, self.block, {arg: _given(view)}, self.ranges)
            operands.append((sub.term(v).expr, acc.dims))
        if not set(out_dims) <= {d for _, dims in operands for d in dims}:
            raise op_error(self.op, "contracts to an output dimension no operand has")
        name = self.fe.temp()
        self.fe.sized(name, dtype, tuple(self.ranges[d] for d in out_dims))
        self.fe.statement(syntax.assign(name, contraction(operands, out_dims, self.ranges)))
        # a full contraction gives a NumPy scalar, which cannot be written in place
        return Term(syntax.name(name), dtype, tuple(self.ranges[d] for d in out_dims), owned=bool(out_dims))

    def reduce_aligned(self, body: Body, kind: str, factors: list[SSAValue], out_dims, dtype: str) -> Term:
        n = len(self.ranges)
        terms = [body.term(v) for v in factors]
        e = terms[0] if terms else Term(syntax.expr(1), dtype)
        for t in terms[1:]:
            shape = tuple(np.broadcast_shapes(*(x.shape for x in (e, t) if x.shape is not None)))
            if e.owned and e.shape == shape:
                self.fe.statement(syntax.evaluate(syntax.call("np.multiply", e.expr, t.expr, out=e.expr)))
            else:
                name = self.fe.temp()
                self.fe.sized(name, e.dtype, shape)
                self.fe.statement(syntax.assign(name, syntax.binop(e.expr, "*", t.expr)))
                e = Term(syntax.name(name), e.dtype, shape, owned=True)
        shape = self.ranges if e.shape is None else e.shape
        if e.shape is None:
            e = Term(syntax.call("np.full", self.ranges, e.expr, dt(dtype)), dtype, self.ranges)
        lead = n - len(shape)  # loops dropped in front (broadcast)
        axes = [d - lead for d in self.reduction if d >= lead]
        missing = [d for d in self.reduction if self.ranges[d] > 1 and (d < lead or shape[d - lead] == 1)]
        kept = [d for d in range(lead, n) if d not in self.reduction]
        name = self.fe.temp()
        self.fe.statement(syntax.assign(name, reduce_expr(self.fe, kind, e.expr, shape, axes, dtype) if axes else e.expr))
        if missing and kind in ("sum", "prod"):
            count = prod(self.ranges[d] for d in missing)
            self.fe.statement(syntax.assign(name, syntax.binop(name, "*" if kind == "sum" else "**", count)))
        reduced_shape = tuple(shape[d - lead] for d in kept)
        full = tuple(self.ranges[d] for d in self.parallel)
        owned = bool(full)  # a rank-0 reduction is a NumPy scalar: never written in place
        if reduced_shape != full:
            self.fe.statement(syntax.assign(name, syntax.call("np.broadcast_to", name, full)))
            owned = False
        perm = [self.parallel.index(d) for d in out_dims]
        if perm != sorted(perm):
            self.fe.statement(syntax.assign(name, permutation_expr(syntax.name(name), perm)))
        self.fe.sized(name, dtype, full)  # at most this large: a broadcast, or the reduced array
        return Term(syntax.name(name), dtype, tuple(self.ranges[d] for d in out_dims), owned)


def _given(term: Term) -> Callable[[], Term]:
    """A block argument's term that is already known."""
    return lambda: term


def reduce_expr(fe: FunctionEmitter, kind: str, expr: ast.expr, shape: tuple[int, ...], axes: list[int], dtype: str) -> ast.expr:
    """`kind` over `axes` of an array of `shape`, in the order NumPy runs fastest.

    NumPy is slow at reducing several axes at once when the innermost is
    short (a pooling's window axes summed in one `np.sum`): the outer axes
    go first (whole contiguous rows added together), and an innermost float
    sum becomes a product with a ones vector (BLAS).
    """
    axes = sorted(axes)
    last = len(shape) - 1
    int_arg: dict[str, Any] = {"dtype": dt(dtype)} if kind in ("sum", "prod") and dtype.startswith(("int", "uint")) else {}
    if kind not in ("sum", "prod") and any(shape[a] == 0 for a in axes):
        # max/min over nothing: NumPy has no identity to give, linalg gives the init (combined after)
        int_arg["initial"] = literal_expr(identity_of(kind, dtype), dtype)

    def reduce(x: ast.expr, a: list[int]) -> ast.expr:
        return syntax.call(REDUCE[kind], x, axis=a[0] if len(a) == 1 else tuple(a), **int_arg)

    if axes[-1] != last or len(axes) == len(shape) or len(axes) == 1 and kind != "sum":
        return reduce(expr, axes)
    outer = reduce(expr, axes[:-1]) if axes[:-1] else expr
    if kind == "sum" and dtype.startswith("float") and len(shape) > len(axes):
        ones = fe.module.splat((shape[last],), 1.0, dtype, "ones", fe.current.origin)
        return syntax.binop(outer, "@", ones)
    return reduce(outer, [-1])


def structured_classes() -> list[type[Operation]]:
    """Every concrete structured op class xDSL defines."""
    found: list[type[Operation]] = []
    stack = list(LinalgStructuredOperation.__subclasses__())
    while stack:
        cls = stack.pop()
        stack.extend(cls.__subclasses__())
        if getattr(cls, "name", None) and not getattr(cls, "__abstractmethods__", None):
            found.append(cls)
    return found


def translate_structured(fe: FunctionEmitter, op: LinalgStructuredOperation) -> None:
    s = Structured(fe, op)
    body = s.body()
    yield_op = s.block.last_op
    if not isinstance(yield_op, YieldOp):
        raise op_error(op, "body does not end in linalg.yield")
    n_in = len(op.inputs)
    for index, yielded in enumerate(yield_op.operands):
        if not s.reduction:
            s.parallel_result(body, index, yielded)
            continue
        match = combiner(op, s.block.args[n_in + index], body, yielded)
        if match is None:
            raise op_error(op, "has a reduction body that is not `combine(f(inputs), out)` (cannot vectorise)")
        s.reduction_result(body, index, *match)


def translate_pooling(fe: FunctionEmitter, op: PoolingNchwMaxOp) -> None:
    """Max pooling: the max of the input over the window loops (xDSL's hidden body reads the window operand)."""
    s = Structured(fe, op)
    body = s.body()
    s.reduction_result(body, 0, "max", s.block.args[0])


translates(*structured_classes())(translate_structured)
translates(PoolingNchwMaxOp)(translate_pooling)


@translates(FillOp)
def translate_fill(fe: FunctionEmitter, op: FillOp) -> None:
    (result,) = op.results
    dtype = np_dtype(result.type)
    value = fe.expr(op.inputs[0])
    if _is_zero(value):  # calloc'd: a quarter of np.full's time (padding, accumulators)
        fe.define(result, syntax.call("np.zeros", tensor_shape(result.type), dt(dtype)))
        return
    fe.define(result, syntax.call("np.full", tensor_shape(result.type), value, dt(dtype)))


def _is_zero(value: ast.expr) -> bool:
    """A literal 0 or 0.0 (not -0.0, not False: np.zeros would not be the same array)."""
    return isinstance(value, ast.Constant) and type(value.value) in (int, float) and value.value == 0


@translates(TransposeOp)
def translate_transpose(fe: FunctionEmitter, op: TransposeOp) -> None:
    perm = list(op.permutation.get_values())
    fe.define(op.results[0], permutation_expr(fe.expr(op.inputs[0]), perm), owned=False)


@translates(BroadcastOp)
def translate_broadcast(fe: FunctionEmitter, op: BroadcastOp) -> None:
    """linalg.broadcast: `dimensions` are the result axes the input lacks."""
    added = set(op.dimensions.get_values())
    shape = tensor_shape(op.result[0].type)
    index = [None if a in added else slice(None) for a in range(len(shape))]
    x = fe.expr(op.input)
    expanded = syntax.index(x, index) if added else x
    fe.define(op.result[0], syntax.call("np.broadcast_to", expanded, shape), owned=False)


@translates(ReduceOp)
def translate_reduce(fe: FunctionEmitter, op: ReduceOp) -> None:
    """linalg.reduce: body `combine(in, acc)` over `dimensions`, seeded with `init`."""
    block = op.region.block
    yielded = yielded_value(op, block)
    body = Body(fe, op, block, {block.args[0]: lambda: fe.term(op.input)}, static_shape(op.input.type))
    match = combiner(op, block.args[1], body, yielded)
    if match is None or match[1] is not block.args[0]:
        raise op_error(op, "has a body that is not `combine(in, init)`")
    kind = match[0]
    result = op.result[0]
    dtype = np_dtype(result.type)
    axes = list(op.dimensions.get_values())
    shape = static_shape(result.type)
    name = fe.temp()
    fe.sized(name, dtype, shape)
    red = Term(syntax.name(name), dtype, shape, owned=bool(shape))
    fe.statement(syntax.assign(name, reduce_expr(fe, kind, fe.expr(op.input), tensor_shape(op.input.type), axes, dtype)))
    init = initial_value(op.init)
    other: ast.expr | None = None
    if isinstance(init, SSAValue):
        other = fe.expr(init)
    elif init is None:
        other = fe.expr(op.init)
    elif init != identity_of(kind, dtype):
        other = literal_expr(init, dtype)
    if other is not None:
        out = {"out": red.expr} if red.owned else {}
        fe.statement(syntax.assign(name, syntax.call(COMBINE[kind], red.expr, other, **out)))
    finish(fe, result, red, owned=red.owned)
