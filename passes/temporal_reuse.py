"""`cortex-temporal-reuse`: carry f(g(frame n)) to frame n+1 instead of recomputing f(s) there.

A *delayed input* s (the state analysis, `classify_states`: its next value
g(frame) reads no state) holds, on frame n+1, exactly the value g took on
frame n. So any pure value f(s) computed from s alone equals f(g) of the
previous frame. When the frame also computes f(g) itself, this pass adds a
state that carries f(g) to the next frame and reads it where f(s) was:

    %y  = f(%prev_gray)           →   %y = cortex.state "prev_gray:f"      (f(s) is no longer computed)
    %x  = f(%gray)                    %x = f(%gray)
                                      cortex.update_state "prev_gray:f" = %x

The matching is structural (op names, properties, result types, operands,
the state read standing for its next value), never by name, so it works on
any pipeline with this shape; on the L2 pipeline after
`cortex-decompose-scene-change` it finds scene change's G(prev_gray) and
G(prev_gray²) (and the cast and μy² on the way), which frame n computed as
G(gray) and G(gray²).

Conditions, each checked from the IR:

- f reads s and nothing else that varies (constants and weights are the same
  every frame; a value that reads the frame, another state, a region op or an
  op with effects is not f(s));
- f is carried at its largest: a value is carried when some user of it is
  not itself a candidate (the rest of the chain then dies, DCE removes it);
- the blur gate: the state update must run on every frame, since s updates on
  every frame. When f(g) is computed inside an `scf.if` branch (the gated
  heavy stages), its ops are *hoisted* out in front of the `scf.if`: they
  then run on gated frames too (the extra cost of reuse on a blurred frame),
  and the carried value is right after any run of gated frames and after a
  scene cut (the equivalence tests run both). Hoisting needs only pure,
  region-free ops, which f is by the first condition;
- the initial value: states start at zeros (the runtimes' rule), so the new
  state's first value must be f(initial s) = f(zeros). The pass computes it at
  compile time with the reference interpreter and carries the value only
  when it is zeros (+0.0 everywhere, so the bits agree too); otherwise it
  says so and leaves f(s) alone (`cortex.state` has no initial value of its
  own today).

The new state is *derived* from s: it must equal f(s) for whatever s the
caller holds. Each carried value therefore also gets `Carried.derive`, the
function f of s alone (`@<entry>__derive__<k>`, outside the module), which
the driver compiles into the program (`Program.derived`): a runtime
recomputes the carried state with it when the caller assigns s (an edited
`prev_gray`, a state copied from another runner), and keeps the derived
states out of the caller's `state`.

The new state is itself a delayed input (its next value reads no state), so
the frame split sends its update to the delayed part and every engine stays
frame-parallel. `report=true` (cortex-opt's default) prints, per carried
value, what was carried, its next value, and what was hoisted, like the
frame split's state analysis; `cortex.compile` runs the pass silently and
keeps the report (`compiled.temporal_reuse`).
"""

from __future__ import annotations

import sys
from collections.abc import Hashable
from dataclasses import dataclass, field

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import is_side_effect_free
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.errors import CortexError
from cortex.passes.outlining import top_level
from cortex.passes.state_analysis import classify_states, entry_block

# ---------------------------------------------------------------- structural keys


def _pure_leaf_free(op: Operation) -> bool:
    """An op whose value is a function of its operands and properties alone (no regions, no effects)."""
    return not op.regions and is_side_effect_free(op) and not isinstance(op, StateOp)


class _Keys:
    """Structural keys of the values of one function: equal keys, equal values (within one frame)."""

    def __init__(self) -> None:
        self.memo: dict[tuple[SSAValue, str | None], Hashable] = {}

    def key(self, v: SSAValue, sub: tuple[str, Hashable] | None = None) -> Hashable:
        """`v`'s key; with `sub = (s, k)` the read of state s counts as a value of key k."""
        memo_key = (v, None if sub is None else sub[0])
        if memo_key in self.memo:
            return self.memo[memo_key]
        owner = v.owner
        result: Hashable
        if isinstance(v, BlockArgument) or not isinstance(owner, Operation):
            result = ("arg", id(v))
        elif isinstance(owner, StateOp):
            result = sub[1] if sub is not None and owner.state_name == sub[0] else ("state", owner.state_name, str(v.type))
        elif not _pure_leaf_free(owner):
            result = ("opaque", id(v))
        else:
            props = tuple(sorted((k, str(a)) for k, a in owner.properties.items()))
            result = (
                owner.name,
                props,
                tuple(str(r.type) for r in owner.results),
                v.index if hasattr(v, "index") else 0,
                tuple(self.key(o, sub) for o in owner.operands),
            )
        self.memo[memo_key] = result
        return result


