"""tensor dialect ops as NumPy indexing, reshapes and copies.

Tensors are values: a slice or reshape may share memory with its source
(a view, so not owned), and an op that "modifies" a tensor (insert,
insert_slice) copies it first unless the source dies at that op and is a
temporary this code owns, in which case it is updated in place.
"""

from __future__ import annotations

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, FloatAttr, IntegerAttr
from xdsl.ir import BlockArgument, Operation, SSAValue

from cortex.backends.numpy_codegen import (
    FunctionEmitter,
    dt,
    literal,
    np_dtype,
    op_error,
    paren,
    static_shape,
    translates,
)


def _sizes(fe: FunctionEmitter, static: tuple[int, ...], dynamic: list[SSAValue]) -> list[str]:
    """Static sizes with each DYNAMIC_INDEX entry taken, in order, from the dynamic operands."""
    dynamic = list(dynamic)
    out = []
    for s in static:
        out.append(fe.expr(dynamic.pop(0)) if s == DYNAMIC_INDEX else str(s))
    return out


def _shape_expr(fe: FunctionEmitter, value: SSAValue, dynamic: list[SSAValue] = ()) -> str:
    shape = static_shape(value.type)
    sizes = [str(s) if s >= 0 else fe.expr(d) for s, d in zip(shape, _dynamic_iter(shape, dynamic))]
    return f"({', '.join(sizes)}{',' if len(sizes) == 1 else ''})"


def _dynamic_iter(shape, dynamic):
    dynamic = list(dynamic)
    for s in shape:
        yield dynamic.pop(0) if s < 0 else None


def _dropped(sizes: list[str], result_shape: tuple[int, ...]) -> set[int]:
    """The unit dimensions a rank-reducing slice drops (matched left to right, as MLIR does)."""
    dropped, j = set(), 0
    for i, n in enumerate(sizes):
        if j < len(result_shape) and (result_shape[j] < 0 or str(result_shape[j]) == n):
            j += 1
        elif n == "1":
            dropped.add(i)
        else:
            return set()
    return dropped if j == len(result_shape) else set()


def _slices(fe: FunctionEmitter, op, reduced_shape: tuple[int, ...]) -> tuple[str, list[str]]:
    """The NumPy index of an extract/insert_slice (unit dims of a rank-reducing one as integers), and its sizes."""
    offsets = _sizes(fe, op.static_offsets.get_values(), op.offsets)
    sizes = _sizes(fe, op.static_sizes.get_values(), op.sizes)
    strides = _sizes(fe, op.static_strides.get_values(), op.strides)
    dropped = _dropped(sizes, reduced_shape) if len(reduced_shape) < len(sizes) else set()
    parts = []
    for i, (o, n, s) in enumerate(zip(offsets, sizes, strides)):
        if i in dropped:
            parts.append(o)
            continue
        if o.isdigit() and n.isdigit() and s.isdigit():
            stop = str(int(o) + (int(n) - 1) * int(s) + 1)
        else:
            stop = f"{paren(o)} + ({paren(n)} - 1) * {paren(s)} + 1"
        parts.append(f"{'' if o == '0' else o}:{stop}" + ("" if s == "1" else f":{s}"))
    return ", ".join(parts), sizes


@translates(tensor.EmptyOp)
def translate_empty(fe: FunctionEmitter, op: tensor.EmptyOp) -> None:
    result = op.tensor
    fe.define(result, f"np.empty({_shape_expr(fe, result, op.dynamic_sizes)}, {dt(np_dtype(result.type))})")


@translates(tensor.SplatOp)
def translate_splat(fe: FunctionEmitter, op: tensor.SplatOp) -> None:
    result = op.result
    shape = _shape_expr(fe, result, op.dynamicSizes)
    fe.define(result, f"np.full({shape}, {fe.expr(op.input)}, {dt(np_dtype(result.type))})")


@translates(tensor.ExtractOp)
def translate_extract(fe: FunctionEmitter, op: tensor.ExtractOp) -> None:
    index = ", ".join(fe.expr(i) for i in op.indices) or "()"
    fe.define(op.result, f"{paren(fe.expr(op.tensor))}[{index}]", owned=False)


@translates(tensor.InsertOp)
def translate_insert(fe: FunctionEmitter, op: tensor.InsertOp) -> None:
    index = ", ".join(fe.expr(i) for i in op.indices) or "()"
    dest = fe.expr(op.dest)
    name = fe.name(op.result)
    fe.line(f"{name} = {dest}" if fe.reusable(op.dest, op) else f"{name} = {dest}.copy()")
    fe.line(f"{name}[{index}] = {fe.expr(op.scalar)}")
    fe.defined(op.result, name)


