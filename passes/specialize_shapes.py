"""`cortex-specialize-shapes`: bind a shape-generic entry function to one concrete input shape.

A pipeline may be written once with `?` dimensions (`tensor<?x?x3xui8>`):
the verifier checks every rule that the static dimensions decide and leaves
the rest ("H is a multiple of block") for later. This pass is that later:
given the concrete shapes of the entry's arguments it

1. checks each shape against the argument's type (rank, element count of the
   static dimensions) and gives the arguments those types;
2. runs shape inference optimistically to a fixed point (a state read back
   in a branch takes the shape of what is stored in it, see
   `cortex.passes.shape_inference`), so every rule is now checked with real
   numbers; a rule the shape breaks is one `CortexError` naming the op, the
   rule, and the operand shapes it met;
3. checks what the optimistic fixed point guessed was confirmed (no
   `tensor.cast` from `?` to a static dimension is left), drops the casts that
   became identities, and requires every state to be static (its first value
   is zeros of its type).

Everything below it (lowering, the NumPy and other backends) then sees a
static module: one program per shape, as `jax.jit` traces one per shape.
The per-shape cache that calls this lives on the compiler side
(`cortex.shape_generic.ShapeGenericPipeline`); schedulers and engines never do.
A frame whose sides are no multiple of the block is padded first, in IR
(`cortex-pad-frames`, `cortex.passes.pad_frames`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, tensor
from xdsl.dialects.builtin import FunctionType, IntegerAttr, ModuleOp, TensorType
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import VerifyException

from cortex.dialects import shapes
from cortex.dialects.state import StateOp
from cortex.errors import CortexError
from cortex.passes.shape_inference import ShapeInferenceError, infer_shapes

DYNAMIC = shapes.DYNAMIC
MAX_ROUNDS = 8
"""Optimistic inference rounds before giving up (each round settles at least one state; the L2
pipeline needs two)."""


class ShapeBindingError(CortexError):
    """A concrete shape that the shape-generic entry function cannot take."""


def dynamic_arguments(fn: func.FuncOp) -> list[int]:
    """Indices of the arguments of `fn` with a `?` dimension."""
    return [
        i for i, t in enumerate(fn.function_type.inputs.data)
        if isinstance(t, TensorType) and DYNAMIC in t.get_shape()
    ]


def is_shape_generic(module: ModuleOp, entry: str) -> bool:
    """Whether `entry` of `module` takes an argument with a `?` dimension."""
    fn = find_function(module, entry)
    return fn is not None and bool(dynamic_arguments(fn))


def find_function(module: ModuleOp, entry: str) -> func.FuncOp | None:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            return op
    return None


def bound_type(fn: func.FuncOp, index: int, shape: Sequence[int]) -> Attribute:
    """The type argument `index` of `fn` takes for a value of `shape`, or a ShapeBindingError."""
    declared = fn.function_type.inputs.data[index]
    arg = fn.args[index]
    what = f"@{fn.sym_name.data} argument #{index}" + (f" (%{arg.name_hint})" if arg.name_hint else "")
    if not isinstance(declared, TensorType):
        return declared
    shape = tuple(int(d) for d in shape)
    if any(d < 0 for d in shape):
        raise ShapeBindingError(f"{what}: a concrete shape has no negative or '?' dimension, got {list(shape)}")
    if len(shape) != declared.get_num_dims() or not shapes.shapes_agree(declared.get_shape(), shape):
        raise ShapeBindingError(f"{what} is {declared}; an input of shape {shapes.fmt(shape)} does not fit it")
    return TensorType(declared.element_type, shape)


def bind_arguments(fn: func.FuncOp, arg_shapes: Sequence[Sequence[int] | None]) -> None:
    """Give `fn`'s arguments the concrete shapes (None: keep the declared type)."""
    inputs = list(fn.function_type.inputs.data)
    if len(arg_shapes) != len(inputs):
        raise ShapeBindingError(f"@{fn.sym_name.data} takes {len(inputs)} argument(s), got {len(arg_shapes)} shape(s)")
    new_inputs = [t if s is None else bound_type(fn, i, s) for i, (t, s) in enumerate(zip(inputs, arg_shapes))]
    for arg, t in zip(fn.args, new_inputs):
        if arg.type != t:
            Rewriter.replace_value_with_new_type(arg, t)
    fn.function_type = FunctionType.from_lists(new_inputs, list(fn.function_type.outputs.data))