def _reads(v: SSAValue, memo: dict[SSAValue, frozenset[str]]) -> frozenset[str]:
    """What `v` varies with: state names, or "*" for the frame, a region op, an effect."""
    if v in memo:
        return memo[v]
    owner = v.owner
    if isinstance(v, BlockArgument) or not isinstance(owner, Operation):
        out = frozenset({"*"})
    elif isinstance(owner, StateOp):
        out = frozenset({owner.state_name})
    elif not _pure_leaf_free(owner):
        out = frozenset({"*"})
    else:
        out = frozenset().union(*(_reads(o, memo) for o in owner.operands)) if owner.operands else frozenset()
    memo[v] = out
    return out


def _chain(v: SSAValue) -> list[Operation]:
    """The pure ops `v` is computed by (back to state reads, arguments and region results), in order."""
    seen: list[Operation] = []
    work = [v]
    while work:
        x = work.pop()
        owner = x.owner
        if isinstance(owner, Operation) and _pure_leaf_free(owner) and owner not in seen:
            seen.append(owner)
            work.extend(owner.operands)
    return _in_program_order(seen)


def _in_program_order(ops: list[Operation]) -> list[Operation]:
    if not ops:
        return []
    root = ops[0]
    while root.parent_op() is not None and not isinstance(root.parent_op(), func.FuncOp):
        root = root.parent_op()  # type: ignore[assignment]
    fn = root.parent_op()
    order = {op: i for i, op in enumerate(fn.walk())} if fn is not None else {}
    return sorted(ops, key=lambda op: order.get(op, 0))


def _label(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a result of {v.owner.name if isinstance(v.owner, Operation) else 'a block'}"


# ---------------------------------------------------------------- the plan


@dataclass
class Carried:
    """One value carried across frames: `value` (f(s)) becomes a read of `state`, updated with `next_value` (f(g))."""

    state: str
    source: str  # the delayed input s
    value: str  # label of f(s)
    next_value: str  # label of f(g)
    hoisted: list[str] = field(default_factory=list)  # labels of ops moved out of an scf.if
    derive: func.FuncOp | None = field(default=None, repr=False, compare=False)  # f: source → this state

    def describe(self) -> str:
        text = f"carried {self.value} = f('{self.source}') as state '{self.state}': its next value is {self.next_value}, f(the next '{self.source}')"
        if self.hoisted:
            text += f"; hoisted out of the blur gate's scf.if so it runs on every frame: {', '.join(self.hoisted)}"
        return text + "; first value f(zeros) = zeros"


@dataclass
class ReuseReport:
    function: str
    delayed: dict[str, str]  # delayed input → label of its next value
    carried: list[Carried] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"[temporal-reuse] @{self.function}"]
        if not self.delayed:
            lines.append("  no delayed input: nothing to carry")
        for s, nxt in self.delayed.items():
            lines.append(f"  '{s}': delayed input, next value {nxt}")
        for c in self.carried:
            lines.append(f"  {c.describe()}")
        for r in self.refused:
            lines.append(f"  not carried: {r}")
        if self.delayed and not self.carried and not self.refused:
            lines.append("  nothing computed from a delayed input is also computed from its next value: nothing carried")
        return "\n".join(lines)


def _initial_is_zero(fn: func.FuncOp, value: SSAValue) -> bool:
    """Whether f(initial s) — `value` with every state at its first value (zeros) — is +0.0 everywhere."""
    from cortex.interpreter.reference import ReferenceRunner  # the interpreter sits below the driver, not below passes

    chain = _chain(value)
    reads = {o.owner for o in (x for op in chain for x in op.operands) if isinstance(o.owner, StateOp)}
    block = Block()
    mapping: dict[SSAValue, SSAValue] = {}
    for read in reads:
        read_clone = read.clone()
        block.add_op(read_clone)
        mapping[read.result] = read_clone.result
    for op in chain:
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    block.add_op(func.ReturnOp(mapping[value]))
    probe = func.FuncOp("init", ((), (value.type,)), Region(block))
    module = ModuleOp([probe])
    weights = {op.state_name: 0.0 for op in chain if isinstance(op, WeightOp)}
    try:
        (result,) = ReferenceRunner(module, entry="init", mode=None, weights=weights or None)()
    except CortexError:
        return False
    array = np.asarray(result)
    return bool(np.all(array == 0) and not np.any(np.signbit(array)))


def _derive_function(value: SSAValue, symbol: str) -> func.FuncOp:
    """`value` = f(s) as a function of s alone (its state reads become the argument): what a runtime
    runs to recompute the carried state from a source the caller assigned."""
    chain = _chain(value)
    reads = [o for op in chain for o in op.operands if isinstance(o.owner, StateOp)]
    assert reads, "a carried value reads its source"
    block = Block(arg_types=[reads[0].type])
    block.args[0].name_hint = "source"
    mapping: dict[SSAValue, SSAValue] = dict.fromkeys(reads, block.args[0])
    for op in chain:
        clone = op.clone(value_mapper=mapping)
        block.add_op(clone)
        for old, new in zip(op.results, clone.results):
            mapping[old] = new
    block.add_op(func.ReturnOp(mapping[value]))
    return func.FuncOp(symbol, ((reads[0].type,), (value.type,)), Region(block))


def _new_name(base: str, taken: set[str]) -> str:
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}.{n}"
    taken.add(name)
    return name


