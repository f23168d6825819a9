"""`cortex-shape-inference`: make dynamic result dimensions static (MLIR Toy, chapter 4).

Starting from the function arguments, every cortex op's result type is
refined with what its operands imply: `CortexOp.infer_result_types()`,
the very rule its verifier checks, so inference and verification cannot
disagree. A dimension stays dynamic only when nothing determines it (the
encoder's byte count, a reshape's declared `?`).

Patterns, run by xDSL's PatternRewriteWalker to a fixed point (each sweep
visits a region's ops before the op owning it):
- `RefineCortexResults`: one pattern for every cortex op;
- `RefineIfResults`: an `scf.if` result takes the dimensions its branches agree on;
- `RefineStateTypes`: a `cortex.state` declared with `?` dimensions takes the
  dimensions of what the `cortex.update_state`s of the same name store (the
  state holds nothing else), so a shape-generic pipeline's `prev_gray` follows
  its frame;
- `RefineFunctionResults`: a function's declared results are refined from
  its `func.return`s, and the `func.call`s to it get the new types.

Choice about signatures: MLIR's Toy keeps the function signature (its
functions are all inlined into `main`). Cortex compiles each function for
one static resolution, so static result types are useful to the lowering:
this pass refines the *result* types of a function where they were dynamic
(with the calls to it), and never its *argument* types, which are where
inference starts. Where a branch or return yields a more static type than
the one its parent settled on (the other branch is unknown), a
`tensor.cast` back to the parent's type keeps the IR valid upstream MLIR.

The first op whose operand shapes cannot agree stops the pass with one
line naming the op, where it is, and the broken rule.

`optimistic=True` (what binding a shape-generic entry to one concrete shape
uses, `cortex.passes.specialize_shapes`) lets an `scf.if` result take a
dimension that one branch knows while the other still has `?`. That is what a
state read back in one branch needs (the blur gate yields `prev_score`, whose
shape is only learnt from the `update_state` of that very `scf.if`'s
result): an optimistic fixed point, checked afterwards — a `tensor.cast` from
a `?` to a static dimension that survives the fixed point means the guess
was never confirmed, and the caller reports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf, tensor
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException, VerifyException

from cortex.dialects import shapes
from cortex.dialects.base import CortexOp, compatible
from cortex.dialects.state import StateOp, UpdateStateOp
from cortex.errors import CortexError
from cortex.ir import describe

DYNAMIC = shapes.DYNAMIC


class ShapeInferenceError(PassFailedException, CortexError):
    """Operand shapes that no result shape satisfies (one line, located)."""


# ---------------------------------------------------------------- helpers


def fail(op: Operation, message: str) -> ShapeInferenceError:
    return ShapeInferenceError(f"{describe(op)}: {message}")


def refined(declared: Attribute, inferred: Attribute | None) -> Attribute:
    """`declared` with its dynamic dimensions taken from `inferred` (same type if nothing to learn)."""
    if not (isinstance(declared, TensorType) and isinstance(inferred, TensorType)):
        return declared
    if declared.get_num_dims() != inferred.get_num_dims():
        return declared
    shape = shapes.refine(declared.get_shape(), inferred.get_shape())
    return TensorType(declared.element_type, shape)


def join(types: Sequence[Attribute], optimistic: bool = False) -> Attribute | None:
    """The most static type all of `types` agree with: a dimension is static where all are equal
    (`optimistic`: where all the static ones are equal, a `?` agreeing with anything)."""
    first = types[0]
    tensors = [t for t in types if isinstance(t, TensorType)]
    if len(tensors) != len(types):
        return first if all(t == first for t in types) else None
    if len({(t.element_type, t.get_num_dims()) for t in tensors}) != 1:
        return None
    return TensorType(tensors[0].element_type, [agreed_dim(d, optimistic) for d in zip(*(t.get_shape() for t in tensors))])


def agreed_dim(dims: Sequence[int], optimistic: bool) -> int:
    known = {d for d in dims if d != DYNAMIC} if optimistic else set(dims)
    return known.pop() if len(known) == 1 else DYNAMIC


def set_type(rewriter: PatternRewriter, value: SSAValue, new_type: Attribute) -> None:
    if value.type != new_type:
        rewriter.replace_value_with_new_type(value, new_type)


def cast_operands_to(rewriter: PatternRewriter, terminator: Operation, types: Sequence[Attribute]) -> None:
    """Insert `tensor.cast`s so `terminator`'s operands have exactly `types`."""
    operands = list(terminator.operands)
    for index, (value, t) in enumerate(zip(operands, types)):
        if value.type != t and isinstance(t, TensorType):
            cast = rewriter.insert(tensor.CastOp(value, t), InsertPoint.before(terminator))
            operands[index] = cast.dest
    if operands != list(terminator.operands):
        terminator.operands = operands
        rewriter.notify_op_modified(terminator)


