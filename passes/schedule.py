"""cortex-schedule{workers=N entry=E}: the stage graph, the states, the critical path and a schedule, printed.

An analysis (the module is left as it is), printed on stderr like the DCE
report. Everything is read from the IR: the stage graph is the def-use graph
of the entry's cortex ops (traced through arith and `scf.if`; an op under
the blur gate also depends on the gate's condition), with the state edges
that carry values to the next frame; the states are classified by
`cortex.passes.frame_split`; times are the `cortex.profile_ms` attributes
(run `cortex-profile` first; unmeasured ops count 0 ms and are flagged).

Two schedules over N workers:

- one frame, stages concurrent: greedy list scheduling of the stage graph
  (longest remaining path first) — the expected latency, never below the
  critical path;
- frame-parallel: the parallel part and the tail run for many frames at
  once on the workers, while the caller runs, in frame order, the delayed
  part (as each frame is read) and the recurrence (as each frame settles).
  The delayed part of frame n+1 runs on a worker, chained after frame n's
  (`cortex.runtime.engines.flight`), the recurrence on the caller in frame order: so
  a frame costs at least max(work / N, delayed, recurrence), the throughput
  bound (`ThroughputBound`). The bound with the delayed part on the caller,
  max(work / N, delayed + recurrence), is printed beside it.
"""

from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import BlockArgument, Operation, OpResult, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from cortex.deprecation import renamed_attributes
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.errors import CortexError, whole_number
from cortex.ir import function_named
from cortex.passes.frame_split import partition
from cortex.passes.outlining import FrameSplitError
from cortex.passes.profile import profile_ms
from cortex.passes.state_analysis import classify_states
from cortex.runtime.threads import MAX_WORKERS  # one bound for the schedule and the engines it plans for
from cortex.semantics.modes import DEFAULT_ENTRY


@dataclass
class StageNode:
    """One node of the stage graph the schedule plans: a cortex op, the stages it reads, its profiled cost."""

    op: Operation
    name: str
    ms: float | None
    inputs: list[StageNode] = field(default_factory=list)
    states: list[str] = field(default_factory=list)  # states this stage reads
    gated: bool = False  # under an scf.if
    part: str = "?"

    @property
    def cost(self) -> float:
        return self.ms or 0.0


def _stage_ops(fn: func.FuncOp) -> list[Operation]:
    return [op for op in fn.walk() if op.name.startswith("cortex.") and not isinstance(op, StateOp | UpdateStateOp | WeightOp)]


def _producers(v: SSAValue, stages: dict[Operation, StageNode], states: list[str]) -> list[StageNode]:
    """The stages `v` is computed from (through non-cortex ops and scf.if yields); state reads go to `states`."""
    if isinstance(v, BlockArgument):
        return []
    owner = v.owner
    if not isinstance(owner, Operation):
        return []
    if owner in stages:
        return [stages[owner]]
    if isinstance(owner, StateOp):
        if owner.state_name not in states:
            states.append(owner.state_name)
        return []
    values: list[SSAValue] = list(owner.operands)
    if isinstance(owner, scf.IfOp):
        for region in owner.regions:
            if region.blocks and isinstance(region.block.last_op, scf.YieldOp) and isinstance(v, OpResult):
                values.append(region.block.last_op.operands[v.index])
    found: list[StageNode] = []
    for u in values:
        for s in _producers(u, stages, states):
            if s not in found:
                found.append(s)
    return found


def stage_graph(fn: func.FuncOp) -> list[StageNode]:
    """The entry's cortex ops with their input stages, in program order."""
    stages: dict[Operation, StageNode] = {}
    for op in _stage_ops(fn):
        name = op.results[0].name_hint if op.results and op.results[0].name_hint else op.name.removeprefix("cortex.")
        stage = StageNode(op, name, profile_ms(op))
        for v in op.operands:
            for s in _producers(v, stages, stage.states):
                if s not in stage.inputs:
                    stage.inputs.append(s)
        parent = op.parent_op()
        while isinstance(parent, scf.IfOp):
            stage.gated = True
            for s in _producers(parent.cond, stages, stage.states):
                if s not in stage.inputs:
                    stage.inputs.append(s)
            parent = parent.parent_op()
        stages[op] = stage
    return list(stages.values())


def critical_path(stages: list[StageNode]) -> tuple[float, list[StageNode]]:
    """The longest chain of dependent stages (by cost) and its length in ms."""
    best: dict[int, tuple[float, list[StageNode]]] = {}
    for s in stages:  # program order is a topological order
        prev = max((best[id(i)] for i in s.inputs), key=lambda b: b[0], default=(0.0, []))
        best[id(s)] = (prev[0] + s.cost, [*prev[1], s])
    return max(best.values(), key=lambda b: b[0], default=(0.0, []))


