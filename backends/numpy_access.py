"""linalg indexing maps as NumPy views: step 1 (access) and 2 (alignment) of `numpy_linalg`.

A projected permutation is plain slicing; an affine-linear map with
non-negative coefficients (convolution and pooling windows) a strided view
(`_rt.affine_view`); `align` puts a view's axes in loop order with `None`
axes for the loop dimensions it lacks, so NumPy broadcasting is the
iteration space.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineMap

from cortex.backends.numpy_codegen import (
    Term,
    op_error,
    paren,
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
    if any(r is None for r in ranges):
        raise op_error(op, "has a loop whose extent no operand dimension gives")
    if any(r < 0 for r in ranges):
        raise op_error(op, "has a dynamic loop extent (the NumPy backend needs static shapes)")
    return tuple(ranges)


@dataclass(frozen=True)
class Access:
    """An operand as a view whose axis `a` runs over loop dimension `dims[a]`."""

    expr: str
    dims: tuple[int, ...]
    identity: bool = False  # the operand itself, axes already in loop order


def access(op: Operation, x: Term, m: AffineMap, ranges: tuple[int, ...]) -> Access:
    forms = [linear(e) for e in m.results]
    if any(f is None for f in forms) or m.num_symbols:
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
        index, dims = [], []
        for axis, (coefs, const) in enumerate(forms):
            if not coefs:
                index.append(str(const))
                continue
            d = next(iter(coefs))
            dims.append(d)
            index.append(":" if ranges[d] == shape[axis] else f":{ranges[d]}")
        while index and index[-1] == ":":
            index.pop()
        expr = f"{paren(x.expr)}[{', '.join(index)}]" if index else x.expr
        identity = not index and dims == list(range(len(ranges)))
        return Access(expr, tuple(dims), identity)
    used = sorted({d for coefs, _ in forms for d in coefs})
    offsets = tuple(k for _, k in forms)
    view_shape = tuple(ranges[d] for d in used)
    coefs = tuple(tuple(c.get(d, 0) for c, _ in forms) for d in used)
    return Access(f"_rt.affine_view({x.expr}, {offsets}, {view_shape}, {coefs})", tuple(used))


def align(acc: Access, ranges: tuple[int, ...]) -> tuple[str, tuple[int, ...]]:
    """The view transposed to loop order, with `None` axes for the loops it lacks.

    Leading missing loops are left to broadcasting, so the returned (actual)
    shape may have fewer axes than there are loops: axis a of an array of
    rank r runs over loop a + (len(ranges) - r).
    """
    order = sorted(range(len(acc.dims)), key=lambda a: acc.dims[a])
    expr = acc.expr
    if order != list(range(len(order))):
        expr = f"{paren(expr)}.T" if len(order) == 2 else f"{paren(expr)}.transpose({tuple(order)})"
    present = set(acc.dims)
    if len(present) < len(ranges):
        index = [":" if d in present else "None" for d in range(len(ranges))]
        while index and index[-1] == ":":
            index.pop()
        while index and index[0] == "None":  # broadcasting prepends missing leading axes
            index.pop(0)
        if index:
            expr = f"{paren(expr)}[{', '.join(index)}]"
    start = min(present, default=len(ranges))
    return expr, tuple(ranges[d] if d in present else 1 for d in range(start, len(ranges)))


def permutation_expr(expr: str, perm: list[int]) -> str:
    if perm == sorted(perm):
        return expr
    return f"{paren(expr)}.T" if len(perm) == 2 else f"{paren(expr)}.transpose({tuple(perm)})"
