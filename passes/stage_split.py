"""Stage split: a pure function cut into one function per stage, so one frame's stages can run concurrently.

`split_stages(module, name)` replaces `@name` (a function with no state,
such as the frame split's `@f__parallel`) by `@name__s0`, `@name__s1`, ...:
one per op of its body in program order (constants and weights are cloned
where they are used, not given a function). An `scf.if` whose branches hold
several stages is cut like the frame split's blur gate: each stage gets its
own copy of the `scf.if` on the same condition, holding only its op, which
yields the values later stages read (zeros on the other branch); the last
copy also yields the original results. Built on the outlining toolkit
(`outlining`): each function carries the original function's own argument
and result keys (`cortex.split_args`/`cortex.split_results`), and
`stage:<k>` for values passed between stages, from which a runner reads the
dependency graph.

Each result of `@name` leaves from the stage that computes it (not through
the last stage), so what reads it waits for that stage only. The driver
cuts the frame split's delayed part the same way (`value_kind="ahead"`:
its values cross as `ahead:k`), so that one call runs both parts' stages
as one dependency graph (`cortex.runtime.threads.run_stages`): the L2
frame's reused blurs of gray, which only the next frame reads, run beside
text_roi instead of before it.

A stage is one op, or a run of consecutive ops that belong together
(`stage_groups`): ops carrying one `cortex.origin` (a decomposed stage, such
as scene change's blurs and elementwise algebra after
`cortex-decompose-scene-change`, stays one stage), and consecutive scalar ops
(the blur gate's median, products, maximum and comparison: microseconds each).
A top-level run of scalar ops that later stages read is no stage at all: it
is grouped with its consumers, each of which computes it itself, so the gated stages start at once instead of after a gate stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from cortex.dialects import abi
from cortex.dialects.abi import SPLIT_ARGS, SPLIT_RESULTS, STAGE_KINDS, wire
from cortex.dialects.traits import External
from cortex.passes.outlining import (
    FrameSplitError,
    Outliner,
    Piece,
    branch_yields,
    defined_function,
    inside,
    only_block,
    outer_operands,
    rematerialisable,
    replace_function,
    split_keys,
)


class _StageSplitter(Outliner):
    purpose = "the stage split"

    def __init__(self, fn: func.FuncOp, value_kind: str = "stage"):
        super().__init__(fn)
        self.value_kind = value_kind
        self.block = only_block(fn, "the stage split")
        self.arg_keys = split_keys(fn, SPLIT_ARGS) or [wire("input", i) for i in range(len(self.block.args))]
        outputs = len(fn.function_type.outputs.data)
        self.result_keys = split_keys(fn, SPLIT_RESULTS) or [wire("output", i) for i in range(outputs)]
        self.stages: list[Piece] = []
        self.inlined: set[Operation] = set()  # top-level scalar ops each consuming stage computes itself

    def clones(self, op: Operation) -> bool:
        return op in self.inlined

    def argument_key(self, v: SSAValue) -> str | None:
        if isinstance(v, BlockArgument) and v.owner is self.block:
            return self.arg_keys[v.index]
        return None

    def new_stage(self) -> Piece:
        stage = Piece(f"s{len(self.stages)}", self)
        self.stages.append(stage)
        return stage

    def run(self) -> list[func.FuncOp]:
        ret = self.block.last_op
        if not isinstance(ret, func.ReturnOp):
            raise FrameSplitError(f"@{self.fn.sym_name.data} does not end with func.return")
        groups = stage_groups([op for op in list(self.block.ops)[:-1] if not rematerialisable(op)])
        for k, group in enumerate(groups):
            if _with_consumers(group, groups[k + 1:]):
                self.inlined.update(group)
                continue
            op = group[0]
            if len(group) == 1 and isinstance(op, scf.IfOp) and len(stage_groups(_inner(op))) > 1:
                self._split_if(op)
            else:
                stage = self.new_stage()
                for op in group:
                    stage.add(op)
        by_name = {s.name: s for s in self.stages}
        last = self.stages[-1] if self.stages else self.new_stage()
        for key, v in zip(self.result_keys, ret.arguments):
            # each result leaves from the stage that computes it, so what reads it waits for that stage only
            home = by_name.get(self.home.get(v, ""), last)
            home.results.append((key, home.get(v)))
        return [self.function(s) for s in self.stages]

    def _split_if(self, op: scf.IfOp) -> None:
        """One copy of the `scf.if` per op of its branches; the last copy also yields the if's results."""
        groups = stage_groups(_inner(op))
        yields = [_yield_of(r.block) for r in (op.true_region, op.false_region)]
        for k, group in enumerate(groups):
            stage = self.new_stage()
            owner = k == len(groups) - 1
            side = 0 if group[0].parent_region() is op.true_region else 1
            users = [u for later in groups[k + 1:] for u in later] + ([] if owner else yields)
            crossing = [r for o in group for r in o.results if any(v is r for u in users for v in outer_operands(u))]
            stage.get(op.cond)
            for o in group:
                for v in outer_operands(o):
                    if not any(inside(v, g) for g in group):
                        stage.get(v)
            if owner:
                for y in yields:
                    for v in y.operands:
                        if not any(inside(v, g) for g in group):
                            stage.get(v)
            mapping = dict(stage.mapping)
            branches = []
            for b in (0, 1):
                block = Block()
                if b == side:
                    for o in group:
                        clone = o.clone(value_mapper=mapping)
                        block.add_op(clone)
                        mapping.update(zip(o.results, clone.results))
                out: list[SSAValue] = []
                if owner:
                    out += [mapping.get(v, v) for v in yields[b].operands]
                out += branch_yields(block, crossing, mapping, computed=b == side)
                block.add_op(scf.YieldOp(*out))
                branches.append(block)
            types = ([r.type for r in op.results] if owner else []) + [v.type for v in crossing]
            copy = scf.IfOp(stage.mapping[op.cond], types, [branches[0]], [branches[1]])
            stage.block.add_op(copy)
            results = list(copy.results)
            if owner:
                stage.own(op.results, results)
                results = results[len(op.results):]
            stage.own(crossing, results)


