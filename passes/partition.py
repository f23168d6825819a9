"""cortex-partition: outline compilable regions into compiled functions (BYOC).

TVM's "bring your own codegen" split, in MLIR terms. Within every block of
every function, maximal dataflow-connected groups of compilable ops
(`op_kind(op) == "compilable"`) are outlined into private `func.func`s
marked `cortex.compiled` and replaced by a `func.call`; external (OpenCV)
ops and frame-boundary ops (state, update_state, weight) stay in the caller,
between the calls. Constants are not grouped: they are cloned into every
piece that uses them (as MLIR's outlining passes sink constants), so a piece
never receives a constant as an argument.

Grouping must never create a cycle between pieces: if a compilable op feeds
an external op that feeds another compilable op, the two cannot share a
piece, because the call would need the external's result before producing
its input. Groups are grown greedily along def-use edges in program order,
and two groups merge only when no path leads from one to the other through
a third node of the contracted graph, which keeps the contracted graph a
DAG. Ops with unknown or write effects are chained in their original order
so that no schedule reorders them. The block is then rebuilt in a
topological order of the contracted graph (stable: ties keep program order).

A group whose results nothing uses (dead code) is left in place for DCE
rather than turned into an unremovable call. An op with regions that is
not compilable as a whole (the L2 pipeline's `scf.if`, whose else-branch
calls OpenCV) stays where it is, and each block of its regions is
partitioned on its own. Running the pass again changes nothing: calls to
pieces are never outlined again.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, UnitAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import ConstantLike, IsTerminator, SymbolTable, is_side_effect_free

from cortex.dialects import abi
from cortex.dialects.traits import op_kind

COMPILED_ATTR = "cortex.compiled"
"""Unit attribute on a `func.func` that holds one outlined compilable piece."""


def is_compiled_function(op: Operation) -> bool:
    return isinstance(op, func.FuncOp) and COMPILED_ATTR in op.attributes


def compiled_callee(op: Operation) -> func.FuncOp | None:
    """The compiled function `op` calls, if `op` is a call to one."""
    if not isinstance(op, func.CallOp):
        return None
    callee = SymbolTable.lookup_symbol(op, op.callee)
    return callee if isinstance(callee, func.FuncOp) and is_compiled_function(callee) else None


def is_constant(op: Operation) -> bool:
    return op.has_trait(ConstantLike) and not op.operands and not op.regions


def is_candidate(op: Operation, symbols: dict[str, Operation]) -> bool:
    """An op that may be outlined into a compiled piece (`symbols`: the module's, by name)."""
    if op.has_trait(IsTerminator) or is_constant(op):
        return False
    if isinstance(op, func.CallOp):  # a call to a defined function that is neither an extern nor a piece
        callee = symbols.get(op.callee.root_reference.data)
        return (
            isinstance(callee, func.FuncOp)
            and not callee.is_declaration
            and abi.EXTERN not in callee.attributes
            and not is_compiled_function(callee)
        )
    return op_kind(op) == "compilable"


def is_dead(group: list[Operation]) -> bool:
    """Side-effect-free ops whose results nothing outside the group uses.

    Outlining them would turn dead code into a call, which DCE cannot
    remove; they stay in place for `dce` instead.
    """
    inside = {inner for op in group for inner in op.walk()}
    return all(is_side_effect_free(op) for op in group) and not any(
        use.operation not in inside for op in group for r in op.results for use in r.uses
    )


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i


@dataclass
class BlockGraph:
    """The dependency graph of one block's ops (terminator excluded), by index into `ops`.

    `data_preds[i]`: the ops whose results op i uses; `succs[i]`: the ops
    that must come after op i, i.e. its users and, if op i has effects, the
    next op with effects (ops with effects keep their program order). A use
    inside an op's regions counts as a use by the op; values defined
    outside the block are not edges.
    """

    ops: list[Operation]
    data_preds: list[list[int]]
    succs: list[set[int]]

    @staticmethod
    def of(block: Block) -> BlockGraph:
        ops = [op for op in block.ops if not op.has_trait(IsTerminator)]
        index = {op: i for i, op in enumerate(ops)}
        data_preds: list[list[int]] = [[] for _ in ops]
        succs: list[set[int]] = [set() for _ in ops]
        last_effect: int | None = None
        for i, op in enumerate(ops):
            for value in operands_used_by(op):
                j = index.get(ancestor_in_block(value.owner, block)) if isinstance(value.owner, Operation) else None
                if j is not None and j != i and j not in data_preds[i]:
                    data_preds[i].append(j)
                    succs[j].add(i)
            if not is_side_effect_free(op):
                if last_effect is not None:
                    succs[last_effect].add(i)
                last_effect = i
        return BlockGraph(ops, data_preds, succs)


def operands_used_by(op: Operation) -> Iterable[SSAValue]:
    """Every operand of `op` and of the ops nested in its regions."""
    for inner in op.walk():
        yield from inner.operands


def ancestor_in_block(op: Operation, block: Block) -> Operation | None:
    """`op` itself or the ancestor of `op` that sits directly in `block`."""
    found: Operation | None = op
    while found is not None and found.parent_block() is not block:
        found = found.parent_op()
    return found


def group_block(graph: BlockGraph, candidate: list[bool]) -> _UnionFind:
    """Merge candidate ops into convex, connected groups (a union-find over op indices).

    Edges are tried in program order of their consumer, each merge allowed
    only if it keeps the contracted graph acyclic. The property test in
    tests/test_partition.py checks the result is maximal in the sense that
    matters: two pieces joined by an edge always have another path between
    them, so they could not have been merged.
    """
    n = len(graph.ops)
    uf = _UnionFind(n)
    # Successor op indices of each group, outside the group (kept on the root).
    out: list[set[int]] = [set(s) for s in graph.succs]
    members: list[list[int]] = [[i] for i in range(n)]

    def creates_cycle(a: int, b: int, current: int) -> bool:
        """Whether some path a ⇝ b passes through a third group.

        While ops are taken in program order, every op after `current` is
        still a singleton whose successors lie further on, so such ops can
        never lead back to `b`: the search skips them.
        """
        stack = [g for g in {uf.find(k) for k in out[a] if k <= current} if g not in (a, b)]
        seen = set(stack)
        while stack:
            g = stack.pop()
            for k in out[g]:
                if k > current:
                    continue
                h = uf.find(k)
                if h == b:
                    return True
                if h not in seen and h != a:
                    seen.add(h)
                    stack.append(h)
        return False

    def merge(j: int, i: int, horizon: int) -> bool:
        a, b = uf.find(j), uf.find(i)
        if a == b or creates_cycle(a, b, horizon):
            return False
        if len(members[a]) < len(members[b]):
            a, b = b, a  # the larger group absorbs the smaller: linear-logarithmic overall
        out[a].update(k for k in out[b] if uf.find(k) != a)
        out[a].difference_update(members[b])
        uf.parent[b] = a
        members[a].extend(members[b])
        out[b], members[b] = set(), []
        return True

    for i in range(n):  # in program order: ops after i are still singletons
        if candidate[i]:
            for j in graph.data_preds[i]:
                if candidate[j]:
                    merge(j, i, i)
    return uf


def schedule(graph: BlockGraph, uf: _UnionFind) -> list[list[int]]:
    """The groups (lists of op indices, program order) in a topological order.

    Kahn's algorithm on the contracted graph, taking the ready group whose
    first op comes first: ops that need not move keep their order.
    """
    groups: dict[int, list[int]] = {}
    for i in range(len(graph.ops)):
        groups.setdefault(uf.find(i), []).append(i)
    indegree = {g: 0 for g in groups}
    succ: dict[int, set[int]] = {g: set() for g in groups}
    for g, idxs in groups.items():
        for i in idxs:
            for k in graph.succs[i]:
                h = uf.find(k)
                if h != g and h not in succ[g]:
                    succ[g].add(h)
                    indegree[h] += 1
    ready = [(idxs[0], g) for g, idxs in groups.items() if indegree[g] == 0]
    heapq.heapify(ready)
    order: list[list[int]] = []
    while ready:
        _, g = heapq.heappop(ready)
        order.append(groups[g])
        for h in succ[g]:
            indegree[h] -= 1
            if indegree[h] == 0:
                heapq.heappush(ready, (groups[h][0], h))
    assert len(order) == len(groups), "cortex-partition: the contracted graph has a cycle"
    return order


class _Outliner:
    """Rebuilds blocks of one function, outlining its groups as compiled functions."""

    def __init__(self, module: ModuleOp, fn: func.FuncOp, symbols: dict[str, Operation]):
        self.module = module
        self.fn = fn
        self.anchor: Operation = fn
        self.count = 0
        self.sunk: dict[Operation, None] = {}  # constants cloned into pieces
        self.symbols = symbols

    def fresh_name(self) -> str:
        while True:
            name = f"{self.fn.sym_name.data}_compiled_{self.count}"
            self.count += 1
            if name not in self.symbols:
                return name

    def partition(self, block: Block) -> None:
        graph = BlockGraph.of(block)
        if not graph.ops:
            return
        candidate = [is_candidate(op, self.symbols) for op in graph.ops]
        uf = group_block(graph, candidate)
        terminator = block.last_op if block.last_op is not None and block.last_op.has_trait(IsTerminator) else None
        for op in graph.ops:
            op.detach()
        for idxs in schedule(graph, uf):
            ops = [graph.ops[i] for i in idxs]
            if candidate[idxs[0]] and not is_dead(ops):
                self.outline(block, terminator, ops)
                continue
            for op in ops:
                self.insert(block, terminator, op)
                if not candidate[idxs[0]]:
                    for region in op.regions:
                        for inner in region.blocks:
                            self.partition(inner)

    def erase_sunk_constants(self) -> None:
        """Constants whose every use moved into pieces (each piece has its clone)."""
        for op in self.sunk:
            if op.parent is not None and not any(r.uses for r in op.results):
                op.detach()
                op.erase()

    @staticmethod
    def insert(block: Block, terminator: Operation | None, op: Operation) -> None:
        if terminator is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, terminator)

    def outline(self, block: Block, terminator: Operation | None, members: list[Operation]) -> None:
        inside = {inner for op in members for inner in op.walk()}
        # dicts as ordered sets: arguments and cloned constants in order of first use
        arguments: dict[SSAValue, None] = {}
        constants: dict[Operation, None] = {}
        for op in members:
            for value in operands_used_by(op):
                owner = value.owner
                if owner in inside or (not isinstance(owner, Operation) and owner.parent_op() in inside):
                    continue
                if isinstance(owner, Operation) and is_constant(owner):
                    constants[owner] = None
                else:
                    arguments[value] = None
        self.sunk.update(constants)
        inputs = list(arguments)
        outputs = [r for op in members for r in op.results if any(u.operation not in inside for u in r.uses)]

        name = self.fresh_name()
        callee = func.FuncOp(name, ([v.type for v in inputs], [r.type for r in outputs]), visibility="private")
        callee.attributes[COMPILED_ATTR] = UnitAttr()
        body = callee.body.block
        mapping: dict[SSAValue, SSAValue] = {}
        for value, arg in zip(inputs, body.args):
            arg.name_hint = value.name_hint
            mapping[value] = arg
        for op in [*constants, *members]:
            body.add_op(op.clone(mapping))
        body.add_op(func.ReturnOp(*(mapping[r] for r in outputs)))
        Rewriter.insert_op(callee, InsertPoint.after(self.anchor))
        self.anchor = callee
        self.symbols[name] = callee

        call = func.CallOp(name, inputs, [r.type for r in outputs])
        self.insert(block, terminator, call)
        for old, new in zip(outputs, call.results):
            new.name_hint = old.name_hint
            old.replace_uses_with_if(new, lambda use: use.operation not in inside)
        for op in reversed(members):
            op.erase()


@dataclass(frozen=True)
class PartitionPass(ModulePass):
    """Outline each maximal compilable region into a private `cortex.compiled` function."""

    name = "cortex-partition"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        symbols = {
            sym.data: o for o in op.body.block.ops if isinstance(sym := o.properties.get("sym_name"), StringAttr)
        }
        for fn in list(op.body.block.ops):
            if not isinstance(fn, func.FuncOp) or fn.is_declaration or is_compiled_function(fn):
                continue
            outliner = _Outliner(op, fn, symbols)
            for block in fn.body.blocks:
                outliner.partition(block)
            outliner.erase_sunk_constants()


def compiled_functions(module: ModuleOp) -> list[func.FuncOp]:
    """The pieces `cortex-partition` outlined, in module order."""
    return [op for op in module.body.block.ops if is_compiled_function(op)]


__all__ = ["COMPILED_ATTR", "PartitionPass", "compiled_callee", "compiled_functions", "is_compiled_function"]
