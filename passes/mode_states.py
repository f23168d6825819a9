"""Named states across modes: which states a mode's DCE leaves unread, and what a multi-mode program does then.

A state is *live* in a function when its value reaches an output: read by an op the results depend on,
or by the update of another live state (a fixed point, so a recurrence that feeds only itself is live
only if something live reads it). Mode specialisation can make a state dead: `power_save` zeroes the
weight of the only term that reads `prev_gray`, and its update is then work nobody uses.
`cortex-drop-unread-states` removes such updates (after `cortex-specialize-weights`, canonicalize, dce),
so a single-mode program does not pay for them. A state that is not live even in the unspecialised
function (a frame counter nothing reads) is the caller's to inspect and is never dropped.

One program for several modes (`CompileOptions(modes=...)`) shares its named states between variants,
so a state that one mode reads but another's DCE would stop updating must still be right when the
reading mode comes back. `states_across_modes` decides per state, from the state analysis
(`cortex.passes.state_analysis`):

- "recompute": a delayed input (its next value reads no state: `prev_gray = gray(frame)`): the variants
  that do not read it drop its update, and the runtime recomputes it from the previous frame when a
  reading mode follows one that did not update it (cheaper than paying for it every frame);
- "keep": a recurrence (its next value reads a state): it cannot be recomputed from one frame, so its
  update stays alive in every variant (with whatever it reads).

`cortex-mode-states{modes="balanced,power_save"}` prints the decisions (`[mode_states] ...`) and marks
each `cortex.update_state` it concerns with `cortex.across_modes`: what `cortex-opt` shows.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects.state import StateOp, UpdateStateOp
from cortex.errors import CortexError
from cortex.passes.canonicalize import canonicalize
from cortex.passes.outlining import backward_slice
from cortex.passes.specialize_mode import SpecializeModeError, specialize_weights
from cortex.passes.state_analysis import classify_states
from cortex.semantics.modes import INPUT_DEFAULTS, load_modes, mode_weights

REPORT_PREFIX = "[mode_states]"
ATTRIBUTE = "cortex.across_modes"


def _functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration]


def live_states(fn: func.FuncOp, keep: Iterable[str] = ()) -> set[str]:
    """The states of `fn` whose value reaches its results (see the module doc); `keep`'s count as live."""
    block = fn.body.block
    updates: dict[str, list[UpdateStateOp]] = {}
    for op in block.walk():
        if isinstance(op, UpdateStateOp):
            updates.setdefault(op.state_name, []).append(op)
    returns = [op for op in block.ops if isinstance(op, func.ReturnOp)]
    live = set(keep)
    roots = [v for r in returns for v in r.operands] + [u.value for n in live for u in updates.get(n, [])]
    while True:
        slice_ = backward_slice(roots, block)
        read = {inner.state_name for op in slice_ for inner in op.walk() if isinstance(inner, StateOp)}
        # an update inside an scf.if counts through the region op: its condition and values are in the slice
        grown = live | read
        if grown == live:
            return live
        roots += [u.value for n in grown - live for u in updates.get(n, [])]
        live = grown


def updated_states(fn: func.FuncOp) -> set[str]:
    return {op.state_name for op in fn.walk() if isinstance(op, UpdateStateOp)}


def drop_unread_states(module: ModuleOp, candidates: Iterable[str], keep: Iterable[str] = ()) -> list[str]:
    """Remove the updates of the states in `candidates` that are not live (nor in `keep`) in their function,
    then what only they used; in place. The names dropped, sorted."""
    candidates, dropped = set(candidates), set()
    for fn in _functions(module):
        live = live_states(fn, keep)
        for op in list(fn.walk()):
            if isinstance(op, UpdateStateOp) and op.state_name in candidates and op.state_name not in live:
                dropped.add(op.state_name)
                op.detach()
                op.erase()
        region_dce(fn.body)
    return sorted(dropped)


def source_live_states(module: ModuleOp) -> set[str]:
    """The states live in some function of the unspecialised `module`: the only ones a mode may drop."""
    return set().union(*(live_states(fn) & updated_states(fn) for fn in _functions(module)))


@dataclass(frozen=True)
class StateAcrossModes:
    """One state a mode's DCE leaves unread: the modes that read it, its class, and the decision."""

    name: str
    kind: str  # the state analysis's class
    readers: tuple[str, ...]
    others: tuple[str, ...]  # the modes that do not read it
    decision: str  # "recompute" or "keep"

    def line(self) -> str:
        why = ("a delayed input: recomputed from the previous frame on a switch to a reading mode"
               if self.decision == "recompute" else
               f"a {self.kind} state cannot be recomputed from one frame: its update is kept alive in every variant")
        return (f"{REPORT_PREFIX} state '{self.name}': read by {', '.join(self.readers)}, not by "
                f"{', '.join(self.others)} -> {self.decision} ({why})")


