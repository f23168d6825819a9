"""Sums of products as contractions (step 4 of `linalg`): `@`, `np.tensordot`, `np.einsum`.

The product factors are read off the body; the operands stay un-aligned
views, so matmul and convolution reach BLAS.
"""

from __future__ import annotations

import ast
from math import prod

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from cortex.backends.numpy import syntax
from cortex.backends.numpy.access import LETTERS, permutation_expr
from cortex.backends.numpy.bodies import Body


def product_factors(value: SSAValue, body: Body) -> list[SSAValue]:
    owner = value.owner
    if isinstance(owner, (arith.MulfOp, arith.MuliOp)) and owner.parent_block() is body.block:
        return product_factors(owner.lhs, body) + product_factors(owner.rhs, body)
    return [value]


def _swap_last(expr: ast.expr, rank: int) -> ast.expr:
    return syntax.attr(expr, "T") if rank == 2 else syntax.call("np.swapaxes", expr, -1, -2)


def contraction(operands: list[tuple[ast.expr, tuple[int, ...]]], out_dims: tuple[int, ...], ranges) -> ast.expr:
    """Σ of the product of the operands over the dims missing from `out_dims`, as BLAS-friendly NumPy.

    Two operands become one `@` where they can: (batched) matrix products,
    matrix-vector products, and any batch-free contraction after transposes
    and reshapes (views for contiguous data). Anything else is `np.einsum`.
    """
    if len(operands) == 2:
        (a, da), (b, db) = operands
        shared = [d for d in da if d in db and d not in out_dims]
        batch = [d for d in da if d in db and d in out_dims]
        a_free = [d for d in da if d not in db]
        b_free = [d for d in db if d not in da]
        distinct = len(set(da)) == len(da) and len(set(db)) == len(db)
        if distinct and shared and set(batch + a_free + b_free) == set(out_dims):
            nb = len(batch)
            natural = batch + a_free + b_free
            perm = [natural.index(d) for d in out_dims]
            if len(shared) == 1 and not batch and not b_free and da[-1] == shared[0]:  # (..., k) @ (k,)
                return permutation_expr(syntax.binop(a, "@", b), perm)
            if (
                len(shared) == 1 and len(a_free) == 1 and len(b_free) == 1
                and list(da[:nb]) == batch and list(db[:nb]) == batch
            ):  # (batched) matrix product
                (k,) = shared
                lhs = a if da[-1] == k else _swap_last(a, len(da))
                rhs = b if db[-2] == k else _swap_last(b, len(db))
                return permutation_expr(syntax.binop(lhs, "@", rhs), perm)
            if not batch:
                m, n, k = (prod(ranges[d] for d in dims) for dims in (a_free, b_free, shared))
                lhs = permutation_expr(a, [da.index(d) for d in a_free + shared])
                rhs = permutation_expr(b, [db.index(d) for d in shared + b_free])
                shape = tuple(ranges[d] for d in a_free + b_free)
                matrices = syntax.binop(syntax.method(lhs, "reshape", m, k), "@", syntax.method(rhs, "reshape", k, n))
                product = syntax.method(matrices, "reshape", shape)
                return permutation_expr(product, perm)
    subscripts = ",".join("".join(LETTERS[d] for d in dims) for _, dims in operands)
    spec = f"{subscripts}->{''.join(LETTERS[d] for d in out_dims)}"
    optimize = {"optimize": True} if len(operands) > 2 else {}
    return syntax.call("np.einsum", syntax.string(spec), *(e for e, _ in operands), **optimize)