def refine_from_terminators(
    results: Sequence[Attribute], terminators: Sequence[Operation], optimistic: bool = False
) -> list[Attribute]:
    """The refined types of a region-holding op's results, from what its terminators pass."""
    new_types = []
    for index, declared in enumerate(results):
        passed = [t.operands[index].type for t in terminators if len(t.operands) > index]
        agreed = join(passed, optimistic) if passed and len(passed) == len(terminators) else None
        new_types.append(refined(declared, agreed) if agreed is not None and compatible(declared, agreed) else declared)
    return new_types


# ---------------------------------------------------------------- patterns


class RefineCortexResults(RewritePattern):
    """A cortex op's result types become what `infer_result_types()` says."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, CortexOp) or isinstance(op, UpdateStateOp):
            return  # a state's reads and writes agree through `RefineStateTypes`
        try:
            inferred = op.infer_result_types()
        except VerifyException as e:
            raise fail(op, str(e)) from None
        for index, (result, expected) in enumerate(zip(op.results, inferred)):
            if expected is None:
                continue
            if not compatible(result.type, expected):
                raise fail(op, f"result #{index} is declared {result.type}, but the operands imply {expected}")
            set_type(rewriter, result, refined(result.type, expected))


class RefineIfResults(RewritePattern):
    """scf.if results take the dimensions both branches agree on (`optimistic`: that either knows)."""

    def __init__(self, optimistic: bool = False):
        self.optimistic = optimistic

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.IfOp, rewriter: PatternRewriter, /) -> None:
        yields = [y for region in op.regions if region.blocks for y in [region.block.last_op] if isinstance(y, scf.YieldOp)]
        if len(yields) != 2:
            return  # an `if` without `else` has no results to refine
        new_types = refine_from_terminators(op.result_types, yields, self.optimistic)
        for result, t in zip(op.results, new_types):
            set_type(rewriter, result, t)
        for y in yields:
            cast_operands_to(rewriter, y, new_types)


class RefineFunctionResults(RewritePattern):
    """A function's dynamic result types become what its returns give; calls follow."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter, /) -> None:
        if op.is_declaration:
            return
        returns = [block.last_op for block in op.body.blocks if isinstance(block.last_op, func.ReturnOp)]
        if not returns:
            return
        outputs = list(op.function_type.outputs.data)
        new_types = refine_from_terminators(outputs, returns)
        if new_types != outputs:
            op.function_type = FunctionType.from_lists(list(op.function_type.inputs.data), new_types)
            rewriter.notify_op_modified(op)
            for call in self.calls_to(op):
                for result, t in zip(call.results, new_types):
                    set_type(rewriter, result, t)
        for ret in returns:
            cast_operands_to(rewriter, ret, new_types)

    @staticmethod
    def calls_to(fn: func.FuncOp) -> list[func.CallOp]:
        top: Operation = fn
        while (parent := top.parent_op()) is not None:
            top = parent
        name = fn.sym_name.data
        return [c for c in top.walk() if isinstance(c, func.CallOp) and c.callee.root_reference.data == name]


class RefineStateTypes(RewritePattern):
    """A state's `?` dimensions become those of the values stored in it, where they all agree.

    The reads and writes of one state name in one function must have one type
    (the `cortex.update_state` verifier): every read takes the refined type,
    and a stored value that is still less static is cast to it (only an
    optimistic refinement leaves one; the caller checks it is confirmed).
    """

    def __init__(self, optimistic: bool = False):
        self.optimistic = optimistic

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: StateOp, rewriter: PatternRewriter, /) -> None:
        fn = enclosing_function(op)
        if fn is None:
            return
        declared, name = op.result.type, op.state_name
        updates = [u for u in fn.walk() if isinstance(u, UpdateStateOp) and u.state_name == name]
        for update in updates:
            if not compatible(declared, update.value.type):
                raise fail(update, f"state '{name}' is read as {declared} but updated with {update.value.type}")
        if not (updates and isinstance(declared, TensorType) and DYNAMIC in declared.get_shape()):
            return
        agreed = join([u.value.type for u in updates], self.optimistic)
        new_type = refined(declared, agreed) if agreed is not None and compatible(declared, agreed) else declared
        if new_type == declared:
            return
        for read in fn.walk():
            if isinstance(read, StateOp) and read.state_name == name:
                set_type(rewriter, read.result, new_type)
        for update in updates:
            cast_operands_to(rewriter, update, [new_type])


def enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def infer_shapes(module: ModuleOp, optimistic: bool = False) -> None:
    """Refine every dynamic result type in `module` that its operands determine (in place);
    `optimistic`: see the module doc."""
    applier = GreedyRewritePatternApplier(
        [
            RefineCortexResults(),
            RefineIfResults(optimistic),
            RefineStateTypes(optimistic),
            RefineFunctionResults(),
        ],
        dce_enabled=False,
    )
    PatternRewriteWalker(applier, walk_regions_first=True).rewrite_module(module)


@dataclass(frozen=True)
class ShapeInferencePass(ModulePass):
    """Makes every dynamic result dimension static that the function's arguments determine."""

    name = "cortex-shape-inference"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        infer_shapes(op)
