"""Outlining: ops of one function moved into new functions that hand values to each other by key.

The toolkit both splits are built from (`frame_split`: four parts per
frame; `stage_split`: one function per stage). An `Outliner` walks the
source function and gives each op to a `Piece`; a piece clones the ops it
is given and, for each value it uses, finds where it comes from:

- an argument of the source function, or another value the concrete
  splitter names (a state read): an argument of the piece, keyed by the
  splitter (`argument_key`): `input:0`, `state:prev_gray`, ...;
- a cheap operand-free op (a constant, a weight), or an op the concrete
  splitter says every user computes itself (`Outliner.clones`: the stage
  split's blur-gate scalars): cloned into the piece;
- a value another piece computed: an argument keyed `<kind>:<k>` (the
  outliner's `value_kind`: `value` for the frame split, `stage` for the
  stage split), which that piece returns (its exports).

`piece_function` turns a piece into `@source__<name>` with the wiring keys
of its arguments and results (`cortex.dialects.abi.SPLIT_ARGS`,
`SPLIT_RESULTS`), which is how the runtime wires the functions. The
dependency helpers (`outer_operands`, `backward_slice`, ...) read the IR
the same way for the splits and for the state analysis.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    AnyFloat,
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

from cortex.dialects.abi import SPLIT_ARGS, SPLIT_RESULTS, wire
from cortex.dialects.state import StateOp
from cortex.dialects.tensor_ops import ConstantOp
from cortex.errors import CortexError
from cortex.ir import function_named


class FrameSplitError(CortexError):
    """The function cannot be cut (frame split or stage split); the message says why."""


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


def inside(v: SSAValue, op: Operation) -> bool:
    """Whether `v` is defined by `op` or inside it."""
    owner = v.owner if isinstance(v.owner, Operation) else v.owner.parent_op()
    return owner is not None and op.is_ancestor(owner)


def branch_ops(region: Region) -> list[Operation]:
    """The ops of an `scf.if` branch, its yield left out."""
    if not region.blocks:
        return []
    return [op for op in region.block.ops if not isinstance(op, scf.YieldOp)]


def only_block(fn: func.FuncOp, purpose: str) -> Block:
    """The single block of `fn`'s body, or a FrameSplitError saying `purpose` needs one."""
    if len(fn.body.blocks) != 1:
        raise FrameSplitError(f"@{fn.sym_name.data} has {len(fn.body.blocks)} blocks; {purpose} needs one")
    return fn.body.block


# ---------------------------------------------------------------- values a piece makes itself


def rematerialisable(op: Operation) -> bool:
    """Cheap, operand-free ops (constants, weights) are cloned into each piece that uses them."""
    return not op.operands and not op.regions and not isinstance(op, StateOp) and len(op.results) == 1


def zero_of(t: Attribute) -> Operation:
    """A constant zero of `t`: what a cut `scf.if` yields on the branch that does not compute a value."""
    if isinstance(t, TensorType):
        if any(d < 0 for d in t.get_shape()):
            raise FrameSplitError(
                f"the split needs a placeholder of the dynamic type {t} (the zeros a skipped branch yields): bind "
                "the entry to one input shape first (cortex-specialize-shapes{shapes=...}, as cortex.compile does)"
            )
        return ConstantOp(DenseIntOrFPElementsAttr.from_list(t, [0.0 if isinstance(t.element_type, AnyFloat) else 0]))
    if isinstance(t, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, t))
    if isinstance(t, IntegerType | IndexType):
        return arith.ConstantOp(IntegerAttr(0, t))
    raise FrameSplitError(f"the frame split cannot make a placeholder of type {t}")


def branch_yields(block: Block, values: Iterable[SSAValue], mapping: dict[SSAValue, SSAValue],
                  computed: bool) -> list[SSAValue]:
    """What one branch of a cut `scf.if` yields for `values`: its own copies (`mapping`) on the branch that
    computes them, else zeros of their types, added to `block` (the other branch's values cross out too)."""
    if computed:
        return [mapping[v] for v in values]
    yielded: list[SSAValue] = []
    for v in values:
        zero = zero_of(v.type)
        block.add_op(zero)
        yielded.append(zero.results[0])
    return yielded


# ---------------------------------------------------------------- pieces and the outliner


