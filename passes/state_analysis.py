"""Which states are delayed inputs and which are recurrences: the analysis every scheduler relies on.

A state whose next value reads no state at all (the L2 pipeline's
`prev_gray = gray(frame)`) is a *delayed input*: frame n+1 can get it from
frame n directly, so every frame's heavy stages can run at once. A state
whose next value reads a state (`prev_score`, through `temporal_smooth` and
the blur gate; a frame counter; a running mean) is a *recurrence*: it must
be computed frame after frame. A recurrence a gate condition reads, whose
slice holds no gated stage, is *leading*: it can run ahead, in order, as
frames are read. A state never updated is *read-only*. The classification
reads the IR (backward slices of the `cortex.update_state` values), never
stage names. The frame split (`frame_split`), the schedule report
(`schedule`) and the compiled program's state layout read it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import func, scf
from xdsl.ir import Block, Operation

from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.passes.outlining import backward_slice, only_block

STATE_KINDS = ("delayed", "leading", "recurrence", "read-only")


@dataclass(frozen=True)
class StateClass:
    name: str
    kind: str  # one of STATE_KINDS
    reason: str


def entry_block(fn: func.FuncOp) -> Block:
    return only_block(fn, "the frame split")


def states_of(block: Block) -> tuple[dict[str, list[StateOp]], dict[str, list[UpdateStateOp]]]:
    """State name → its reads, and → its updates, at any depth of `block`."""
    reads: dict[str, list[StateOp]] = {}
    updates: dict[str, list[UpdateStateOp]] = {}
    for op in block.walk():
        if isinstance(op, StateOp):
            reads.setdefault(op.state_name, []).append(op)
        elif isinstance(op, UpdateStateOp):
            updates.setdefault(op.state_name, []).append(op)
    return reads, updates


def _label(op: Operation) -> str:
    if op.results and op.results[0].name_hint:
        return f"%{op.results[0].name_hint}"
    return op.name


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


def classify_states(fn: func.FuncOp) -> dict[str, StateClass]:
    """Each state of `fn`: delayed input (its next value reads no state), leading or plain recurrence, or read-only."""
    block = entry_block(fn)
    reads, updates = states_of(block)
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
            "it runs in frame order ahead of the gated stages (chained on the workers), so they stay frame-parallel",
        )
    return classes


__all__ = ["STATE_KINDS", "StateClass", "classify_states", "entry_block", "states_of"]