@translates(tensor.ExtractSliceOp)
def translate_extract_slice(fe: FunctionEmitter, op: tensor.ExtractSliceOp) -> None:
    index, _ = _slices(fe, op, static_shape(op.result.type))
    fe.define(op.result, f"{paren(fe.expr(op.source))}[{index}]", owned=False)


@translates(tensor.InsertSliceOp)
def translate_insert_slice(fe: FunctionEmitter, op: tensor.InsertSliceOp) -> None:
    index, _ = _slices(fe, op, static_shape(op.source.type))
    dest = fe.expr(op.dest)
    source = fe.expr(op.source)
    name = fe.name(op.result)
    fe.line(f"{name} = {dest}" if fe.reusable(op.dest, op) else f"{name} = {dest}.copy()")
    fe.line(f"{name}[{index}] = {source}")
    fe.defined(op.result, name)


@translates(tensor.CollapseShapeOp, tensor.ExpandShapeOp)
def translate_reshape_static(fe: FunctionEmitter, op: Operation) -> None:
    result = op.result
    source = op.src
    if any(s < 0 for s in static_shape(result.type)):
        raise op_error(op, "with a dynamic result shape has no NumPy translation")
    # A reshape of a fresh array read nowhere else is as fresh (a relu after a conv can run in place).
    owned = fe.reusable(source, op) is not None
    fe.define(result, f"{paren(fe.expr(source))}.reshape({_shape_expr(fe, result)})", owned=owned)


@translates(tensor.ReshapeOp)
def translate_reshape(fe: FunctionEmitter, op: tensor.ReshapeOp) -> None:
    shape = static_shape(op.result.type)
    target = _shape_expr(fe, op.result) if all(s >= 0 for s in shape) else f"tuple({fe.expr(op.shape)})"
    fe.define(op.result, f"{paren(fe.expr(op.source))}.reshape({target})", owned=False)


@translates(tensor.CastOp)
def translate_cast(fe: FunctionEmitter, op: tensor.CastOp) -> None:
    """A cast only changes what the type system knows: the same array."""
    term = fe.term(op.source)
    fe.bind(op.dest, term.__class__(term.expr, term.dtype, static_shape(op.dest.type), owned=False))


@translates(tensor.DimOp)
def translate_dim(fe: FunctionEmitter, op: tensor.DimOp) -> None:
    fe.define(op.result, f"{paren(fe.expr(op.source))}.shape[{fe.expr(op.index)}]", owned=False)


@translates(tensor.FromElementsOp)
def translate_from_elements(fe: FunctionEmitter, op: tensor.FromElementsOp) -> None:
    elements = ", ".join(fe.expr(e) for e in op.elements)
    result = op.result
    fe.define(result, f"np.array([{elements}], {dt(np_dtype(result.type))}).reshape({_shape_expr(fe, result)})")


@translates(tensor.ConcatOp)
def translate_concat(fe: FunctionEmitter, op: tensor.ConcatOp) -> None:
    inputs = ", ".join(fe.expr(v) for v in op.inputs)
    fe.define(op.result, f"np.concatenate([{inputs}], axis={op.dim.value.data})")


@translates(tensor.PadOp)
def translate_pad(fe: FunctionEmitter, op: tensor.PadOp) -> None:
    """tensor.pad with a constant padding value (the only kind whose body NumPy can express)."""
    block = op.region.block
    yielded = block.last_op.operands[0]
    owner = yielded.owner
    inside = (isinstance(yielded, BlockArgument) and yielded.owner is block) or (
        isinstance(owner, Operation) and owner.parent_block() is block
    )
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, (IntegerAttr, FloatAttr)):
        value = literal(owner.value.value.data, np_dtype(yielded.type))
    elif not inside:
        value = fe.expr(yielded)
    else:
        raise op_error(op, "pads with a value computed from the index (only constant padding is supported)")
    low = _sizes(fe, op.static_low.get_values(), op.low)
    high = _sizes(fe, op.static_high.get_values(), op.high)
    widths = ", ".join(f"({lo}, {hi})" for lo, hi in zip(low, high))
    fe.define(op.result, f"np.pad({fe.expr(op.source)}, ({widths},), constant_values={value})")
