"""Frame split: the entry cut in four pure functions, so several frames can be in flight.

Built on the state analysis (`state_analysis.classify_states`: delayed
inputs, leading recurrences, recurrences, read-only states) and the
outlining toolkit (`outlining`). `split_entry` rewrites `@f` into four pure
functions (state reads become arguments, state updates results):

- `@f__delayed(frame)`: the backward slice of the delayed inputs' and
  leading recurrences' next values (`gray`, the blur gate's history), and
  every value of that slice other parts use;
- `@f__parallel(...)`: everything that reads no recurrence state (blur gate
  condition, text_roi, saliency, scene_change, motion, fusion). A `scf.if`
  whose condition is recurrence-free but whose branches read a recurrence
  is cut in two: its recurrence-free ops go into a copy of the `scf.if`
  here (same condition, so a blurred frame still skips the heavy stages),
  which yields what the other copy needs (zeros on the branch that does not
  compute it);
- `@f__recurrence(...)`: the ops that read a recurrence and feed its next
  value (`temporal_smooth` under the gate's second copy);
- `@f__tail(...)`: the rest (the encoder) and the entry's outputs.

Each part carries `cortex.split_args` / `cortex.split_results`
(`cortex.dialects.abi.SPLIT_ARGS`): one wiring key per argument and result,
`input:<i>`, `state:<name>`, `update:<name>`, `output:<i>` or `value:<k>` (a
value one part hands to a later one), which is how the runtime wires them
(`cortex.runtime.parts`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from cortex.dialects.abi import FRAME_PARTS, wire
from cortex.dialects.state import StateOp, UpdateStateOp
from cortex.passes.outlining import (
    FrameSplitError,
    Outliner,
    Piece,
    backward_slice,
    branch_ops,
    branch_yields,
    defined_function,
    inside,
    outer_operands,
    rematerialisable,
    replace_function,
)
from cortex.passes.state_analysis import StateClass, classify_states, entry_block, states_of
from cortex.semantics.modes import DEFAULT_ENTRY

PART_ATTR = "cortex.frame_split"
"""On each part: its name ("delayed", "parallel", "recurrence", "tail")."""


def check_splittable(fn: func.FuncOp) -> None:
    """A FrameSplitError when `fn` cannot be cut (and why)."""
    block = entry_block(fn)
    _, updates = states_of(block)
    for name, group in updates.items():
        for op in group:
            if op.parent_block() is not block:
                raise FrameSplitError(
                    f"@{fn.sym_name.data}: state '{name}' is updated inside '{getattr(op.parent_op(), 'name', '?')}'; "
                    "the frame split needs every state update at the top level"
                )
        if len(group) > 1:
            raise FrameSplitError(f"@{fn.sym_name.data}: state '{name}' is updated {len(group)} times; the frame split needs one update")
    if not isinstance(block.last_op, func.ReturnOp):
        raise FrameSplitError(f"@{fn.sym_name.data} does not end with func.return")


# ---------------------------------------------------------------- partition


@dataclass
class Partition:
    """Which part each top-level op of the entry goes to (split `scf.if`s in two parts)."""

    classes: dict[str, StateClass]
    part: dict[Operation, str] = field(default_factory=dict)
    split_ifs: set[Operation] = field(default_factory=set)  # scf.ifs with a recurrence-free copy in "parallel"
    recurrent: set[Operation] = field(default_factory=set)  # ops (any depth) that read a recurrence


def _reads_recurrence(op: Operation, recurrent: set[Operation], rec_states: set[str]) -> bool:
    """A recurrence's state read, or an op using (itself or in its regions) a value of one."""
    if isinstance(op, StateOp):
        return op.state_name in rec_states
    if any(inner in recurrent for inner in op.walk() if inner is not op):
        return True
    return any(isinstance(v.owner, Operation) and v.owner in recurrent for v in outer_operands(op))


def partition(fn: func.FuncOp) -> Partition:
    """Each top-level op's part; `scf.if`s with a recurrence-free condition but recurrent ops are split."""
    check_splittable(fn)
    block = entry_block(fn)
    classes = classify_states(fn)
    rec_states = {n for n, c in classes.items() if c.kind == "recurrence"}
    result = Partition(classes)
    changed = True
    while changed:  # to a fixed point: a region op is recurrent once an op of its body is
        changed = False
        for op in block.walk():
            if op not in result.recurrent and _reads_recurrence(op, result.recurrent, rec_states):
                result.recurrent.add(op)
                changed = True

    _, updates = states_of(block)
    ahead = {n for n, c in classes.items() if c.kind in ("delayed", "leading")}  # run in frame order, ahead of the gated stages
    delayed_values = [g[-1].value for n, g in updates.items() if n in ahead]
    rec_values = [g[-1].value for n, g in updates.items() if classes[n].kind == "recurrence"]
    delayed_slice = set(backward_slice(delayed_values, block))
    rec_slice = set(backward_slice(rec_values, block))
    for op in block.ops:
        if isinstance(op, StateOp | func.ReturnOp):
            continue
        if isinstance(op, UpdateStateOp):
            result.part[op] = "delayed" if op.state_name in ahead else "recurrence"
        elif op in delayed_slice:
            result.part[op] = "delayed"
        elif op not in result.recurrent:
            result.part[op] = "parallel"
        else:
            result.part[op] = "recurrence" if op in rec_slice else "tail"
            if (
                isinstance(op, scf.IfOp)
                and op.cond.owner not in result.recurrent
                and any(inner not in result.recurrent for b in (op.true_region, op.false_region) for inner in branch_ops(b))
            ):
                result.split_ifs.add(op)
    return result