def plan_and_apply(fn: func.FuncOp) -> ReuseReport:
    """Carry every value of `fn` that the module docstring's conditions allow; returns what was done."""
    try:
        block = entry_block(fn)
        classes = classify_states(fn)
    except CortexError as e:
        return ReuseReport(fn.sym_name.data, {}, refused=[f"no state analysis: {e}"])
    updates = {op.state_name: op for op in block.ops if isinstance(op, UpdateStateOp)}
    delayed = {n: updates[n].value for n, c in classes.items() if c.kind == "delayed" and n in updates}
    report = ReuseReport(fn.sym_name.data, {n: _label(v) for n, v in delayed.items()})
    if not delayed:
        return report
    keys = _Keys()
    reads: dict[SSAValue, frozenset[str]] = {}
    values: list[SSAValue] = [r for op in fn.walk() if op is not fn for r in op.results]
    by_key: dict[Hashable, SSAValue] = {}
    for v in values:
        by_key.setdefault(keys.key(v), v)
    candidates: dict[SSAValue, tuple[str, SSAValue]] = {}
    for v in values:
        owner = v.owner
        if not isinstance(owner, Operation) or not _pure_leaf_free(owner) or isinstance(owner, WeightOp):
            continue
        varies = _reads(v, reads)
        if len(varies) != 1:
            continue
        (s,) = varies
        if s not in delayed:
            continue
        match = by_key.get(keys.key(v, (s, keys.key(delayed[s]))))
        if match is not None and match is not v:
            candidates[v] = (s, match)
    chosen = [
        v for v in candidates
        if any(not u.operation.results or any(r not in candidates for r in u.operation.results) for u in v.uses)
    ]
    taken = {op.state_name for op in fn.walk() if isinstance(op, StateOp | UpdateStateOp)}
    ret = block.last_op
    assert ret is not None
    after: Operation | None = None
    # each f of its source alone, taken before any carried value replaces a read another chain goes through
    derives = {v: _derive_function(v, f"{fn.sym_name.data}__derive__{k}") for k, v in enumerate(chosen)}
    for v in chosen:
        s, match = candidates[v]
        assert isinstance(v.owner, Operation)
        if not _initial_is_zero(fn, v):
            report.refused.append(
                f"{_label(v)} = f('{s}'): its first value f(zeros) is not zero, and states start at zeros"
            )
            continue
        derive = derives[v]
        hoisted = _hoist(match, block)
        name = _new_name(f"{s}:{match.name_hint or 'value'}", taken)
        if after is None or not isinstance(after, StateOp):
            after = next(op for op in block.ops if isinstance(op, StateOp) and op.state_name == s)
        read = StateOp(name, v.type)
        Rewriter.insert_op(read, InsertPoint.after(after))
        after = read
        read.result.name_hint = v.name_hint
        v.replace_all_uses_with(read.result)
        Rewriter.insert_op(UpdateStateOp(name, match), InsertPoint.before(ret))
        report.carried.append(Carried(name, s, _label(read.result), _label(match),
                                      [_label(op.results[0]) if op.results else op.name for op in hoisted], derive))
    if report.carried:
        region_dce(fn.body)
    return report


def _hoist(value: SSAValue, block: Block) -> list[Operation]:
    """Move the ops computing `value` that sit inside a region op of `block` to just before that op."""
    if top_level(value, block) is value.owner:
        return []
    moved = []
    for op in _chain(value):
        if op.parent_block() is block:
            continue
        anchor = top_level(op.results[0], block)
        assert anchor is not None
        op.detach()
        Rewriter.insert_op(op, InsertPoint.before(anchor))
        moved.append(op)
    return moved


def temporal_reuse(module: ModuleOp, entry: str | None = None) -> list[ReuseReport]:
    """Apply the reuse to `@entry` (every function that reads a state when None); the reports."""
    reports = []
    for fn in list(module.ops):
        if not isinstance(fn, func.FuncOp) or fn.is_declaration:
            continue
        if entry is not None and fn.sym_name.data != entry:
            continue
        if entry is None and not any(isinstance(op, StateOp) for op in fn.walk()):
            continue
        reports.append(plan_and_apply(fn))
    if entry is not None and not reports:
        raise CortexError(f"cortex-temporal-reuse: no function '@{entry}'")
    return reports


@dataclass(frozen=True)
class TemporalReusePass(ModulePass):
    """cortex-temporal-reuse{entry= report=true}: carry f(next value) of delayed inputs as new states."""

    name = "cortex-temporal-reuse"
    entry: str = ""
    report: bool = True

    def apply_reporting(self, ctx: Context, op: ModuleOp) -> list[ReuseReport]:
        """What `apply` does, its reports returned instead of printed (`cortex.passes.reporting`)."""
        return temporal_reuse(op, self.entry or None)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        reports = self.apply_reporting(ctx, op)
        if self.report:
            for r in reports:
                print(r.render(), file=sys.stderr)
        op.verify()


__all__ = ["Carried", "ReuseReport", "TemporalReusePass", "temporal_reuse"]
