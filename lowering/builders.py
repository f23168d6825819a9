"""Building blocks of the lowering: constants, linalg ops on tensors, scalar bodies.

A pattern lowers one cortex op through a `LinalgBuilder`. Every op it
creates goes through `LinalgBuilder.add`, which inserts it before the op
being replaced and stamps it with `cortex.origin` (see `lowering/__init__.py`),
so the NumPy backend can tell which cortex op a statement came from. Shapes
are static here: the patterns check that before building anything.

The scalar helpers (`addf`, `mulf`, `const`, ...) build the bodies of
`linalg.generic` and `linalg.reduce`; they are called inside an
`ImplicitBuilder`, so each one appends its op to the body block.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, math, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    f32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    Conv2DNchwFchwOp,
    FillOp,
    GenericOp,
    MatmulOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from cortex.dialects import abi
from cortex.semantics.values import numpy_to_dense

"""Discardable attribute naming the cortex op a lowered op came from."""

OpT = TypeVar("OpT", bound=Operation)
Body = Callable[..., SSAValue | Sequence[SSAValue]]

PARALLEL = IteratorTypeAttr.parallel()
REDUCTION = IteratorTypeAttr.reduction()


def origin_of(op: Operation) -> str:
    """The `cortex.origin` of what `op` lowers to: its own `cortex.origin` when a decomposition gave it
    one (the stage it came from), else its result's name, else its op name."""
    given = op.attributes.get(abi.ORIGIN)
    if isinstance(given, StringAttr):
        return given.data
    for result in op.results:
        if result.name_hint:
            return result.name_hint
    return op.name


# ---------------------------------------------------------------- types and constants

def dense_attr(array: np.ndarray, element: Attribute = f32) -> DenseIntOrFPElementsAttr:
    """A `dense<...>` attribute holding `array` converted to `element` (bit-exact; the dtype from
    `cortex.semantics.values`, the one home of MLIR element type → NumPy dtype)."""
    array = np.asarray(array)
    dense = numpy_to_dense(array, TensorType(element, list(array.shape)))
    if dense is None:
        raise ValueError(f"no dense constant for element type {element}")
    return dense


def tensor_type(shape: Sequence[int], element: Attribute = f32) -> TensorType:
    return TensorType(element, list(shape))


def shape_of(value: SSAValue) -> tuple[int, ...]:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def element_of(value: SSAValue) -> Attribute:
    t = value.type
    return t.element_type if isinstance(t, TensorType) else t


def affine_map(num_dims: int, results: Sequence[int | AffineExpr]) -> AffineMapAttr:
    """A map over `num_dims` loops; an int result `k` means the loop dimension `d{k}`."""
    exprs = tuple(AffineDimExpr(r) if isinstance(r, int) else r for r in results)
    return AffineMapAttr(AffineMap(num_dims, 0, exprs))


def broadcast_map(operand_shape: Sequence[int], out_shape: Sequence[int]) -> AffineMapAttr:
    """NumPy broadcasting as an indexing map: trailing dims align, size-1 dims read index 0."""
    rank, offset = len(out_shape), len(out_shape) - len(operand_shape)
    results: list[int | AffineExpr] = []
    for i, size in enumerate(operand_shape):
        d = offset + i
        results.append(AffineConstantExpr(0) if size == 1 and out_shape[d] != 1 else d)
    return affine_map(rank, results)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


# ---------------------------------------------------------------- scalar bodies


def constant_op(value: float, element: Attribute = f32) -> arith.ConstantOp:
    """A scalar `arith.constant` of an integer or float type."""
    if isinstance(element, IntegerType):
        return arith.ConstantOp(IntegerAttr(int(value), element))
    if isinstance(element, AnyFloat):
        return arith.ConstantOp(FloatAttr(float(value), element))
    raise TypeError(f"no scalar constant of type {element}")


def const(value: float, element: Attribute = f32) -> SSAValue:
    return constant_op(value, element).result


def addf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.AddfOp(a, b).result


def subf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.SubfOp(a, b).result


def mulf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.MulfOp(a, b).result


