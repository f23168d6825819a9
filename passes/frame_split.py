"""Frame split: which states are delayed inputs and which are recurrences, and the entry cut in four.

A state whose next value reads no state at all (the L2 pipeline's
`prev_gray = gray(frame)`) is a *delayed input*: frame n+1 can get it from
frame n directly, so every frame's heavy stages can run at once. A state
whose next value reads a state (`prev_score`, through `temporal_smooth` and
the blur gate; a frame counter; a running mean) is a *recurrence*: it must
be computed frame after frame. The classification reads the IR (backward
slices of the `cortex.update_state` values), never stage names.

`split_entry` rewrites `@f` into four pure functions (state reads become
arguments, state updates results):

- `@f__delayed(frame)`: the backward slice of the delayed inputs' next
  values (`gray`), and every value of that slice other parts use;
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

Each part carries `cortex.split_args` / `cortex.split_results`: one key per
argument and result, `input:<i>`, `state:<name>`, `update:<name>`,
`output:<i>` or `value:<k>` (a value one part hands to a later one), which is
how a runner wires them (`cortex.runtime.parts`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.dialects.tensor_ops import ConstantOp
from cortex.errors import CortexError

PARTS = ("delayed", "parallel", "recurrence", "tail")
PART_ATTR = "cortex.frame_split"
ARGS_ATTR = "cortex.split_args"
RESULTS_ATTR = "cortex.split_results"


class FrameSplitError(CortexError):
    """The entry cannot be cut into frame-parallel parts; the message says why."""


# ---------------------------------------------------------------- dependencies


def outer_operands(op: Operation) -> list[SSAValue]:
    """Operands of `op` and of the ops nested in it that are defined outside `op`."""
    values = list(op.operands)
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
            if owner is None or not op.is_ancestor(owner):
                values.append(v)
    return values


def top_level(value: SSAValue, block: Block) -> Operation | None:
    """The op of `block` that defines `value` (or contains its definition); None for a block argument."""
    if isinstance(value, BlockArgument) and value.owner is block:
        return None
    op = value.owner if isinstance(value.owner, Operation) else value.owner.parent_op()
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op


def backward_slice(values: Iterable[SSAValue], block: Block) -> list[Operation]:
    """Ops of `block` the `values` depend on (through nested regions too), in program order."""
    seen: set[Operation] = set()
    work = [op for v in values if (op := top_level(v, block)) is not None]
    while work:
        op = work.pop()
        if op in seen:
            continue
        seen.add(op)
        work.extend(d for v in outer_operands(op) if (d := top_level(v, block)) is not None)
    return [op for op in block.ops if op in seen]


def _label(op: Operation) -> str:
    if op.results and op.results[0].name_hint:
        return f"%{op.results[0].name_hint}"
    return op.name


# ---------------------------------------------------------------- classification


@dataclass(frozen=True)
class StateClass:
    name: str
    kind: str  # "delayed" | "leading" | "recurrence" | "read-only"
    reason: str


def _states(block: Block) -> tuple[dict[str, list[StateOp]], dict[str, list[UpdateStateOp]]]:
    reads: dict[str, list[StateOp]] = {}
    updates: dict[str, list[UpdateStateOp]] = {}
    for op in block.walk():
        if isinstance(op, StateOp):
            reads.setdefault(op.state_name, []).append(op)
        elif isinstance(op, UpdateStateOp):
            updates.setdefault(op.state_name, []).append(op)
    return reads, updates


def _state_readers(ops: list[Operation]) -> dict[str, list[str]]:
    """State name → the ops (at any depth in `ops`) that use its value."""
    readers: dict[str, list[str]] = {}
    for top in ops:
        for op in top.walk():
            for v in op.operands:
                if isinstance(v.owner, StateOp):
                    label = "the yield of an scf.if" if isinstance(op, scf.YieldOp) else op.name
                    names = readers.setdefault(v.owner.state_name, [])
                    if label not in names:
                        names.append(label)
    return readers


def entry_block(fn: func.FuncOp) -> Block:
    if len(fn.body.blocks) != 1:
        raise FrameSplitError(f"@{fn.sym_name.data} has {len(fn.body.blocks)} blocks; the frame split needs one")
    return fn.body.block


def classify_states(fn: func.FuncOp) -> dict[str, StateClass]:
    """Each state of `fn`: delayed input (its next value reads no state), leading or plain recurrence, or read-only."""
    block = entry_block(fn)
    reads, updates = _states(block)
    classes: dict[str, StateClass] = {}
    for name in [*reads, *(n for n in updates if n not in reads)]:
        if name not in updates:
            classes[name] = StateClass(name, "read-only", "never updated: every frame reads the value it starts with")
            continue
        value = updates[name][-1].value
        slice_ = backward_slice([value], block)
        read = sorted({op.state_name for op in slice_ if isinstance(op, StateOp)})
        chain = " ← ".join(_label(op) for op in reversed(slice_) if op.name.startswith("cortex.") and not isinstance(op, WeightOp))
        if not read:
            source = f"{chain} ← the frame" if chain else "inputs and constants only"
            classes[name] = StateClass(
                name, "delayed", f"its next value ({source}) reads no state: frame n+1 gets it from frame n alone"
            )
        else:
            readers = _state_readers([*slice_, updates[name][-1]])
            said = [f"'{n}' (in {', '.join(readers[n])})" for n in read]
            classes[name] = StateClass(
                name, "recurrence", f"its next value reads state {' and '.join(said)}: frame n needs frame n-1's result"
            )
    return _leading(block, updates, classes)


def _states_read(ops: Iterable[Operation]) -> set[str]:
    return {inner.state_name for op in ops for inner in op.walk() if isinstance(inner, StateOp)}


def _leading(block: Block, updates: dict[str, list[UpdateStateOp]], classes: dict[str, StateClass]) -> dict[str, StateClass]:
    """Recurrences a gate condition reads and that can run ahead, in order, as frames are read.

    A recurrence is *leading* when its next value's slice has no region op
    (no gated heavy stage) and reads only itself, delayed inputs, read-only
    states and other leading recurrences, and an `scf.if` condition reads it
    (directly or through another leading one). Running it ahead on the caller
    keeps the gate condition out of the recurrence part, so the gated heavy
    stages stay frame-parallel. Other recurrences (a counter, a running mean
    nothing gates on) stay in the recurrence part: moving them would gain nothing.
    """
    recurrent = {n for n, c in classes.items() if c.kind == "recurrence"}
    slices = {n: backward_slice([updates[n][-1].value], block) for n in recurrent}
    candidates = {n for n in recurrent if not any(op.regions for op in slices[n])}
    changed = True
    while changed:  # drop candidates that read a recurrence which cannot run ahead
        changed = False
        for n in sorted(candidates):
            if (_states_read(slices[n]) & recurrent) - candidates - {n}:
                candidates.discard(n)
                changed = True
    gates = [op for op in block.ops if isinstance(op, scf.IfOp)]
    leading = {n for op in gates for n in _states_read(backward_slice([op.cond], block)) if n in candidates}
    work = list(leading)
    while work:  # what a leading recurrence reads must run ahead too
        for n in _states_read(slices[work.pop()]) & candidates - leading:
            leading.add(n)
            work.append(n)
    for n in leading:
        chain = " ← ".join(_label(op) for op in reversed(slices[n]) if op.name.startswith("cortex.") and not isinstance(op, WeightOp))
        readers = [op.cond.owner for op in gates if n in _states_read(backward_slice([op.cond], block))]
        via = f"the gate condition {_label(readers[0])} reads it" if readers and isinstance(readers[0], Operation) \
            else "a leading recurrence reads it"
        classes[n] = StateClass(
            n, "leading",
            f"its next value ({chain}) reads only itself and the frame, never a gated stage, and {via}: "
            "it runs in order on the caller as frames are read, so the gated stages stay frame-parallel",
        )
    return classes


def check_splittable(fn: func.FuncOp) -> None:
    """A FrameSplitError when `fn` cannot be cut (and why)."""
    block = entry_block(fn)
    _, updates = _states(block)
    for name, group in updates.items():
        for op in group:
            if op.parent_block() is not block:
                raise FrameSplitError(
                    f"@{fn.sym_name.data}: state '{name}' is updated inside '{op.parent_op().name}'; "
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

    _, updates = _states(block)
    ahead = {n for n, c in classes.items() if c.kind in ("delayed", "leading")}  # run on the caller as frames are read
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
                and any(inner not in result.recurrent for b in (op.true_region, op.false_region) for inner in _branch_ops(b))
            ):
                result.split_ifs.add(op)
    return result


def _branch_ops(region) -> list[Operation]:
    if not region.blocks:
        return []
    return [op for op in region.block.ops if not isinstance(op, scf.YieldOp)]


# ---------------------------------------------------------------- building the parts


def zero_of(t: Attribute) -> Operation:
    """A constant zero of `t`: what a split `scf.if` yields on the branch that does not compute a value."""
    if isinstance(t, TensorType):
        return ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [0.0 if _is_float(t.element_type) else 0]))
    if _is_float(t):
        return arith.ConstantOp(FloatAttr(0.0, t))
    if isinstance(t, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, t))
    raise FrameSplitError(f"the frame split cannot make a placeholder of type {t}")


def _is_float(t: Attribute) -> bool:
    return t.name in ("f16", "f32", "f64", "bf16") if hasattr(t, "name") else False


def _rematerialisable(op: Operation) -> bool:
    """Cheap, operand-free ops (constants, weights) are cloned into each part that uses them."""
    return not op.operands and not op.regions and not isinstance(op, StateOp) and len(op.results) == 1


class _Part:
    def __init__(self, name: str, split: _Splitter):
        self.name, self.split = name, split
        self.ops: list[Operation] = []
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.block = Block()
        self.arg_keys: list[str] = []
        self.args: dict[str, SSAValue] = {}
        self.results: list[tuple[str, SSAValue]] = []

    def arg(self, key: str, original: SSAValue) -> SSAValue:
        if key not in self.args:
            a = self.block.insert_arg(original.type, len(self.block.args))
            a.name_hint = original.name_hint
            self.args[key] = a
            self.arg_keys.append(key)
        return self.args[key]

    def get(self, v: SSAValue) -> SSAValue:
        if v in self.mapping:
            return self.mapping[v]
        s = self.split
        owner = v.owner
        if isinstance(v, BlockArgument) and owner is s.block:
            local = self.arg(f"input:{v.index}", v)
        elif not isinstance(owner, Operation):
            raise FrameSplitError(f"the frame split cannot move a block argument of '{owner.parent_op().name}'")
        elif isinstance(owner, StateOp):
            local = self.arg(f"state:{owner.state_name}", v)
        elif _rematerialisable(owner):
            clone = owner.clone()
            self.block.add_op(clone)
            local = clone.results[0]
        else:
            home = s.home[v]
            s.exports.setdefault(home, {})[s.key(v)] = v
            local = self.arg(s.key(v), v)
        self.mapping[v] = local
        return local

    def add(self, op: Operation) -> Operation:
        for v in outer_operands(op):
            self.get(v)
        clone = op.clone(value_mapper=dict(self.mapping))
        self.block.add_op(clone)
        for old, new in zip(op.results, clone.results):
            self.mapping[old] = new
            self.split.home[old] = self.name
        return clone


class _Splitter:
    def __init__(self, fn: func.FuncOp, plan: Partition):
        self.fn, self.plan = fn, plan
        self.block = entry_block(fn)
        self.home: dict[SSAValue, str] = {}
        self.keys: dict[SSAValue, str] = {}
        self.exports: dict[str, dict[str, SSAValue]] = {}
        self.parts = {name: _Part(name, self) for name in PARTS}

    def key(self, v: SSAValue) -> str:
        return self.keys.setdefault(v, f"value:{len(self.keys)}")

    def run(self) -> list[func.FuncOp]:
        plan = self.plan
        for name in PARTS:
            part = self.parts[name]
            for op in self.block.ops:
                if op in plan.split_ifs and name == "parallel":
                    self._parallel_copy(op, part)
                if plan.part.get(op) != name or _rematerialisable(op):
                    continue  # constants and weights are cloned into each part that uses them
                if isinstance(op, UpdateStateOp):
                    part.results.append((f"update:{op.state_name}", part.get(op.value)))
                elif op in plan.split_ifs:
                    self._recurrent_copy(op, part)
                else:
                    part.add(op)
            if name == "tail":
                ret = self.block.last_op
                assert isinstance(ret, func.ReturnOp)
                part.results += [(f"output:{i}", part.get(v)) for i, v in enumerate(ret.arguments)]
        return [self._function(self.parts[name]) for name in PARTS]

    def _parallel_copy(self, op: scf.IfOp, part: _Part) -> None:
        """The recurrence-free ops of both branches under the same condition; yields what the other copy reads."""
        rec = self.plan.recurrent
        branches = [_branch_ops(op.true_region), _branch_ops(op.false_region)]
        crossing: list[list[SSAValue]] = []
        for region, ops in zip((op.true_region, op.false_region), branches):
            defined = {r for o in ops if o not in rec for r in o.results}
            kept = [o for o in ops if o in rec] + ([region.block.last_op] if region.blocks else [])
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
                        if not _inside(v, op):
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
                for v in values:
                    if other == side:
                        yielded.append(mapping[v])
                    else:
                        z = zero_of(v.type)
                        b.add_op(z)
                        yielded.append(z.results[0])
            b.add_op(scf.YieldOp(*yielded))
            blocks.append(b)
        flat = [v for values in crossing for v in values]
        copy = scf.IfOp(part.get(op.cond), [v.type for v in flat], [blocks[0]], [blocks[1]])
        part.block.add_op(copy)
        for old, new in zip(flat, copy.results):
            new.name_hint = old.name_hint
            part.mapping[old] = new
            self.home[old] = part.name

    def _recurrent_copy(self, op: scf.IfOp, part: _Part) -> None:
        """The `scf.if` with only its recurrence-reading ops; the rest come from the parallel copy."""
        rec = self.plan.recurrent
        kept = [o for r in (op.true_region, op.false_region) for o in r.block.ops if o in rec or isinstance(o, scf.YieldOp)]
        part.get(op.cond)
        for o in kept:
            for v in outer_operands(o):
                if not any(_inside(v, k) for k in kept):
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
        for old, new in zip(op.results, copy.results):
            new.name_hint = old.name_hint
            part.mapping[old] = new
            self.home[old] = part.name

    def _function(self, part: _Part) -> func.FuncOp:
        return piece_function(self.fn, part, self.exports.get(part.name, {}), {PART_ATTR: StringAttr(part.name)})


def piece_function(source: func.FuncOp, piece, exports: dict, tags: dict[str, Attribute] | None = None) -> func.FuncOp:
    """`piece` (a part here, a stage in stage_split) as `@source__name`, with attributes `tags` first.

    It returns its exports, then its own results; ARGS_ATTR and RESULTS_ATTR
    name each argument and result, which is how the runtimes wire pieces.
    """
    results = [*((k, piece.get(v)) for k, v in exports.items()), *piece.results]
    piece.block.add_op(func.ReturnOp(*(v for _, v in results)))
    name = f"{source.sym_name.data}__{piece.name}"
    fn = func.FuncOp(name, ([a.type for a in piece.block.args], [v.type for _, v in results]), Region(piece.block))
    fn.attributes.update(tags or {})
    fn.attributes[ARGS_ATTR] = ArrayAttr([StringAttr(k) for k in piece.arg_keys])
    fn.attributes[RESULTS_ATTR] = ArrayAttr([StringAttr(k) for k, _ in results])
    return fn


def _inside(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined by `op` or inside it."""
    owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
    return owner is not None and op.is_ancestor(owner)