class Piece:
    """One new function being built: its block, its keyed arguments, its results, the clones' mapping."""

    def __init__(self, name: str, outliner: Outliner):
        self.name, self.outliner = name, outliner
        self.block = Block()
        self.mapping: dict[SSAValue, SSAValue] = {}
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
        """`v` as a value of this piece: an argument, a clone, or what was mapped already."""
        if v in self.mapping:
            return self.mapping[v]
        o = self.outliner
        key = o.argument_key(v)
        if key is not None:
            local = self.arg(key, v)
        elif isinstance(v, BlockArgument):
            parent = v.owner.parent_op()
            raise FrameSplitError(f"{o.purpose} cannot move a block argument of '{parent.name if parent else '?'}'")
        elif isinstance(v.owner, Operation) and rematerialisable(v.owner):
            clone = v.owner.clone()
            self.block.add_op(clone)
            local = clone.results[0]
        elif isinstance(v.owner, Operation) and o.clones(v.owner):
            self.add(v.owner)  # its operands first (cloned or received in turn), then the op
            return self.mapping[v]
        else:
            home = o.home.get(v)
            if home is None:
                name = v.owner.name if isinstance(v.owner, Operation) else "?"
                raise FrameSplitError(f"{o.purpose}: a value of '{name}' is used before the piece that computes it")
            key = o.key(v)
            o.exports.setdefault(home, {})[key] = v
            local = self.arg(key, v)
        self.mapping[v] = local
        return local

    def add(self, op: Operation) -> Operation:
        """A clone of `op` (its operands brought in first); its results are now this piece's."""
        for v in outer_operands(op):
            self.get(v)
        clone = op.clone(value_mapper=dict(self.mapping))
        self.block.add_op(clone)
        self.own(op.results, clone.results)
        return clone

    def own(self, old: Iterable[SSAValue], new: Iterable[SSAValue]) -> None:
        """`new` (values of this piece) stand for `old` (values of the source function) from now on."""
        for o, n in zip(old, new):
            if n.name_hint is None:
                n.name_hint = o.name_hint
            self.mapping[o] = n
            self.outliner.home[o] = self.name


class Outliner:
    """What a split shares: which piece computes each value, the key it crosses under, what each piece exports.

    A concrete splitter sets `purpose` (for messages) and `value_kind` (the
    wiring kind of values crossing between its pieces), and says which
    values are arguments of every piece (`argument_key`).
    """

    purpose = "outlining"
    value_kind = "value"

    def __init__(self, fn: func.FuncOp):
        self.fn = fn
        self.home: dict[SSAValue, str] = {}
        self.keys: dict[SSAValue, str] = {}
        self.exports: dict[str, dict[str, SSAValue]] = {}

    def argument_key(self, v: SSAValue) -> str | None:
        """The key under which `v` is an argument of any piece that uses it, or None."""
        return None

    def clones(self, op: Operation) -> bool:
        """Whether each piece that uses a result of `op` computes it itself (beyond constants and weights)."""
        return False

    def key(self, v: SSAValue) -> str:
        return self.keys.setdefault(v, wire(self.value_kind, len(self.keys)))

    def function(self, piece: Piece, tags: dict[str, Attribute] | None = None) -> func.FuncOp:
        return piece_function(self.fn, piece, self.exports.get(piece.name, {}), tags)


def piece_function(source: func.FuncOp, piece: Piece, exports: dict[str, SSAValue],
                   tags: dict[str, Attribute] | None = None) -> func.FuncOp:
    """`piece` as `@source__name`, with attributes `tags` first.

    It returns its exports, then its own results; SPLIT_ARGS and SPLIT_RESULTS
    name each argument and result, which is how the runtime wires pieces.
    """
    results = [*((k, piece.get(v)) for k, v in exports.items()), *piece.results]
    piece.block.add_op(func.ReturnOp(*(v for _, v in results)))
    name = f"{source.sym_name.data}__{piece.name}"
    fn = func.FuncOp(name, ([a.type for a in piece.block.args], [v.type for _, v in results]), Region(piece.block))
    fn.attributes.update(tags or {})
    fn.attributes[SPLIT_ARGS] = ArrayAttr([StringAttr(k) for k in piece.arg_keys])
    fn.attributes[SPLIT_RESULTS] = ArrayAttr([StringAttr(k) for k, _ in results])
    return fn


def split_keys(fn: func.FuncOp, attr: str) -> list[str] | None:
    """The wiring keys `fn` carries under `attr` (SPLIT_ARGS or SPLIT_RESULTS), or None."""
    keys = fn.attributes.get(attr)
    if not isinstance(keys, ArrayAttr):
        return None
    return [k.data for k in keys.data if isinstance(k, StringAttr)]


# ---------------------------------------------------------------- the module


def defined_function(module: ModuleOp, name: str, purpose: str) -> func.FuncOp:
    """`@name` of `module` with a body; a FrameSplitError saying what it was wanted for otherwise."""
    fn = function_named(module, name)
    if fn is None:
        raise FrameSplitError(f"no function '@{name}' to {purpose}")
    return fn


def replace_function(module: ModuleOp, fn: func.FuncOp, parts: list[func.FuncOp]) -> list[func.FuncOp]:
    """`parts` where `fn` stood in `module` (in order), `fn` gone; returns `parts`."""
    for part in parts:
        module.body.block.insert_op_before(part, fn)
    module.body.block.erase_op(fn)
    return parts


__all__ = [
    "FrameSplitError",
    "Outliner",
    "Piece",
    "backward_slice",
    "branch_ops",
    "branch_yields",
    "defined_function",
    "inside",
    "only_block",
    "outer_operands",
    "piece_function",
    "rematerialisable",
    "replace_function",
    "split_keys",
    "top_level",
    "zero_of",
]
