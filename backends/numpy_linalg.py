"""linalg on tensors as whole-array NumPy: never a Python loop per element.

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

from collections.abc import Callable
from dataclasses import dataclass
from math import prod

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    FillOp,
    IndexOp,
    PoolingNchwMaxOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineBinaryOpKind, AffineConstantExpr, AffineDimExpr, AffineMap

from cortex.backends.numpy_arith import elementwise, in_place_capable, is_elementwise
from cortex.backends.numpy_codegen import (
    FunctionEmitter,
    Term,
    dt,
    literal,
    np_dtype,
    op_error,
    paren,
    static_shape,
    translates,
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


# ---------------------------------------------------------------- bodies


class Body:
    """Evaluates a linalg body on whole arrays: one line per body op, reusing dying temporaries."""

    def __init__(self, fe: FunctionEmitter, op: Operation, block: Block, args: dict[BlockArgument, Callable[[], Term]], ranges):
        self.fe, self.op, self.block, self.args, self.ranges = fe, op, block, args, ranges
        self.values: dict[SSAValue, Term] = {}
        self._depends: dict[SSAValue, frozenset] = {}

    def term(self, value: SSAValue) -> Term:
        if value in self.values:
            return self.values[value]
        if isinstance(value, BlockArgument) and value.owner is self.block:
            thunk = self.args.get(value)
            if thunk is None:
                raise op_error(self.op, "body reads a value the vectorised form cannot provide")
            term = thunk()
        elif isinstance(value.owner, Operation) and value.owner.parent_block() is self.block:
            term = self.evaluate(value.owner)
        else:  # defined outside the body: a scalar the whole loop shares
            term = self.fe.term(value)
            if term.is_array:
                raise op_error(self.op, "body captures a tensor from outside")
        self.values[value] = term
        return term

    def dies_at(self, value: SSAValue, op: Operation) -> bool:
        uses = list(value.uses)
        return len(uses) == 1 and uses[0].operation is op

    def evaluate(self, op: Operation) -> Term:
        result = op.results[0]
        dtype = np_dtype(result.type)
        if isinstance(op, IndexOp):
            d = op.dim.value.data
            shape = tuple(n if k == d else 1 for k, n in enumerate(self.ranges))
            return self.assign(f"np.arange({self.ranges[d]}).reshape({shape})", "int64", shape)
        if isinstance(op, arith.ConstantOp) and isinstance(op.value, (IntegerAttr, FloatAttr)):
            return Term(literal(op.value.value.data, dtype), dtype)
        if not is_elementwise(op):
            raise op_error(self.op, f"body op '{op.name}' has no whole-array NumPy form")
        args = [self.term(v) for v in op.operands]
        shapes = [a.shape for a in args if a.is_array]
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
            self.fe.line(elementwise(op, args, out))
            return Term(out, dtype, shape, owned=True)
        return self.assign(elementwise(op, args), dtype, shape)

    def assign(self, expr: str, dtype: str, shape) -> Term:
        name = self.fe.temp()
        self.fe.line(f"{name} = {expr}")
        return Term(name, dtype, shape, owned=shape is not None)

    def depends(self, value: SSAValue) -> frozenset:
        """The block arguments (and 'index' for linalg.index) a body value depends on."""
        memo = self._depends
        if value in memo:
            return memo[value]
        if isinstance(value, BlockArgument) and value.owner is self.block:
            deps = frozenset([value])
        elif isinstance(value.owner, Operation) and value.owner.parent_block() is self.block:
            op = value.owner
            deps = frozenset(["index"]) if isinstance(op, IndexOp) else frozenset()
            for v in op.operands:
                deps |= self.depends(v)
        else:
            deps = frozenset()
        memo[value] = deps
        return deps


def finish(fe: FunctionEmitter, value: SSAValue, term: Term, *, owned: bool) -> Term:
    """Bind `value` to `term`, naming the last temporary after the value when that is all it takes."""
    chunk_lines = fe.current.lines
    name = fe.name(value)
    last = chunk_lines[-1] if chunk_lines else ""
    if term.expr.startswith("_t") and last.startswith(f"{term.expr} = "):
        chunk_lines[-1] = f"{name} = {last[len(term.expr) + 3:]}"
    elif last.endswith(f"out={term.expr})") and " = " not in last.split("(")[0]:
        chunk_lines[-1] = f"{name} = {last}"
    else:
        chunk_lines.append(f"{name} = {term.expr}")
    return fe.defined(value, name, owned=owned)


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


def product_factors(value: SSAValue, body: Body) -> list[SSAValue]:
    owner = value.owner
    if isinstance(owner, (arith.MulfOp, arith.MuliOp)) and owner.parent_block() is body.block:
        return product_factors(owner.lhs, body) + product_factors(owner.rhs, body)
    return [value]


def _swap_last(expr: str, rank: int) -> str:
    return f"{paren(expr)}.T" if rank == 2 else f"np.swapaxes({expr}, -1, -2)"


def contraction(operands: list[tuple[str, tuple[int, ...]]], out_dims: tuple[int, ...], ranges) -> str:
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
                return permutation_expr(f"{paren(a)} @ {b}", perm)
            if (
                len(shared) == 1 and len(a_free) == 1 and len(b_free) == 1
                and list(da[:nb]) == batch and list(db[:nb]) == batch
            ):  # (batched) matrix product
                (k,) = shared
                lhs = a if da[-1] == k else _swap_last(a, len(da))
                rhs = b if db[-2] == k else _swap_last(b, len(db))
                return permutation_expr(f"{paren(lhs)} @ {paren(rhs)}", perm)
            if not batch:
                m, n, k = (prod(ranges[d] for d in dims) for dims in (a_free, b_free, shared))
                lhs = permutation_expr(a, [da.index(d) for d in a_free + shared])
                rhs = permutation_expr(b, [db.index(d) for d in shared + b_free])
                shape = tuple(ranges[d] for d in a_free + b_free)
                product = f"({paren(lhs)}.reshape({m}, {k}) @ {paren(rhs)}.reshape({k}, {n})).reshape({shape})"
                return permutation_expr(product, perm)
    subscripts = ",".join("".join(LETTERS[d] for d in dims) for _, dims in operands)
    spec = f"{subscripts}->{''.join(LETTERS[d] for d in out_dims)}"
    optimize = ", optimize=True" if len(operands) > 2 else ""
    return f"np.einsum({spec!r}, {', '.join(e for e, _ in operands)}{optimize})"


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
            finish(self.fe, result, Term(f"np.full({static_shape(result.type)}, {term.expr}, {dt(dtype)})", dtype), owned=True)
            return
        expr, owned = term.expr, term.owned
        if term.shape != self.ranges:
            expr, owned = f"np.broadcast_to({expr}, {self.ranges})", False
        if term.dtype != dtype:
            expr, owned = f"{paren(expr)}.astype({dt(dtype)})", True
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
            red = self.apply(red, COMBINE[kind], literal(init, dtype), dtype)
        finish(self.fe, result, red, owned=red.owned)

    def apply(self, red: Term, ufunc: str, other: str, dtype: str) -> Term:
        if red.owned and red.dtype == dtype:
            self.fe.line(f"{ufunc}({red.expr}, {other}, out={red.expr})")
            return red
        name = self.fe.temp()
        self.fe.line(f"{name} = {ufunc}({red.expr}, {other})")
        return Term(name, dtype, red.shape, owned=True)

    def contract(self, body: Body, factors: list[SSAValue], out_dims: tuple[int, ...], dtype: str) -> Term:
        operands = []
        for v in factors:
            (arg,) = body.depends(v)
            acc, term = self.access(arg.index)
            view = Term(acc.expr, term.dtype, tuple(self.ranges[d] for d in acc.dims))
            sub = Body(self.fe, self.op, self.block, {arg: lambda view=view: view}, self.ranges)
            operands.append((sub.term(v).expr, acc.dims))
        if not set(out_dims) <= {d for _, dims in operands for d in dims}:
            raise op_error(self.op, "contracts to an output dimension no operand has")
        name = self.fe.temp()
        self.fe.line(f"{name} = {contraction(operands, out_dims, self.ranges)}")
        # a full contraction gives a NumPy scalar, which cannot be written in place
        return Term(name, dtype, tuple(self.ranges[d] for d in out_dims), owned=bool(out_dims))

    def reduce_aligned(self, body: Body, kind: str, factors: list[SSAValue], out_dims, dtype: str) -> Term:
        n = len(self.ranges)
        terms = [body.term(v) for v in factors]
        e = terms[0] if terms else Term("1", dtype)
        for t in terms[1:]:
            shape = tuple(np.broadcast_shapes(*(x.shape for x in (e, t) if x.is_array)))
            if e.owned and e.shape == shape:
                self.fe.line(f"np.multiply({e.expr}, {t.expr}, out={e.expr})")
            else:
                name = self.fe.temp()
                self.fe.line(f"{name} = {paren(e.expr)} * {paren(t.expr)}")
                e = Term(name, e.dtype, shape, owned=True)
        if not e.is_array:
            e = Term(f"np.full({self.ranges}, {e.expr}, {dt(dtype)})", dtype, self.ranges)
        shape = e.shape
        lead = n - len(shape)  # loops dropped in front (broadcast)
        axes = [d - lead for d in self.reduction if d >= lead]
        missing = [d for d in self.reduction if self.ranges[d] > 1 and (d < lead or shape[d - lead] == 1)]
        kept = [d for d in range(lead, n) if d not in self.reduction]
        name = self.fe.temp()
        self.fe.line(f"{name} = {reduce_expr(self.fe, kind, e.expr, shape, axes, dtype) if axes else e.expr}")
        if missing and kind in ("sum", "prod"):
            count = prod(self.ranges[d] for d in missing)
            self.fe.line(f"{name} = {name} {'*' if kind == 'sum' else '**'} {count}")
        reduced_shape = tuple(shape[d - lead] for d in kept)
        full = tuple(self.ranges[d] for d in self.parallel)
        owned = bool(full)  # a rank-0 reduction is a NumPy scalar: never written in place
        if reduced_shape != full:
            self.fe.line(f"{name} = np.broadcast_to({name}, {full})")
            owned = False
        perm = [self.parallel.index(d) for d in out_dims]
        if perm != sorted(perm):
            self.fe.line(f"{name} = {permutation_expr(name, perm)}")
        return Term(name, dtype, tuple(self.ranges[d] for d in out_dims), owned)


def reduce_expr(fe: FunctionEmitter, kind: str, expr: str, shape: tuple[int, ...], axes: list[int], dtype: str) -> str:
    """`kind` over `axes` of an array of `shape`, in the order NumPy runs fastest.

    NumPy is slow at reducing several axes at once when the innermost is
    short (a 60x8x80x8 pooling takes 2 ms in one `np.sum`): the outer axes
    go first (whole contiguous rows added together), and an innermost float
    sum becomes a product with a ones vector (BLAS).
    """
    axes = sorted(axes)
    last = len(shape) - 1
    int_arg = f", dtype={dt(dtype)}" if kind in ("sum", "prod") and dtype.startswith(("int", "uint")) else ""

    def axis(a: list[int]) -> str:
        return str(a[0]) if len(a) == 1 else str(tuple(a))

    if axes[-1] != last or len(axes) == len(shape) or len(axes) == 1 and kind != "sum":
        return f"{REDUCE[kind]}({expr}, axis={axis(axes)}{int_arg})"
    outer = f"{REDUCE[kind]}({expr}, axis={axis(axes[:-1])}{int_arg})" if axes[:-1] else expr
    if kind == "sum" and dtype.startswith("float") and len(shape) > len(axes):
        ones = fe.module.splat((shape[last],), 1.0, dtype, "ones", fe.current.origin)
        return f"{paren(outer)} @ {ones}"
    return f"{REDUCE[kind]}({outer}, axis=-1{int_arg})"


def structured_classes() -> list[type[Operation]]:
    """Every concrete structured op class xDSL defines."""
    found, stack = [], list(LinalgStructuredOperation.__subclasses__())
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
    if value in ("0", "0.0"):  # calloc'd: a quarter of np.full's time (padding, accumulators)
        fe.define(result, f"np.zeros({static_shape(result.type)}, {dt(dtype)})")
        return
    fe.define(result, f"np.full({static_shape(result.type)}, {value}, {dt(dtype)})")


@translates(TransposeOp)
def translate_transpose(fe: FunctionEmitter, op: TransposeOp) -> None:
    perm = list(op.permutation.get_values())
    fe.define(op.results[0], permutation_expr(fe.expr(op.inputs[0]), perm), owned=False)


@translates(BroadcastOp)
def translate_broadcast(fe: FunctionEmitter, op: BroadcastOp) -> None:
    """linalg.broadcast: `dimensions` are the result axes the input lacks."""
    added = set(op.dimensions.get_values())
    shape = static_shape(op.result[0].type)
    index = ["None" if a in added else ":" for a in range(len(shape))]
    x = fe.expr(op.input)
    expanded = f"{paren(x)}[{', '.join(index)}]" if added else x
    fe.define(op.result[0], f"np.broadcast_to({expanded}, {shape})", owned=False)


@translates(ReduceOp)
def translate_reduce(fe: FunctionEmitter, op: ReduceOp) -> None:
    """linalg.reduce: body `combine(in, acc)` over `dimensions`, seeded with `init`."""
    block = op.region.block
    yielded = block.last_op.operands[0]
    body = Body(fe, op, block, {block.args[0]: lambda: fe.term(op.input)}, static_shape(op.input.type))
    match = combiner(op, block.args[1], body, yielded)
    if match is None or match[1] is not block.args[0]:
        raise op_error(op, "has a body that is not `combine(in, init)`")
    kind = match[0]
    result = op.result[0]
    dtype = np_dtype(result.type)
    axes = list(op.dimensions.get_values())
    shape = static_shape(result.type)
    red = Term(fe.temp(), dtype, shape, owned=bool(shape))
    fe.line(f"{red.expr} = {reduce_expr(fe, kind, fe.expr(op.input), static_shape(op.input.type), axes, dtype)}")
    init = initial_value(op.init)
    other = fe.expr(init) if isinstance(init, SSAValue) else fe.expr(op.init) if init is None else None
    if other is None and init != identity_of(kind, dtype):
        other = literal(init, dtype)
    if other is not None:
        out = f", out={red.expr}" if red.owned else ""
        fe.line(f"{red.expr} = {COMBINE[kind]}({red.expr}, {other}{out})")
    finish(fe, result, red, owned=red.owned)
