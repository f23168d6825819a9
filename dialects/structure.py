"""Whole-module checks that op-local verifiers cannot make (MLIR's region verifier).

xDSL 0.74 verifies each op on its own; MLIR also checks, across ops, that
every use is dominated by its definition and that the regions of `scf.if`
and `linalg.generic` yield what their op promises. Without these, IR that
`mlir-opt` rejects reaches the passes and backends and fails there as an
internal error. `structural_problems` yields `(op, message)` pairs for the
located verifier (`cortex.ir.verify_located`); the walk is iterative, so a
deeply nested module cannot exhaust Python's stack here.

Block-to-block dominance inside a multi-block region comes from xDSL's
`DominanceInfo`; within a block, order is the block's op order.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import TensorType
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo

from cortex.dialects.base import compatible
from cortex.dialects.state import StateOp, UpdateStateOp

Problem = tuple[Operation, str]


def structural_problems(module: Operation) -> Iterator[Problem]:
    """Every dominance, terminator and state-consistency problem, in walk order."""
    yield from dominance_problems(module)
    for op in walk_iterative(module):
        yield from terminator_problems(op)
        yield from predicate_problems(op)
        if isinstance(op, func.FuncOp):
            yield from state_problems(op)


CMP_PREDICATES = {
    arith.CmpfOp: ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                   "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true"),
    arith.CmpiOp: ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"),
}
"""MLIR's arith::CmpFPredicate and CmpIPredicate, in enum order (xDSL keeps the number unchecked)."""


def predicate_problems(op: Operation) -> Iterator[Problem]:
    """A comparison's predicate must be one of arith's enum (mlir-opt rejects -1 or 2^63-1)."""
    names = CMP_PREDICATES.get(type(op))
    if names is None:
        return
    predicate = op.properties.get("predicate")
    value = getattr(predicate, "value", None)
    number = getattr(value, "data", None)
    if not isinstance(number, int) or not 0 <= number < len(names):
        yield op, f"predicate {number} is not one of arith's {len(names)} predicates (0 = {names[0]} .. {len(names) - 1} = {names[-1]})"


def walk_iterative(root: Operation) -> Iterator[Operation]:
    """Pre-order walk without recursion (xDSL's `walk` nests one generator per level)."""
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        for region in reversed(op.regions):
            for block in reversed(region.blocks):
                stack.extend(reversed(list(block.ops)))


def _name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else "a value"


def dominance_problems(root: Operation) -> Iterator[Problem]:
    """Uses not dominated by their definition (MLIR: 'operand #i does not dominate this use').

    One pass over the IR with one set of visible values and an undo list per
    block: a block sees what its parent op saw, its own arguments, what came
    before in the block, and (in a multi-block region) all values of the
    blocks that dominate it. Linear in the size of the IR, and no recursion.
    """
    visible: set[SSAValue] = set()
    # A frame is [ops still to visit, values this frame added, op whose results follow];
    # a frame with no ops adds its op's results to the frame below when it ends.
    frames: list[tuple[Iterator[Operation], list[SSAValue], Operation | None]] = []

    def push_regions(op: Operation) -> None:
        frames.append((iter(()), [], op))
        for region in reversed(op.regions):
            blocks = list(region.blocks)
            dominance = DominanceInfo(region) if len(blocks) > 1 else None
            reachable = reachable_blocks(blocks) if dominance is not None else set(blocks)
            for block in reversed(blocks):
                added: list[SSAValue] = list(block.args)
                if block not in reachable:
                    # MLIR checks no dominance in a block the entry cannot reach: every value
                    # of the region may be used there (mlir-opt accepts it; so do we).
                    added += [v for other in blocks for v in (*other.args, *(r for o in other.ops for r in o.results))]
                elif dominance is not None:
                    for other in blocks:
                        if other is not block and dominance.strictly_dominates(other, block):
                            added += [*other.args, *(r for o in other.ops for r in o.results)]
                added = [v for v in added if v not in visible]
                frames.append((iter(block.ops), added, None))

    push_regions(root)
    frames.pop(0)  # the root's own results are of no interest
    started: set[int] = set()
    while frames:
        ops, added, owner = frames[-1]
        if id(added) not in started:
            started.add(id(added))
            visible.update(added)
        op = next(ops, None)
        if op is None:
            frames.pop()
            started.discard(id(added))
            visible.difference_update(added)
            if owner is not None and frames:
                frames[-1][1].extend(owner.results)
                visible.update(owner.results)
            continue
        for index, operand in enumerate(op.operands):
            if operand not in visible:
                yield op, _undominated(index, operand, op)
        if op.regions:
            push_regions(op)
        else:
            added.extend(op.results)
            visible.update(op.results)