def divf(a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.DivfOp(a, b).result


def maxf(a: SSAValue, b: SSAValue) -> SSAValue:
    """IEEE maximum (NaN-propagating), as np.maximum."""
    return arith.MaximumfOp(a, b).result


def minf(a: SSAValue, b: SSAValue) -> SSAValue:
    """IEEE minimum (NaN-propagating), as np.minimum."""
    return arith.MinimumfOp(a, b).result


def floor(a: SSAValue) -> SSAValue:
    return math.FloorOp(a).result


def negf(a: SSAValue) -> SSAValue:
    return arith.NegfOp(a).result


def cmpf(a: SSAValue, b: SSAValue, predicate: str) -> SSAValue:
    return arith.CmpfOp(a, b, predicate).result


def select(cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
    return arith.SelectOp(cond, a, b).result


def exp(a: SSAValue) -> SSAValue:
    return math.ExpOp(a).result


def log(a: SSAValue) -> SSAValue:
    return math.LogOp(a).result


def sqrt(a: SSAValue) -> SSAValue:
    return math.SqrtOp(a).result


def absf(a: SSAValue) -> SSAValue:
    return math.AbsFOp(a).result


def tanh(a: SSAValue) -> SSAValue:
    return math.TanhOp(a).result


def erf(a: SSAValue) -> SSAValue:
    return math.ErfOp(a).result


def powf(a: SSAValue, b: SSAValue) -> SSAValue:
    return math.PowFOp(a, b).result


def uitofp(a: SSAValue, element: AnyFloat = f32) -> SSAValue:
    return arith.UIToFPOp(a, element).result


REDUCE_COMBINERS: dict[str, tuple[Callable[[SSAValue, SSAValue], SSAValue], float]] = {
    "add": (addf, 0.0),
    "max": (maxf, -pymath.inf),
}
"""Reduction kind → (combiner, identity)."""


# ---------------------------------------------------------------- the builder


def _region(arg_types: Sequence[Attribute], body: Body) -> Region:
    block = Block(arg_types=arg_types)
    with ImplicitBuilder(block):
        yielded = body(*block.args)
        YieldOp(*([yielded] if isinstance(yielded, SSAValue) else yielded))
    return Region(block)


class LinalgBuilder:
    """Inserts tensor-level ops before one cortex op, each tagged with its origin."""

    def __init__(self, rewriter: PatternRewriter, source: Operation):
        self.rewriter = rewriter
        self.origin = StringAttr(origin_of(source))

    def add(self, op: OpT) -> OpT:
        op.attributes[abi.ORIGIN] = self.origin
        self.rewriter.insert(op)
        return op

    # -- values

    def constant(self, array: np.ndarray, element: Attribute = f32) -> SSAValue:
        """A tensor constant (`arith.constant dense<...>`), computed at compile time."""
        return self.add(arith.ConstantOp(dense_attr(array, element))).result

    def constant_attr(self, value: DenseIntOrFPElementsAttr) -> SSAValue:
        return self.add(arith.ConstantOp(value)).result

    def scalar(self, value: float, element: Attribute = f32) -> SSAValue:
        return self.add(constant_op(value, element)).result

    def empty(self, shape: Sequence[int], element: Attribute = f32) -> SSAValue:
        return self.add(tensor.EmptyOp([], tensor_type(shape, element))).tensor

    def full(self, shape: Sequence[int], value: float | SSAValue, element: Attribute = f32) -> SSAValue:
        """`linalg.fill` of a fresh tensor with a scalar."""
        if not isinstance(value, SSAValue):
            value = self.scalar(value, element)
        return self.add(FillOp([value], [self.empty(shape, element)])).res[0]

    # -- structured ops

    def generic(
        self,
        inputs: Sequence[SSAValue],
        init: SSAValue,
        maps: Sequence[AffineMapAttr],
        iterators: Sequence[IteratorTypeAttr],
        body: Body,
    ) -> SSAValue:
        """`linalg.generic` with one tensor output; `body(*ins, out)` returns the yielded scalar."""
        arg_types = [element_of(v) for v in (*inputs, init)]
        op = GenericOp(
            inputs=list(inputs),
            outputs=[init],
            body=_region(arg_types, body),
            indexing_maps=list(maps),
            iterator_types=list(iterators),
            result_types=[init.type],
        )
        return self.add(op).res[0]

    def elementwise(
        self,
        fn: Body,
        *operands: SSAValue,
        element: Attribute | None = None,
        shape: Sequence[int] | None = None,
    ) -> SSAValue:
        """fn applied elementwise, with NumPy broadcasting; scalar (non-tensor) operands broadcast too."""
        tensors = [v for v in operands if isinstance(v.type, TensorType)]
        out_shape = tuple(shape) if shape is not None else broadcast_shapes(*(shape_of(v) for v in tensors))
        if element is None:
            element = element_of(tensors[0] if tensors else operands[0])
        maps = [
            broadcast_map(shape_of(v), out_shape) if isinstance(v.type, TensorType) else affine_map(len(out_shape), [])
            for v in operands
        ]
        maps.append(affine_map(len(out_shape), range(len(out_shape))))
        init = self.empty(out_shape, element)
        return self.generic(operands, init, maps, [PARALLEL] * len(out_shape), lambda *args: fn(*args[:-1]))

    def matmul(self, a: SSAValue, b: SSAValue, init: SSAValue | None = None) -> SSAValue:
        """2-D `linalg.matmul`, accumulating into `init` (zeros by default)."""
        (m, _), (_, n) = shape_of(a), shape_of(b)
        if init is None:
            init = self.full((m, n), 0.0, element_of(a))
        return self.add(MatmulOp([a, b], [init])).res[0]

    def batch_matmul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """B×M×K · B×K×N as `linalg.generic` (xDSL has no linalg.batch_matmul op)."""
        (batch, m, _), (_, _, n) = shape_of(a), shape_of(b)
        init = self.full((batch, m, n), 0.0, element_of(a))
        maps = [affine_map(4, [0, 1, 3]), affine_map(4, [0, 3, 2]), affine_map(4, [0, 1, 2])]
        iterators = [PARALLEL, PARALLEL, PARALLEL, REDUCTION]
        return self.generic([a, b], init, maps, iterators, lambda x, y, acc: addf(acc, mulf(x, y)))

    def matmul_chain(self, *factors: SSAValue) -> SSAValue:
        """The product of several 2-D tensors, left to right."""
        result = factors[0]
        for factor in factors[1:]:
            result = self.matmul(result, factor)
        return result

    def reduce(self, x: SSAValue, dims: Sequence[int], kind: str = "add") -> SSAValue:
        """`linalg.reduce` of `x` over `dims` (dropped from the result)."""
        combine, identity = REDUCE_COMBINERS[kind]
        element = element_of(x)
        shape = [d for i, d in enumerate(shape_of(x)) if i not in dims]
        init = self.full(shape, identity, element)
        region = _region([element, element], lambda value, acc: combine(value, acc))
        op = ReduceOp(x, init, DenseArrayBase.from_list(i64, sorted(dims)), region)
        return self.add(op).result[0]

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        shape = shape_of(x)
        init = self.empty([shape[p] for p in perm], element_of(x))
        return self.add(TransposeOp(x, init, DenseArrayBase.from_list(i64, list(perm)))).res[0]

    def broadcast(self, x: SSAValue, shape: Sequence[int], added_dims: Sequence[int]) -> SSAValue:
        """`linalg.broadcast`: `x` copied along the new dimensions `added_dims` of `shape`."""
        init = self.empty(shape, element_of(x))
        return self.add(BroadcastOp(x, init, DenseArrayBase.from_list(i64, list(added_dims)))).result[0]

    def conv_2d_nchw_fchw(
        self, x: SSAValue, weight: SSAValue, init: SSAValue, strides: Sequence[int], dilations: Sequence[int]
    ) -> SSAValue:
        op = Conv2DNchwFchwOp([x, weight], [init], [init.type], strides=i64_vector(strides), dilations=i64_vector(dilations))
        return self.add(op).res[0]

    def pooling_nchw(
        self,
        kind: str,
        x: SSAValue,
        kernel: Sequence[int],
        init: SSAValue,
        strides: Sequence[int],
        dilations: Sequence[int] = (1, 1),
    ) -> SSAValue:
        """Window sums or maxima, as upstream's linalg.pooling_nchw_sum / _max, written as `linalg.generic`.

        xDSL 0.74 has no pooling_nchw_sum, and its pooling_nchw_max builds the
        body max(input, window) instead of max(input, out); the generic form
        states the body itself.
        """
        combine, _ = REDUCE_COMBINERS[kind]
        window = self.empty(kernel, element_of(x))
        n, c, oh, ow, kh, kw = (AffineDimExpr(i) for i in range(6))
        sh, sw = strides
        dh, dw = dilations
        maps = [
            affine_map(6, [n, c, oh * sh + kh * dh, ow * sw + kw * dw]),
            affine_map(6, [kh, kw]),
            affine_map(6, [n, c, oh, ow]),
        ]
        iterators = [PARALLEL] * 4 + [REDUCTION] * 2
        return self.generic([x, window], init, maps, iterators, lambda value, _w, acc: combine(value, acc))

    # -- shapes

    def expand(self, x: SSAValue, groups: Sequence[Sequence[int]], shape: Sequence[int]) -> SSAValue:
        op = tensor.ExpandShapeOp(x, [], reassociation(groups), list(shape), tensor_type(shape, element_of(x)))
        return self.add(op).result

    def collapse(self, x: SSAValue, groups: Sequence[Sequence[int]], shape: Sequence[int]) -> SSAValue:
        op = tensor.CollapseShapeOp(
            operands=[x],
            result_types=[tensor_type(shape, element_of(x))],
            properties={"reassociation": reassociation(groups)},
        )
        return self.add(op).result

    def reshape(self, x: SSAValue, shape: Sequence[int]) -> SSAValue:
        """Row-major reshape: one collapse or expand when the shapes nest, else through 1-D."""
        source = shape_of(x)
        shape = tuple(shape)
        if source == shape:
            return x
        if not source:  # xDSL's expand_shape rejects a rank-0 source; a broadcast says the same
            return self.broadcast(x, shape, range(len(shape)))
        if len(shape) < len(source) and (groups := nesting(shape, source)) is not None:
            return self.collapse(x, groups, shape)
        if len(shape) > len(source) and (groups := nesting(source, shape)) is not None:
            return self.expand(x, groups, shape)
        flat = (pymath.prod(source),)
        if len(source) != 1:
            x = self.collapse(x, [list(range(len(source)))], flat)
        if len(shape) == 1:
            return x
        return self.expand(x, [list(range(len(shape)))], shape)

    def pad(self, x: SSAValue, low: Sequence[int], high: Sequence[int], value: float) -> SSAValue:
        """`x` inside a tensor filled with `value` (a constant pad via `tensor.insert_slice`)."""
        if not any(low) and not any(high):
            return x
        shape = shape_of(x)
        padded = [s + lo + hi for s, lo, hi in zip(shape, low, high)]
        dest = self.full(padded, value, element_of(x))
        return self.add(tensor.InsertSliceOp.from_static_parameters(x, dest, list(low), list(shape))).result

    def block_sum(self, x: SSAValue, bh: int, bw: int) -> SSAValue:
        """Sums over the bh×bw cells of a 2-D tensor: expand to (H/bh)×bh×(W/bw)×bw, reduce dims 1 and 3."""
        h, w = shape_of(x)
        cells = self.expand(x, [[0, 1], [2, 3]], (h // bh, bh, w // bw, bw))
        return self.reduce(cells, [1, 3], "add")

    def scale(self, x: SSAValue, factor: float) -> SSAValue:
        """x · factor, elementwise."""
        return self.elementwise(lambda v: mulf(v, const(factor, element_of(x))), x)


def i64_vector(values: Sequence[int]) -> DenseIntOrFPElementsAttr[IntegerType | IndexType]:
    """`dense<[...]> : tensor<Nxi64>`, the form linalg's conv/pooling strides take."""
    return DenseIntOrFPElementsAttr.from_list(TensorType(i64, [len(values)]), list(values))


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr[IntegerType | IndexType]]]:
    return ArrayAttr([ArrayAttr([IntegerAttr[IntegerType | IndexType](i, i64) for i in group]) for group in groups])


def nesting(coarse: Sequence[int], fine: Sequence[int]) -> list[list[int]] | None:
    """Groups of consecutive `fine` dims whose products are the `coarse` dims, if there are such.

    The reassociation of a collapse (fine → coarse) or expand (coarse → fine);
    trailing size-1 dims join the last group, a rank-0 `coarse` takes no group.
    """
    if not coarse:
        return [] if all(d == 1 for d in fine) else None
    groups: list[list[int]] = []
    i = 0
    for size in coarse:
        if i >= len(fine):
            return None
        group, product = [i], fine[i]
        i += 1
        while product < size and i < len(fine):
            group.append(i)
            product *= fine[i]
            i += 1
        if product != size:
            return None
        groups.append(group)
    while i < len(fine) and fine[i] == 1:
        groups[-1].append(i)
        i += 1
    return groups if i == len(fine) else None


__all__ = [
    "PARALLEL",
    "REDUCTION",
    "LinalgBuilder",
    "affine_map",
    "broadcast_map",
    "dense_attr",
    "origin_of",
]