def defined_function(module: ModuleOp, name: str, purpose: str) -> func.FuncOp:
    """`@name` of `module` with a body; a FrameSplitError saying what it was wanted for otherwise."""
    fn = next((op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name), None)
    if fn is None or fn.is_declaration:
        raise FrameSplitError(f"no function '@{name}' to {purpose}")
    return fn


def replace_function(module: ModuleOp, fn: func.FuncOp, parts: list[func.FuncOp]) -> list[func.FuncOp]:
    """`parts` where `fn` stood in `module` (in order), `fn` gone; returns `parts`."""
    for part in parts:
        module.body.block.insert_op_before(part, fn)
    module.body.block.erase_op(fn)
    return parts


def split_entry(module: ModuleOp, entry: str) -> list[func.FuncOp]:
    """Replace `@entry` in `module` by its four parts (see the module docstring); returns them."""
    fn = defined_function(module, entry, "split")
    return replace_function(module, fn, _Splitter(fn, partition(fn)).run())


@dataclass(frozen=True)
class FrameSplitPass(ModulePass):
    """cortex-frame-split{entry=l2_frame}: the entry becomes its delayed, parallel, recurrence and tail parts."""

    name = "cortex-frame-split"
    entry: str = "l2_frame"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split_entry(op, self.entry)
        op.verify()


__all__ = [
    "ARGS_ATTR",
    "PARTS",
    "PART_ATTR",
    "RESULTS_ATTR",
    "FrameSplitError",
    "FrameSplitPass",
    "StateClass",
    "backward_slice",
    "classify_states",
    "defined_function",
    "partition",
    "piece_function",
    "replace_function",
    "split_entry",
]