def reachable_blocks(blocks: list[Block]) -> set[Block]:
    """The blocks of a region the entry block reaches through terminators' successors."""
    seen = {blocks[0]}
    todo = [blocks[0]]
    while todo:
        last = todo.pop().last_op
        for successor in last.successors if last is not None else ():
            if successor not in seen:
                seen.add(successor)
                todo.append(successor)
    return seen


def _undominated(index: int, operand: SSAValue, user: Operation) -> str:
    if isinstance(operand, OpResult) and operand.op is user:
        return f"operand #{index} ({_name(operand)}) is a result of this same op"
    if isinstance(operand, OpResult | BlockArgument) and _in_scope_later(operand, user):
        return f"operand #{index} ({_name(operand)}) is used before it is defined"
    if isinstance(operand, OpResult | BlockArgument) and _in_enclosing_region(operand, user):
        return f"operand #{index} ({_name(operand)}) does not dominate this use (its block does not dominate this one)"
    if not isinstance(operand, OpResult | BlockArgument):  # the parser's placeholder for a later definition
        return f"operand #{index} ({_name(operand)}) is defined later, in a region that does not enclose this use"
    return f"operand #{index} ({_name(operand)}) is defined in a region that does not enclose this use"


def _in_enclosing_region(value: SSAValue, user: Operation) -> bool:
    """`value` is defined in another block of a region that encloses `user` (a CFG, not nesting, problem)."""
    block = value.op.parent_block() if isinstance(value, OpResult) else value.block if isinstance(value, BlockArgument) else None
    region = block.parent if block is not None else None
    using = user.parent_block()
    return region is not None and using is not None and region.find_ancestor_block_in_region(using) is not None


def _in_scope_later(value: SSAValue, user: Operation) -> bool:
    block = value.op.parent_block() if isinstance(value, OpResult) else value.block if isinstance(value, BlockArgument) else None
    return block is not None and block.find_ancestor_op_in_block(user) is not None


def terminator_problems(op: Operation) -> Iterator[Problem]:
    """Regions must end in the terminator their op expects, yielding its result types."""
    if isinstance(op, scf.IfOp):
        expected = list(op.output.types)
        for which, region in (("then", op.true_region), ("else", op.false_region)):
            if not region.blocks:
                if expected:
                    yield op, f"has results but no {which} region: both branches must yield {_types(expected)}"
                continue
            yield from _yields(op, region, scf.YieldOp, expected, f"the {which} region")
    elif isinstance(op, GenericOp):
        expected = [t.element_type if isinstance(t, TensorType) else t for t in op.outputs.types]
        yield from _yields(op, op.body, LinalgYieldOp, expected, "the body")
    elif isinstance(op, func.FuncOp) and op.is_declaration:
        visibility = op.sym_visibility.data if op.sym_visibility is not None else "public"
        if visibility == "public":
            yield op, f"@{op.sym_name.data} has no body, so it must be private (a public declaration is not valid MLIR)"
    elif isinstance(op, func.FuncOp):
        for block in op.body.blocks:
            if not isinstance(block.last_op, func.ReturnOp):
                yield (block.last_op or op), f"a block of @{op.sym_name.data} does not end in 'func.return'"


def _yields(op: Operation, region: Region, terminator: type[Operation], expected: list, what: str) -> Iterator[Problem]:
    for block in region.blocks:
        last = block.last_op
        if not isinstance(last, terminator):
            yield (last or op), f"{what} of '{op.name}' must end in '{terminator.name}'"
            continue
        got = list(last.operand_types) if hasattr(last, "operand_types") else [v.type for v in last.operands]
        if got != expected:
            yield last, f"yields {_types(got)}, but the parent '{op.name}' expects {_types(expected)}"


def _types(types: list) -> str:
    return "(" + ", ".join(str(t) for t in types) + ")" if types else "nothing"


def state_problems(function: func.FuncOp) -> Iterator[Problem]:
    """Within one function, every read and update of a state name agrees on its type (a `?` dimension
    agrees with any size: a shape-generic pipeline's state takes its size when the shape is bound)."""
    seen: dict[str, tuple[Operation, Attribute]] = {}
    for op in walk_iterative(function):
        if isinstance(op, StateOp):
            type_ = op.result.type
        elif isinstance(op, UpdateStateOp):
            type_ = op.value.type
        else:
            continue
        first = seen.setdefault(op.state_name, (op, type_))
        if not compatible(first[1], type_):
            verb = "read" if isinstance(first[0], StateOp) else "updated"
            yield op, f"state '{op.state_name}' has type {type_} here but is {verb} as {first[1]} earlier in @{function.sym_name.data}"


__all__ = ["dominance_problems", "state_problems", "structural_problems", "terminator_problems", "walk_iterative"]