def list_schedule(stages: list[StageNode], workers: int) -> tuple[float, list[list[StageNode]]]:
    """Greedy list scheduling on `workers`: (makespan, stages per worker in start order)."""
    users: dict[int, list[StageNode]] = {id(s): [] for s in stages}
    for s in stages:
        for i in s.inputs:
            users[id(i)].append(s)
    level: dict[int, float] = {}
    for s in reversed(stages):
        level[id(s)] = s.cost + max((level[id(u)] for u in users[id(s)]), default=0.0)
    waiting = {id(s): len(s.inputs) for s in stages}
    ready_at = {id(s): 0.0 for s in stages}
    order = {id(s): k for k, s in enumerate(stages)}
    ready = [(-level[id(s)], order[id(s)], s) for s in stages if not s.inputs]
    heapq.heapify(ready)
    free = [(0.0, w) for w in range(workers)]
    assigned: list[list[StageNode]] = [[] for _ in range(workers)]
    end = 0.0
    finish: dict[int, float] = {}
    while ready:
        _, _, s = heapq.heappop(ready)
        t, w = heapq.heappop(free)
        start = max(t, ready_at[id(s)])
        finish[id(s)] = start + s.cost
        end = max(end, finish[id(s)])
        assigned[w].append(s)
        heapq.heappush(free, (finish[id(s)], w))
        for u in users[id(s)]:
            waiting[id(u)] -= 1
            ready_at[id(u)] = max(ready_at[id(u)], finish[id(s)])
            if waiting[id(u)] == 0:
                heapq.heappush(ready, (-level[id(u)], order[id(u)], u))
    return end, assigned


def _entry(module: ModuleOp, entry: str) -> func.FuncOp:
    fn = function_named(module, entry)
    if fn is None:
        raise CortexError(f"no function '@{entry}' to schedule")
    return fn


def render_schedule(module: ModuleOp, entry: str, workers: int) -> str:
    fn = _entry(module, entry)
    stages = stage_graph(fn)
    lines = [f"[schedule] @{entry} on {workers} worker{'s' if workers != 1 else ''}"]
    split_error = None
    try:
        plan = partition(fn)
        classes = plan.classes
        for s in stages:
            top = s.op
            while (parent := top.parent_op()) is not fn and parent is not None:
                top = parent
            s.part = plan.part.get(top, "?")
            if top in plan.split_ifs:
                s.part = "recurrence" if s.op in plan.recurrent else "parallel"
    except FrameSplitError as e:
        split_error = str(e)
        classes = classify_states(fn) if "blocks" not in split_error else {}
    unmeasured = [s.name for s in stages if s.ms is None]
    width = max([len(s.name) for s in stages] + [12])
    lines.append("stage graph (← inputs; state values come from the previous frame):")
    for s in stages:
        sources = [i.name for i in s.inputs] + [f"state {n}" for n in s.states]
        gate = "  (under the blur gate)" if s.gated else ""
        ms = f"{s.ms:7.2f} ms" if s.ms is not None else "      ? ms"
        lines.append(f"  {s.name:<{width}} {ms}  [{s.part}]  ← {', '.join(sources) or 'the frame'}{gate}")
    by_op = {s.op: s for s in stages}
    for op in fn.body.block.ops:
        if isinstance(op, UpdateStateOp):
            found: list[str] = []
            names = [p.name for p in _producers(op.value, by_op, found)]
            via = names + [f"state {n}" for n in found]
            lines.append(f"  state {op.state_name} ⇢ next frame  ← {', '.join(via) or 'constants'}")
    lines.append("states:")
    for c in classes.values():
        kind = {"delayed": "delayed input", "leading": "leading recurrence", "recurrence": "recurrence",
                "read-only": "read-only"}[c.kind]
        lines.append(f"  {c.name}: {kind} — {c.reason}")
    if not classes:
        lines.append("  (none: every frame is independent)")
    total = sum(s.cost for s in stages)
    length, path = critical_path(stages)
    if unmeasured:
        lines.append(f"times: not measured for {', '.join(unmeasured)} (counted as 0 ms; run cortex-profile first)")
    lines.append(f"critical path (one frame): {' → '.join(s.name for s in path)} = {length:.2f} ms of {total:.2f} ms")
    makespan, assigned = list_schedule(stages, workers)
    lines.append(f"one frame, stages concurrent: expected latency {makespan:.2f} ms, sequential {total:.2f} ms"
                 + (f": {speed_up(total, makespan)}" if total > 0 else ""))
    for w, ss in enumerate(assigned):
        lines.append(f"  worker {w + 1}: {', '.join(s.name for s in ss) or '-'}")
    if split_error:
        lines.append(f"frame-parallel: not possible — {split_error}")
        return "\n".join(lines)
    parts = {p: sum(s.cost for s in stages if s.part == p) for p in ("delayed", "parallel", "recurrence", "tail")}
    lines.append("frame-parallel parts: " + ", ".join(f"{p} {ms:.2f} ms" for p, ms in parts.items()))
    if total > 0:
        rec, delayed = parts["recurrence"], parts["delayed"]
        lines.append(f"frame-parallel: recurrence {rec:.2f} ms = {100 * rec / total:.1f} % of the work, "
                     f"delayed part {delayed:.2f} ms = {100 * delayed / total:.1f} %")
        bound = ThroughputBound(total, delayed, rec, workers)
        on_caller = ThroughputBound(total, delayed, rec, workers, pipelined=False)
        lines.append(f"  throughput bound {1e3 / bound.frame_ms:.1f} frames/s = 1 frame per {bound.explain()} "
                     f"(limited by {bound.limit}; sequential {1e3 / total:.1f} frames/s, {total / bound.frame_ms:.2f}×): "
                     "the delayed part pipelined on the workers, chained frame to frame")
        lines.append(f"  with the delayed part on the caller: {1e3 / on_caller.frame_ms:.1f} frames/s = 1 frame per "
                     f"{on_caller.explain()} (limited by {on_caller.limit}; {total / on_caller.frame_ms:.2f}×)")
    return "\n".join(lines)


