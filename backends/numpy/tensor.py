"""tensor dialect ops as NumPy indexing, reshapes and copies.

Tensors are values: a slice or reshape may share memory with its source
(a view, so not owned), and an op that "modifies" a tensor (insert,
insert_slice) copies it first unless the source dies at that op and is a
temporary this code owns, in which case it is updated in place.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from cortex.backends.numpy import syntax
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

Size = int | ast.expr  # static, or the expression of a dynamic size


def _sizes(fe: FunctionEmitter, static: tuple[int, ...], dynamic: Sequence[SSAValue]) -> list[Size]:
    """Static sizes with each DYNAMIC_INDEX entry taken, in order, from the dynamic operands."""
    dynamic = list(dynamic)
    return [fe.expr(dynamic.pop(0)) if s == DYNAMIC_INDEX else s for s in static]


def _shape_expr(fe: FunctionEmitter, value: SSAValue, dynamic: Sequence[SSAValue] = ()) -> ast.Tuple:
    shape = tensor_shape(value.type)
    return syntax.tuple_(*(s if s >= 0 else fe.expr(d) for s, d in zip(shape, _dynamic_iter(shape, dynamic))))


def _dynamic_iter(shape, dynamic):
    dynamic = list(dynamic)
    for s in shape:
        yield dynamic.pop(0) if s < 0 else None


def _dropped(sizes: list[Size], result_shape: tuple[int, ...]) -> set[int]:
    """The unit dimensions a rank-reducing slice drops (matched left to right, as MLIR does)."""
    dropped, j = set(), 0
    for i, n in enumerate(sizes):
        if j < len(result_shape) and (result_shape[j] < 0 or result_shape[j] == n):
            j += 1
        elif n == 1:
            dropped.add(i)
        else:
            return set()
    return dropped if j == len(result_shape) else set()


def _slices(fe: FunctionEmitter, op, reduced_shape: tuple[int, ...]) -> list[ast.expr]:
    """The NumPy index of an extract/insert_slice (unit dims of a rank-reducing one as integers)."""
    offsets = _sizes(fe, op.static_offsets.get_values(), op.offsets)
    sizes = _sizes(fe, op.static_sizes.get_values(), op.sizes)
    strides = _sizes(fe, op.static_strides.get_values(), op.strides)
    dropped = _dropped(sizes, reduced_shape) if len(reduced_shape) < len(sizes) else set()
    parts: list[ast.expr] = []
    for i, (o, n, s) in enumerate(zip(offsets, sizes, strides)):
        if i in dropped:
            parts.append(syntax.expr(o))
            continue
        stop: Size
        if isinstance(o, int) and isinstance(n, int) and isinstance(s, int):
            stop = o + (n - 1) * s + 1
        else:
            stop = syntax.binop(syntax.binop(o, "+", syntax.binop(syntax.binop(n, "-", 1), "*", s)), "+", 1)
        parts.append(syntax.slice_(None if o == 0 else o, stop, None if s == 1 else s))
    return parts


def _update(fe: FunctionEmitter, op: Operation, dest: SSAValue, index: list[ast.expr], value: ast.expr) -> None:
    """`result = dest` (in place, when dest dies here and is ours) or a copy of it, then `result[index] = value`."""
    name = fe.name(op.results[0])
    source = fe.expr(dest)
    fe.statement(syntax.assign(name, source if fe.reusable(dest, op) else syntax.method(source, "copy")))
    fe.statement(syntax.assign(syntax.index(name, index), value))
    fe.defined(op.results[0], name)


@translates(tensor.EmptyOp)
def translate_empty(fe: FunctionEmitter, op: tensor.EmptyOp) -> None:
    result = op.tensor
    fe.define(result, syntax.call("np.empty", _shape_expr(fe, result, op.dynamic_sizes), dt(np_dtype(result.type))))


@translates(tensor.SplatOp)
def translate_splat(fe: FunctionEmitter, op: tensor.SplatOp) -> None:
    result = op.result
    shape = _shape_expr(fe, result, op.dynamicSizes)
    fe.define(result, syntax.call("np.full", shape, fe.expr(op.input), dt(np_dtype(result.type))))


@translates(tensor.ExtractOp)
def translate_extract(fe: FunctionEmitter, op: tensor.ExtractOp) -> None:
    index = [fe.expr(i) for i in op.indices]
    fe.define(op.result, syntax.index(fe.expr(op.tensor), index), owned=False)


@translates(tensor.InsertOp)
def translate_insert(fe: FunctionEmitter, op: tensor.InsertOp) -> None:
    index = [fe.expr(i) for i in op.indices]
    _update(fe, op, op.dest, index, fe.expr(op.scalar))


@translates(tensor.ExtractSliceOp)
def translate_extract_slice(fe: FunctionEmitter, op: tensor.ExtractSliceOp) -> None:
    index = _slices(fe, op, tensor_shape(op.result.type))
    fe.define(op.result, syntax.index(fe.expr(op.source), index), owned=False)


@translates(tensor.InsertSliceOp)
def translate_insert_slice(fe: FunctionEmitter, op: tensor.InsertSliceOp) -> None:
    index = _slices(fe, op, tensor_shape(op.source.type))
    _update(fe, op, op.dest, index, fe.expr(op.source))


@translates(tensor.CollapseShapeOp, tensor.ExpandShapeOp)
def translate_reshape_static(fe: FunctionEmitter, op: tensor.CollapseShapeOp | tensor.ExpandShapeOp) -> None:
    result = op.result
    source = op.src
    if any(s < 0 for s in tensor_shape(result.type)):
        raise op_error(op, "with a dynamic result shape has no NumPy translation")
    # A reshape of a fresh array read nowhere else is as fresh (a relu after a conv can run in place).
    owned = fe.reusable(source, op) is not None
    fe.define(result, syntax.method(fe.expr(source), "reshape", _shape_expr(fe, result)), owned=owned)


@translates(tensor.ReshapeOp)
def translate_reshape(fe: FunctionEmitter, op: tensor.ReshapeOp) -> None:
    shape = tensor_shape(op.result.type)
    target = _shape_expr(fe, op.result) if all(s >= 0 for s in shape) else syntax.call("tuple", fe.expr(op.shape))
    fe.define(op.result, syntax.method(fe.expr(op.source), "reshape", target), owned=False)


@translates(tensor.CastOp)
def translate_cast(fe: FunctionEmitter, op: tensor.CastOp) -> None:
    """A cast only changes what the type system knows: the same array."""
    term = fe.term(op.source)
    fe.bind(op.dest, Term(term.expr, term.dtype, static_shape(op.dest.type), owned=False))


@translates(tensor.DimOp)
def translate_dim(fe: FunctionEmitter, op: tensor.DimOp) -> None:
    fe.define(op.result, syntax.index(syntax.attr(fe.expr(op.source), "shape"), [fe.expr(op.index)]), owned=False)


@translates(tensor.FromElementsOp)
def translate_from_elements(fe: FunctionEmitter, op: tensor.FromElementsOp) -> None:
    elements = syntax.list_(*(fe.expr(e) for e in op.elements))
    result = op.result
    array = syntax.call("np.array", elements, dt(np_dtype(result.type)))
    fe.define(result, syntax.method(array, "reshape", _shape_expr(fe, result)))


@translates(tensor.ConcatOp)
def translate_concat(fe: FunctionEmitter, op: tensor.ConcatOp) -> None:
    inputs = syntax.list_(*(fe.expr(v) for v in op.inputs))
    fe.define(op.result, syntax.call("np.concatenate", inputs, axis=op.dim.value.data))


@translates(tensor.PadOp)
def translate_pad(fe: FunctionEmitter, op: tensor.PadOp) -> None:
    """tensor.pad with a constant padding value (the only kind whose body NumPy can express)."""
    block = op.region.block
    yielded = yielded_value(op, block)
    owner = yielded.owner
    inside = (isinstance(yielded, BlockArgument) and yielded.owner is block) or (
        isinstance(owner, Operation) and owner.parent_block() is block
    )
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, (IntegerAttr, FloatAttr)):
        value = literal_expr(owner.value.value.data, np_dtype(yielded.type))
    elif not inside:
        value = fe.expr(yielded)
    else:
        raise op_error(op, "pads with a value computed from the index (only constant padding is supported)")
    low = _sizes(fe, op.static_low.get_values(), op.low)
    high = _sizes(fe, op.static_high.get_values(), op.high)
    widths = syntax.tuple_(*(syntax.tuple_(lo, hi) for lo, hi in zip(low, high)))
    fe.define(op.result, syntax.call("np.pad", fe.expr(op.source), widths, constant_values=value))