def _yield_of(block: Block) -> scf.YieldOp:
    last = block.last_op
    assert isinstance(last, scf.YieldOp), "an scf.if branch ends with scf.yield"
    return last


def _group_key(op: Operation) -> tuple[str, ...] | None:
    """What `op` shares a stage with, if anything: its origin, or being a scalar op."""
    origin = op.attributes.get(abi.ORIGIN)
    if isinstance(origin, StringAttr):
        return ("origin", origin.data)
    if (op.results and not op.regions and not op.has_trait(External)
            and not any(isinstance(r.type, TensorType) for r in op.results)
            and all(_small(v.type) for v in op.operands)):
        return ("scalar",)
    return None


SMALL_ELEMENTS = 4096
"""A scalar op reading tensors of at most this many elements (the sharpness window's median) is cheap."""


def _small(t: object) -> bool:
    if not isinstance(t, TensorType):
        return True
    shape = t.get_shape()
    return all(d >= 0 for d in shape) and math.prod(shape) <= SMALL_ELEMENTS


def stage_groups(ops: list[Operation]) -> list[list[Operation]]:
    """`ops` (in program order) cut into stages: runs of consecutive ops with one group key, else one op each.

    A run never mixes the two branches of an `scf.if`."""
    groups: list[list[Operation]] = []
    last: tuple[str, ...] | None = None
    for op in ops:
        key = _group_key(op)
        if groups and key is not None and key == last and op.parent_region() is groups[-1][-1].parent_region():
            groups[-1].append(op)
        else:
            groups.append([op])
        last = key
    return groups


def _with_consumers(group: list[Operation], later: list[list[Operation]]) -> bool:
    """Whether `group` (top-level ops) is a run of scalar ops a later stage reads: then each stage that
    reads it computes it itself (the blur gate's median, product, maximum and comparison: microseconds,
    where a stage of their own cost a thread hand-off and a dependency level before every gated stage)."""
    if _group_key(group[0]) != ("scalar",):
        return False
    results = {r for op in group for r in op.results}
    return any(v in results for g in later for op in g for v in outer_operands(op))


def _inner(op: scf.IfOp) -> list[Operation]:
    """The non-constant ops of both branches (yields excluded), then-branch first."""
    return [o for r in (op.true_region, op.false_region) if r.blocks for o in r.block.ops
            if not isinstance(o, scf.YieldOp) and not rematerialisable(o)]


def split_stages(module: ModuleOp, name: str, value_kind: str = "stage") -> list[func.FuncOp]:
    """Replace `@name` by its stage functions (see the module docstring); returns them in order.

    `value_kind`: the wiring kind of values handed between them (`stage:k`; `ahead:k` for the
    delayed part's stages, whose keys share one frame's wiring with the parallel part's)."""
    fn = defined_function(module, name, "split into stages")
    return replace_function(module, fn, _StageSplitter(fn, value_kind).run())


@dataclass(frozen=True)
class StageSplitPass(ModulePass):
    """cortex-stage-split{function=f value-kind=k}: @f becomes one function per stage (after cortex-frame-split,
    f = l2_frame__parallel; or l2_frame__delayed with value-kind=ahead, as the driver cuts it)."""

    name = "cortex-stage-split"
    function: str = "l2_frame__parallel"
    value_kind: str = "stage"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.value_kind not in STAGE_KINDS:
            raise FrameSplitError(f"value-kind must be one of {', '.join(STAGE_KINDS)}, got '{self.value_kind}'")
        split_stages(op, self.function, self.value_kind)
        op.verify()


__all__ = ["StageSplitPass", "split_stages", "stage_groups"]
