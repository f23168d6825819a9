"""Stage split: a pure function cut into one function per stage, so one frame's stages can run concurrently.

`split_stages(module, name)` replaces `@name` (a function with no state,
such as the frame split's `@f__parallel`) by `@name__s0`, `@name__s1`, ...:
one per op of its body in program order (constants and weights are cloned
where they are used, not given a function). An `scf.if` whose branches hold
several stages is cut like the frame split's blur gate: each stage gets its
own copy of the `scf.if` on the same condition, holding only its op, which
yields the values later stages read (zeros on the other branch); the last
copy also yields the original results. Each function carries
`cortex.split_args`/`cortex.split_results` keys: the original function's
own argument and result keys, and `stage:<k>` for values passed between
stages, from which a runner reads the dependency graph.

A stage is one op, or a run of consecutive ops that belong together
(`stage_groups`): ops carrying one `cortex.origin` (a decomposed stage, such
as scene change's blurs and elementwise algebra after
`cortex-decompose-scene-change`, stays one stage), and consecutive scalar ops
(the blur gate's median, products, maximum and comparison: microseconds each,
one stage with their consumer chain rather than a thread hand-off apiece).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ArrayAttr, ModuleOp, StringAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass

from cortex.dialects import abi
from cortex.dialects.traits import External
from cortex.passes.frame_split import (
    ARGS_ATTR,
    RESULTS_ATTR,
    FrameSplitError,
    _inside,
    _rematerialisable,
    defined_function,
    outer_operands,
    piece_function,
    replace_function,
    zero_of,
)


class _Stage:
    def __init__(self, name: str, owner: _StageSplitter):
        self.name, self.owner = name, owner
        self.block = Block()
        self.mapping: dict[SSAValue, SSAValue] = {}
        self.arg_keys: list[str] = []
        self.args: dict[str, SSAValue] = {}
        self.results: list[tuple[str, SSAValue]] = []

    def get(self, v: SSAValue) -> SSAValue:
        if v in self.mapping:
            return self.mapping[v]
        s = self.owner
        if isinstance(v, BlockArgument) and v.owner is s.block:
            local = self._arg(s.arg_keys[v.index], v)
        elif isinstance(v.owner, Operation) and _rematerialisable(v.owner):
            clone = v.owner.clone()
            self.block.add_op(clone)
            local = clone.results[0]
        else:
            home = s.home.get(v)
            if home is None:
                raise FrameSplitError(f"stage split: a value of '{getattr(v.owner, 'name', '?')}' is used before its stage")
            key = s.key(v)
            s.exports.setdefault(home, {})[key] = v
            local = self._arg(key, v)
        self.mapping[v] = local
        return local

    def _arg(self, key: str, original: SSAValue) -> SSAValue:
        if key not in self.args:
            a = self.block.insert_arg(original.type, len(self.block.args))
            a.name_hint = original.name_hint
            self.args[key] = a
            self.arg_keys.append(key)
        return self.args[key]


class _StageSplitter:
    def __init__(self, fn: func.FuncOp, prefix: str = ""):
        self.fn, self.prefix = fn, prefix
        if len(fn.body.blocks) != 1:
            raise FrameSplitError(f"@{fn.sym_name.data} has several blocks; the stage split needs one")
        self.block = fn.body.block
        self.arg_keys = _keys(fn, ARGS_ATTR, [f"input:{i}" for i in range(len(self.block.args))])
        self.result_keys = _keys(fn, RESULTS_ATTR, [f"output:{i}" for i in range(len(fn.function_type.outputs.data))])
        self.home: dict[SSAValue, str] = {}
        self.keys: dict[SSAValue, str] = {}
        self.exports: dict[str, dict[str, SSAValue]] = {}
        self.stages: list[_Stage] = []

    def key(self, v: SSAValue) -> str:
        return self.keys.setdefault(v, f"stage:{self.prefix}{len(self.keys)}")

    def new_stage(self) -> _Stage:
        stage = _Stage(f"s{len(self.stages)}", self)
        self.stages.append(stage)
        return stage

    def run(self) -> list[func.FuncOp]:
        ret = self.block.last_op
        if not isinstance(ret, func.ReturnOp):
            raise FrameSplitError(f"@{self.fn.sym_name.data} does not end with func.return")
        for group in stage_groups([op for op in list(self.block.ops)[:-1] if not _rematerialisable(op)]):
            op = group[0]
            if len(group) == 1 and isinstance(op, scf.IfOp) and len(stage_groups(_inner(op))) > 1:
                self._split_if(op)
            else:
                stage = self.new_stage()
                for op in group:
                    clone = _clone_into(stage, op)
                    for old, new in zip(op.results, clone.results):
                        stage.mapping[old] = new
                        self.home[old] = stage.name
        last = self.stages[-1] if self.stages else self.new_stage()
        last.results += [(k, last.get(v)) for k, v in zip(self.result_keys, ret.arguments)]
        return [self._function(s) for s in self.stages]

    def _split_if(self, op: scf.IfOp) -> None:
        """One copy of the `scf.if` per op of its branches; the last copy also yields the if's results."""
        groups = stage_groups(_inner(op))
        yields = [r.block.last_op for r in (op.true_region, op.false_region)]
        for k, group in enumerate(groups):
            stage = self.new_stage()
            owner = k == len(groups) - 1
            side = 0 if group[0].parent_region() is op.true_region else 1
            users = [u for later in groups[k + 1:] for u in later] + ([] if owner else yields)
            crossing = [r for o in group for r in o.results if any(v is r for u in users for v in outer_operands(u))]
            stage.get(op.cond)
            for o in group:
                for v in outer_operands(o):
                    if not any(_inside(v, g) for g in group):
                        stage.get(v)
            if owner:
                for y in yields:
                    for v in y.operands:
                        if not any(_inside(v, g) for g in group):
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
                for v in crossing:
                    if b == side:
                        out.append(mapping[v])
                    else:
                        z = zero_of(v.type)
                        block.add_op(z)
                        out.append(z.results[0])
                block.add_op(scf.YieldOp(*out))
                branches.append(block)
            types = ([r.type for r in op.results] if owner else []) + [v.type for v in crossing]
            copy = scf.IfOp(stage.mapping[op.cond], types, [branches[0]], [branches[1]])
            stage.block.add_op(copy)
            results = list(copy.results)
            if owner:
                for old, new in zip(op.results, results):
                    new.name_hint = old.name_hint
                    stage.mapping[old] = new
                    self.home[old] = stage.name
                results = results[len(op.results):]
            for old, new in zip(crossing, results):
                new.name_hint = old.name_hint
                stage.mapping[old] = new
                self.home[old] = stage.name

    def _function(self, stage: _Stage) -> func.FuncOp:
        return piece_function(self.fn, stage, self.exports.get(stage.name, {}))


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


