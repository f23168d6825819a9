"""linalg indexing maps as NumPy views: step 1 (access) and 2 (alignment) of `linalg`.

A projected permutation is plain slicing; an affine-linear map with
non-negative coefficients (convolution and pooling windows) a strided view
(`_rt.affine_view`); `align` puts a view's axes in loop order with `None`
axes for the loop dimensions it lacks, so NumPy broadcasting is the
iteration space.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineMap

from cortex.backends.numpy import syntax
from cortex.backends.numpy.codegen import (
    Term,
    op_error,
    static_shape,
)

LETTERS = "ijklmnopqrstuvwxyzabcdefgh"

# ---------------------------------------------------------------- indexing maps


def linear(expr) -> tuple[dict[int, int], int] | None:
    """An affine expression as ({loop dim: coefficient}, constant), or None if not linear."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}, 0
    if isinstance(expr, AffineConstantExpr):
        return {}, expr.value
    if isinstance(expr, AffineBinaryOpExpr):
        lhs, rhs = linear(expr.lhs), linear(expr.rhs)
        if lhs is None or rhs is None:
            return None
        if expr.kind == AffineBinaryOpKind.Add:
            coefs = dict(lhs[0])
            for d, c in rhs[0].items():
                coefs[d] = coefs.get(d, 0) + c
            return {d: c for d, c in coefs.items() if c}, lhs[1] + rhs[1]
        if expr.kind == AffineBinaryOpKind.Mul:
            if not lhs[0]:
                lhs, rhs = rhs, lhs
            if not rhs[0]:
                return {d: c * rhs[1] for d, c in lhs[0].items() if c * rhs[1]}, lhs[1] * rhs[1]
    return None


def loop_ranges(op: Operation, maps: list[AffineMap], operands: list[SSAValue]) -> tuple[int, ...]:
    """Each loop's extent, read from an operand dimension indexed by that loop alone."""
    ranges: list[int | None] = [None] * maps[0].num_dims
    for value, m in zip(operands, maps):
        shape = static_shape(value.type) or ()
        for axis, e in enumerate(m.results):
            if isinstance(e, AffineDimExpr) and ranges[e.position] is None:
                ranges[e.position] = shape[axis]
    extents = tuple(r for r in ranges if r is not None)
    if len(extents) < len(ranges):
        raise op_error(op, "has a loop whose extent no operand dimension gives")
    if any(r < 0 for r in extents):
        raise op_error(op, "has a dynamic loop extent (the NumPy backend needs static shapes)")
    return extents


@dataclass(frozen=True)
class Access:
    """An operand as a view whose axis `a` runs over loop dimension `dims[a]`."""

    expr: ast.expr
    dims: tuple[int, ...]
    identity: bool = False  # the operand itself, axes already in loop order


def access(op: Operation, x: Term, m: AffineMap, ranges: tuple[int, ...]) -> Access:
    maybe_forms = [linear(e) for e in m.results]
    forms = [f for f in maybe_forms if f is not None]
    if len(forms) < len(maybe_forms) or m.num_symbols:
        raise op_error(op, f"indexing map {m} is not affine-linear in the loop indices")
    shape = x.shape or ()
    for axis, (coefs, const) in enumerate(forms):
        if any(c < 0 for c in coefs.values()):
            raise op_error(op, f"indexing map {m} has a negative coefficient")
        top = const + sum(c * (ranges[d] - 1) for d, c in coefs.items())
        if const < 0 or top >= shape[axis]:
            raise op_error(op, f"indexing map {m} reads outside operand dimension {axis} (size {shape[axis]})")
    single = [next(iter(c)) for c, k in forms if len(c) == 1 and next(iter(c.values())) == 1 and k == 0]
    simple = all(not c or (len(c) == 1 and next(iter(c.values())) == 1 and k == 0) for c, k in forms)
    if simple and len(set(single)) == len(single):
        index: list[int | slice] = []
        dims: list[int] = []
        for axis, (coefs, const) in enumerate(forms):
            if not coefs:
                index.append(const)
                continue
            d = next(iter(coefs))
            dims.append(d)
            index.append(slice(None) if ranges[d] == shape[axis] else slice(None, ranges[d]))
        while index and index[-1] == slice(None):
            index.pop()
        expr = syntax.index(x.expr, index) if index else x.expr
        identity = not index and dims == list(range(len(ranges)))
        return Access(expr, tuple(dims), identity)
    used = sorted({d for coefs, _ in forms for d in coefs})
    offsets = tuple(k for _, k in forms)
    view_shape = tuple(ranges[d] for d in used)
    columns = tuple(tuple(c.get(d, 0) for c, _ in forms) for d in used)
    return Access(syntax.call("_rt.affine_view", x.expr, offsets, view_shape, columns), tuple(used))


def align(acc: Access, ranges: tuple[int, ...]) -> tuple[ast.expr, tuple[int, ...]]:
    """The view transposed to loop order, with `None` axes for the loops it lacks.

    Leading missing loops are left to broadcasting, so the returned (actual)
    shape may have fewer axes than there are loops: axis a of an array of
    rank r runs over loop a + (len(ranges) - r).
    """
    order = sorted(range(len(acc.dims)), key=lambda a: acc.dims[a])
    expr = permutation_expr(acc.expr, order)
    present = set(acc.dims)
    if len(present) < len(ranges):
        index = [slice(None) if d in present else None for d in range(len(ranges))]
        while index and index[-1] == slice(None):
            index.pop()
        while index and index[0] is None:  # broadcasting prepends missing leading axes
            index.pop(0)
        if index:
            expr = syntax.index(expr, index)
    start = min(present, default=len(ranges))
    return expr, tuple(ranges[d] if d in present else 1 for d in range(start, len(ranges)))


def permutation_expr(expr: ast.expr, perm: list[int]) -> ast.expr:
    """`expr` with its axes in the order `perm` (`.T` for two)."""
    if perm == sorted(perm):
        return expr
    return syntax.attr(expr, "T") if len(perm) == 2 else syntax.method(expr, "transpose", tuple(perm))