def unconfirmed_casts(module: ModuleOp) -> list[tensor.CastOp]:
    """Casts that claim a static dimension their source still has as `?`."""
    found = []
    for op in module.walk():
        if isinstance(op, tensor.CastOp) and isinstance(op.source.type, TensorType) and isinstance(op.dest.type, TensorType):
            src, dst = op.source.type.get_shape(), op.dest.type.get_shape()
            if any(s == DYNAMIC and d != DYNAMIC for s, d in zip(src, dst)):
                found.append(op)
    return found


def drop_identity_casts(module: ModuleOp) -> None:
    for op in list(module.walk()):
        if isinstance(op, tensor.CastOp) and op.source.type == op.dest.type:
            op.dest.replace_all_uses_with(op.source)
            op.detach()
            op.erase()


def specialize_shapes(module: ModuleOp, entry: str, arg_shapes: Sequence[Sequence[int] | None]) -> ModuleOp:
    """Bind `entry`'s arguments to `arg_shapes` and infer every shape below them (in place; see module doc)."""
    fn = find_function(module, entry)
    if fn is None:
        raise ShapeBindingError(f"the module has no function @{entry}")
    bind_arguments(fn, arg_shapes)
    given = ", ".join(shapes.fmt(s) for s in arg_shapes if s is not None)
    for _ in range(MAX_ROUNDS):
        before = str(fn)
        try:
            infer_shapes(module, optimistic=True)
        except ShapeInferenceError as e:
            raise ShapeBindingError(f"input shape {given} for @{entry} breaks a rule: {e}") from None
        if str(fn) == before:
            break
    drop_identity_casts(module)
    left = unconfirmed_casts(module)
    if left:
        cast = left[0]
        raise ShapeBindingError(
            f"input shape {given} for @{entry}: the shape of {cast.source.type} could not be determined "
            f"(it flows where {cast.dest.type} is expected)"
        )
    for op in fn.walk():
        if isinstance(op, StateOp) and isinstance(op.result.type, TensorType) and DYNAMIC in op.result.type.get_shape():
            raise ShapeBindingError(
                f"input shape {given} for @{entry}: state '{op.state_name}' keeps the dynamic type {op.result.type} "
                "(nothing stored in it has a known shape, so its first value, zeros, has none)"
            )
    try:
        module.verify()
    except VerifyException as e:  # a rule only the whole function checks (e.g. a state's read and write types)
        raise ShapeBindingError(f"input shape {given} for @{entry}: {' '.join(str(e).split())}") from None
    return module


def video_block(module: ModuleOp, entry: str) -> int:
    """The multiple a frame's sides must be for `entry`: the least common multiple of its ops'
    `block` properties (1 if none has one), what `cortex-pad-frames` pads its frames to."""
    fn = find_function(module, entry)
    if fn is None:
        raise ShapeBindingError(f"the module has no function @{entry}")
    blocks = {attr.value.data for op in fn.walk() if isinstance(attr := op.properties.get("block"), IntegerAttr)}
    return math.lcm(*blocks) if blocks else 1


def parse_shape(text: str) -> tuple[int, ...]:
    """`480x640x3` → (480, 640, 3)."""
    try:
        return tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise ShapeBindingError(f"a shape reads like 480x640x3, got '{text}'") from None


@dataclass(frozen=True)
class SpecializeShapesPass(ModulePass):
    """`cortex-specialize-shapes{entry=l2_frame shapes=480x640x3}`: binds the entry's arguments to the given
    shapes (one per argument, `-` for one kept as declared) and infers every shape below them."""

    name = "cortex-specialize-shapes"

    entry: str = "l2_frame"
    shapes: tuple[str, ...] = field(default=())

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        specialize_shapes(op, self.entry, [None if s == "-" else parse_shape(s) for s in self.shapes])