# ---------------------------------------------------------------- building the parts


class _Splitter(Outliner):
    purpose = "the frame split"
    value_kind = "value"

    def __init__(self, fn: func.FuncOp, plan: Partition):
        super().__init__(fn)
        self.plan = plan
        self.block = entry_block(fn)
        self.parts = {name: Piece(name, self) for name in FRAME_PARTS}

    def argument_key(self, v: SSAValue) -> str | None:
        if isinstance(v, BlockArgument) and v.owner is self.block:
            return wire("input", v.index)
        if isinstance(v.owner, StateOp):
            return wire("state", v.owner.state_name)
        return None

    def run(self) -> list[func.FuncOp]:
        plan = self.plan
        for name in FRAME_PARTS:
            part = self.parts[name]
            for op in self.block.ops:
                if op in plan.split_ifs and name == "parallel":
                    self._parallel_copy(op, part)
                if plan.part.get(op) != name or rematerialisable(op):
                    continue  # constants and weights are cloned into each part that uses them
                if isinstance(op, UpdateStateOp):
                    part.results.append((wire("update", op.state_name), part.get(op.value)))
                elif op in plan.split_ifs:
                    self._recurrent_copy(op, part)
                else:
                    part.add(op)
            if name == "tail":
                ret = self.block.last_op
                assert isinstance(ret, func.ReturnOp)
                part.results += [(wire("output", i), part.get(v)) for i, v in enumerate(ret.arguments)]
        return [self.function(self.parts[name], {PART_ATTR: StringAttr(name)}) for name in FRAME_PARTS]

    def _parallel_copy(self, op: scf.IfOp, part: Piece) -> None:
        """The recurrence-free ops of both branches under the same condition; yields what the other copy reads."""
        rec = self.plan.recurrent
        branches = [branch_ops(op.true_region), branch_ops(op.false_region)]
        crossing: list[list[SSAValue]] = []
        for region, ops in zip((op.true_region, op.false_region), branches):
            defined = {r for o in ops if o not in rec for r in o.results}
            kept = [o for o in ops if o in rec] + [y for y in ([region.block.last_op] if region.blocks else []) if y is not None]
            used: list[SSAValue] = []
            for o in kept:
                for v in outer_operands(o):
                    if v in defined and v not in used:
                        used.append(v)
            crossing.append(used)
        part.get(op.cond)
        for ops in branches:
            for o in ops:
                if o not in rec:
                    for v in outer_operands(o):
                        if not inside(v, op):
                            part.get(v)
        mapping = dict(part.mapping)
        blocks = []
        for side, ops in enumerate(branches):
            b = Block()
            for o in ops:
                if o in rec:
                    continue
                clone = o.clone(value_mapper=mapping)
                b.add_op(clone)
                for old, new in zip(o.results, clone.results):
                    mapping[old] = new
            yielded: list[SSAValue] = []
            for other, values in enumerate(crossing):
                yielded += branch_yields(b, values, mapping, computed=other == side)
            b.add_op(scf.YieldOp(*yielded))
            blocks.append(b)
        flat = [v for values in crossing for v in values]
        copy = scf.IfOp(part.get(op.cond), [v.type for v in flat], [blocks[0]], [blocks[1]])
        part.block.add_op(copy)
        part.own(flat, copy.results)

    def _recurrent_copy(self, op: scf.IfOp, part: Piece) -> None:
        """The `scf.if` with only its recurrence-reading ops; the rest come from the parallel copy."""
        rec = self.plan.recurrent
        kept = [o for r in (op.true_region, op.false_region) for o in r.block.ops if o in rec or isinstance(o, scf.YieldOp)]
        part.get(op.cond)
        for o in kept:
            for v in outer_operands(o):
                if not any(inside(v, k) for k in kept):
                    part.get(v)
        mapping = dict(part.mapping)
        blocks = []
        for region in (op.true_region, op.false_region):
            b = Block()
            for o in region.block.ops:
                if o in rec or isinstance(o, scf.YieldOp):
                    clone = o.clone(value_mapper=mapping)
                    b.add_op(clone)
                    for old, new in zip(o.results, clone.results):
                        mapping[old] = new
            blocks.append(b)
        copy = scf.IfOp(mapping[op.cond], [r.type for r in op.results], [blocks[0]], [blocks[1]])
        part.block.add_op(copy)
        part.own(op.results, copy.results)


def split_entry(module: ModuleOp, entry: str) -> list[func.FuncOp]:
    """Replace `@entry` in `module` by its four parts (see the module docstring); returns them."""
    fn = defined_function(module, entry, "split")
    return replace_function(module, fn, _Splitter(fn, partition(fn)).run())


@dataclass(frozen=True)
class FrameSplitPass(ModulePass):
    """cortex-frame-split{entry=l2_frame}: the entry becomes its delayed, parallel, recurrence and tail parts."""

    name = "cortex-frame-split"
    entry: str = DEFAULT_ENTRY

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split_entry(op, self.entry)
        op.verify()


__all__ = ["PART_ATTR", "FrameSplitError", "FrameSplitPass", "Partition", "check_splittable", "partition", "split_entry"]