def specialised_copy(module: ModuleOp, row: Mapping[str, float]) -> ModuleOp:
    """A copy of `module` with `row`'s weights baked in, canonicalised and DCE'd (what a variant starts from)."""
    work = module.clone()
    specialize_weights(work, {k: float(v) for k, v in row.items() if k not in INPUT_DEFAULTS})
    canonicalize(work)
    region_dce(work.body)
    return work


def states_across_modes(module: ModuleOp, entry: str, rows: Mapping[str, Mapping[str, float]]) -> dict[str, StateAcrossModes]:
    """The decision for every state of `@entry` some mode reads and another's DCE would stop updating
    (see the module doc), from the weight rows of the modes, in order."""
    fn = next((f for f in _functions(module) if f.sym_name.data == entry), None)
    if fn is None:
        raise CortexError(f"no function '@{entry}' in the module")
    candidates = source_live_states(ModuleOp([fn.clone()]))
    classes = classify_states(fn)
    variants = {m: next(f for f in _functions(specialised_copy(module, row)) if f.sym_name.data == entry)
                for m, row in rows.items()}
    keep: set[str] = set()
    while True:
        live = {m: live_states(f, keep) & candidates for m, f in variants.items()}
        partial = {s for s in candidates if 0 < sum(s in live[m] for m in rows) < len(rows)}
        grown = keep | {s for s in partial if classes[s].kind != "delayed"}
        if grown == keep:
            break
        keep = grown
    decisions: dict[str, StateAcrossModes] = {}
    for s in sorted(partial | keep):
        readers = tuple(m for m in rows if s in live[m] and (s not in keep or s in live_states(variants[m])))
        others = tuple(m for m in rows if m not in readers)
        decisions[s] = StateAcrossModes(s, classes[s].kind, readers, others, "keep" if s in keep else "recompute")
    return decisions


def mode_rows(modes: str, table: str | None = None) -> dict[str, dict[str, float]]:
    """`"balanced,power_save"` (or "all") as each mode's weight row of the table."""
    known = load_modes(table)
    names = list(known) if modes.strip() == "all" else [m.strip() for m in modes.split(",") if m.strip()]
    if not names:
        raise SpecializeModeError("no modes given (use modes=\"balanced,power_save\" or modes=all)")
    try:
        return {m: mode_weights(m, known) for m in names}
    except ValueError as e:
        raise SpecializeModeError(str(e)) from None


@dataclass(frozen=True)
class DropUnreadStatesPass(ModulePass):
    """`cortex-drop-unread-states{states="a,b" keep="c"}`: drop the updates of the states of `states` no output
    depends on any more (after mode specialisation), except `keep`'s (see the module doc)."""

    name = "cortex-drop-unread-states"

    states: str = ""
    keep: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = [s.strip() for s in self.states.split(",") if s.strip()]
        drop_unread_states(op, names, [s.strip() for s in self.keep.split(",") if s.strip()])


@dataclass(frozen=True)
class ModeStatesPass(ModulePass):
    """`cortex-mode-states{modes="balanced,power_save" entry=...}`: report and mark what a multi-mode program
    does with each state one mode reads and another would stop updating (see the module doc)."""

    name = "cortex-mode-states"

    modes: str = "all"
    entry: str = ""
    table: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rows = mode_rows(self.modes, self.table)
        for fn in _functions(op):
            if self.entry and fn.sym_name.data != self.entry:
                continue
            decisions = states_across_modes(op, fn.sym_name.data, rows)
            for d in decisions.values():
                print(d.line(), file=sys.stderr)
            for update in fn.walk():
                if isinstance(update, UpdateStateOp) and update.state_name in decisions:
                    d = decisions[update.state_name]
                    update.attributes[ATTRIBUTE] = StringAttr(f"{d.decision}; read by {', '.join(d.readers)}")


def report_lines(decisions: Mapping[str, StateAcrossModes], dropped: Mapping[str, list[str]]) -> list[str]:
    """The DCE report of a multi-mode compile: per mode the states its variant does not update, then
    the decision per state."""
    lines = [f"[dead_node_elimination] mode {m}: state update{'s' if len(d) > 1 else ''} dropped: {d}"
             for m, d in dropped.items() if d]
    return lines + [d.line() for d in decisions.values()]


__all__ = [
    "ATTRIBUTE",
    "DropUnreadStatesPass",
    "ModeStatesPass",
    "StateAcrossModes",
    "drop_unread_states",
    "live_states",
    "mode_rows",
    "report_lines",
    "source_live_states",
    "specialised_copy",
    "states_across_modes",
]
