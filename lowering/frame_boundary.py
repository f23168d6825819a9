"""State and runtime weights become the entry function's extra arguments and results.

One frame is then a pure function: `cortex.state "x"` reads the argument
`{cortex.state = "x"}`, `cortex.update_state "x"` feeds the result
`{cortex.state = "x"}`, and an unspecialised `cortex.weight "w"` reads the
argument `{cortex.weight = "w"}`. The runtime threads state results back
into state arguments from one frame to the next.

This is its own pass, `convert-cortex-frame-boundary`; `convert-cortex-to-extern`
runs it first, so the documented pair `convert-cortex-to-linalg,convert-cortex-to-extern`
still lowers a whole module.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cortex.dialects import abi
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.ir import describe
from cortex.lowering.base import LoweringError
from cortex.lowering.unsigned import attr_list

PASS = "convert-cortex-frame-boundary"


def _by_name(ops: Iterable[StateOp | WeightOp | UpdateStateOp]) -> dict[str, list]:
    """Ops grouped by their name, names in program order."""
    groups: dict[str, list] = {}
    for op in ops:
        groups.setdefault(op.state_name, []).append(op)
    return groups


def _tagged(attrs: DictionaryAttr, key: str, name: str) -> DictionaryAttr:
    return DictionaryAttr({**attrs.data, key: StringAttr(name)})


def _check_callers(module: ModuleOp, fn: func.FuncOp) -> None:
    for op in module.walk():
        if isinstance(op, func.CallOp) and op.callee.string_value() == fn.sym_name.data:
            raise LoweringError(
                f"{PASS}: @{fn.sym_name.data} reads or writes frame state but is called from "
                f"@{_enclosing(op)}; only an entry function may carry state"
            )


def _enclosing(op: Operation) -> str:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent.sym_name.data if parent is not None else "?"


def thread_frame_boundary(module: ModuleOp, fn: func.FuncOp) -> None:
    """Turn `fn`'s state reads, state updates and weights into arguments and results."""
    inner = list(fn.walk())
    reads = _by_name(op for op in inner if isinstance(op, StateOp))
    updates = _by_name(op for op in inner if isinstance(op, UpdateStateOp))
    weights = _by_name(op for op in inner if isinstance(op, WeightOp))
    if not (reads or updates or weights):
        return
    _check_callers(module, fn)
    if len(fn.body.blocks) != 1:
        raise LoweringError(f"{PASS}: @{fn.sym_name.data} has several blocks; state threading needs one")
    block = fn.body.block
    for group in updates.values():
        for op in group:
            if op.parent_block() is not block:
                raise LoweringError(
                    f"{PASS}: {describe(op)} of state \"{op.state_name}\" is inside '{op.parent_op().name}'; "
                    "state updates must be at the top level of the function"
                )

    arg_attrs = attr_list(fn.arg_attrs, len(block.args))
    for key, groups in ((abi.STATE, reads), (abi.WEIGHT, weights)):
        for name, group in groups.items():
            arg = block.insert_arg(group[0].result.type, len(block.args))
            arg.name_hint = group[0].result.name_hint or name
            arg_attrs.append(_tagged(DictionaryAttr({}), key, name))
            for op in group:
                op.result.replace_all_uses_with(arg)
                Rewriter.erase_op(op)

    returns = [op for op in block.ops if isinstance(op, func.ReturnOp)]
    res_types: list[Attribute] = list(fn.function_type.outputs)
    res_attrs = attr_list(fn.res_attrs, len(res_types))
    for name, group in updates.items():
        value = group[-1].value  # the last update of a state wins
        res_types.append(value.type)
        res_attrs.append(_tagged(DictionaryAttr({}), abi.STATE, name))
        for ret in returns:
            ret.operands = [*ret.operands, value]
        for op in group:
            Rewriter.erase_op(op)

    fn.properties["function_type"] = FunctionType.from_lists([a.type for a in block.args], res_types)
    fn.arg_attrs = ArrayAttr(arg_attrs) if any(a.data for a in arg_attrs) else None
    fn.res_attrs = ArrayAttr(res_attrs) if any(a.data for a in res_attrs) else None


def thread_module(module: ModuleOp) -> None:
    for fn in list(module.ops):
        if isinstance(fn, func.FuncOp) and not fn.is_declaration:
            thread_frame_boundary(module, fn)


@dataclass(frozen=True)
class ConvertFrameBoundaryPass(ModulePass):
    """State reads/updates and runtime weights → the entry function's arguments and results."""

    name = PASS

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        thread_module(op)


__all__ = ["ConvertFrameBoundaryPass", "thread_frame_boundary", "thread_module"]