def _inner(op: scf.IfOp) -> list[Operation]:
    """The non-constant ops of both branches (yields excluded), then-branch first."""
    return [o for r in (op.true_region, op.false_region) if r.blocks for o in r.block.ops
            if not isinstance(o, scf.YieldOp) and not _rematerialisable(o)]


def _clone_into(stage: _Stage, op: Operation) -> Operation:
    for v in outer_operands(op):
        stage.get(v)
    clone = op.clone(value_mapper=dict(stage.mapping))
    stage.block.add_op(clone)
    return clone


def _keys(fn: func.FuncOp, attr: str, default: list[str]) -> list[str]:
    keys = fn.attributes.get(attr)
    return [k.data for k in keys.data] if isinstance(keys, ArrayAttr) else default


def split_stages(module: ModuleOp, name: str, prefix: str = "") -> list[func.FuncOp]:
    """Replace `@name` by its stage functions (see the module docstring); returns them in order.

    `prefix` goes into the keys of the values passed between stages (`stage:<prefix><k>`), so the
    stages of two split functions (the delayed part and the parallel part) can share one graph."""
    fn = defined_function(module, name, "split into stages")
    return replace_function(module, fn, _StageSplitter(fn, prefix).run())


@dataclass(frozen=True)
class StageSplitPass(ModulePass):
    """cortex-stage-split{function=f}: @f becomes one function per stage (after cortex-frame-split, f = l2_frame__parallel)."""

    name = "cortex-stage-split"
    function: str = "l2_frame__parallel"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        split_stages(op, self.function)
        op.verify()


__all__ = ["StageSplitPass", "split_stages", "stage_groups"]