def speed_up(sequential_ms: float, concurrent_ms: float) -> str:
    """The latency gain said one way only: "1.45× faster (0.69 of the sequential time)"."""
    if concurrent_ms <= 0:
        return "no time measured"
    return f"{sequential_ms / concurrent_ms:.2f}× faster ({concurrent_ms / sequential_ms:.2f} of the sequential time)"


@dataclass(frozen=True)
class ThroughputBound:
    """The least time per frame of the frame-parallel engines, and which term sets it.

    Pipelined (the engines' way): every part runs on the `workers`, but the
    delayed part of frame n+1 follows frame n's (its leading recurrences) and
    the recurrence runs on the caller in frame order, so a frame costs at
    least max(work / N, delayed, recurrence). With the delayed part on the
    caller the caller's serial share is
    delayed + recurrence."""

    work_ms: float
    delayed_ms: float
    recurrence_ms: float
    workers: int
    pipelined: bool = True

    @property
    def terms(self) -> dict[str, float]:
        per_worker = {f"work/{self.workers}": self.work_ms / self.workers}
        if self.pipelined:
            return {**per_worker, "delayed": self.delayed_ms, "recurrence": self.recurrence_ms}
        return {**per_worker, "delayed + recurrence": self.delayed_ms + self.recurrence_ms}

    @property
    def frame_ms(self) -> float:
        return max(self.terms.values())

    @property
    def limit(self) -> str:
        name = max(self.terms, key=lambda k: self.terms[k])
        return f"{self.workers} workers" if name.startswith("work/") else (
            f"the {name} chain" if self.pipelined else "the caller's serial work")

    def explain(self) -> str:
        return f"max({', '.join(f'{k} {v:.2f} ms' for k, v in self.terms.items())}) = {self.frame_ms:.2f} ms"


class ScheduleError(PassFailedException):
    pass




@dataclass(frozen=True)
class SchedulePass(ModulePass):
    """Print the stage graph, state classes, critical path and N-worker schedule of the entry (IR unchanged)."""

    name = "cortex-schedule"
    workers: int = 2
    entry: str = DEFAULT_ENTRY

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            whole_number("workers", self.workers, 1, MAX_WORKERS)
        except CortexError as e:
            raise ScheduleError(str(e)) from None
        try:
            print(render_schedule(op, self.entry, self.workers), file=sys.stderr)
        except CortexError as e:
            raise ScheduleError(str(e)) from None


if not TYPE_CHECKING:  # the former name, for one release (`StageNode`; type checkers see only the new one)
    __getattr__ = renamed_attributes(__name__, {"Stage": "StageNode"})

__all__ = [
    "SchedulePass",
    "StageNode",
    "ThroughputBound",
    "critical_path",
    "list_schedule",
    "render_schedule",
    "speed_up",
    "stage_graph",
]
