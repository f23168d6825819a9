"""`cortex-outline-segments`: each maximal run of extern-free ops becomes a function a native backend compiles.

A lowered function mixes ops a compiler like IREE takes (linalg, tensor,
arith, math, scf on tensors) with `func.call`s to externs (OpenCV kernels,
Python callables). This pass cuts every block of every function into runs:
a run is a maximal sequence of consecutive ops none of which calls anything
(nested regions included) and all of which belong to those dialects. A run
holding at least one linalg op (less is not worth a call into compiled
code) is moved into a new function `@<fn>__seg<k>` marked `cortex.segment`
and replaced by one `func.call` to it; the call's `cortex.origin` joins the
run's origins with "+", as fused ops do, so profiles share its time among
them. A run also has to be worth a call (`worth_compiling`, the cost rule
below). An op that calls an extern is kept, and the blocks of its regions
(an `scf.if` around externs) are cut the same way. So is every `scf.if`: a
branch skipped on the host costs nothing, while IREE may compute both
branches of an `scf.if` inside a dispatch and select (the blur gate's
zeros-or-saliency stage then cost the saliency on every gated frame).
An f64 `math` op IREE cannot compile (f64 `math.tanh` links to a libm
symbol IREE lacks; `F64_MATH_ON_IREE`) is kept like a call: the host computes it.

Constants and `tensor.empty` ops are not moved (other code may use them):
each run clones the ones it reads. Values crossing the boundary travel as
tensors: a scalar `f32` (`i32`, ...) is passed as a rank-0 tensor
(`tensor.from_elements` before the call, `tensor.extract` inside, and back),
an `i1` scalar as a rank-0 `i8` tensor, since IREE's input conversion
rewrites `tensor<i1>` element types. A run whose boundary would carry
anything else (an `index`, a dynamically shaped tensor) stays where it is.

The cost rule: a native backend wins where a run does real work per
element that crosses its boundary (every input is copied into a device
buffer, every output back), and loses where NumPy does the same
vectorised pass over the same memory (an elementwise step over five
full-frame f64 images) or where IREE's fixed cost per call (measured from
the L2 frame: benchmarks/README.md, "Figures behind the compiler's choices") exceeds the whole run. So `estimate(run)` =
(work, boundary): work = Σ over the run's linalg ops of iteration-space
size × body ops (at least 1; non-structured linalg ops such as
`linalg.broadcast` count their largest operand), boundary = the elements
of every value crossing in or out (a scalar counts 1). A run is outlined
when work ≥ `min_work` and work ≥ `min_intensity` × boundary. Defaults,
measured on this CPU (notes/19-s3.md): the L2 frame's runs are at
intensities 0.3-2.5 (scene change, gray, motion, history: NumPy faster)
and 42 (saliency's 60×80 matmuls, still 1.4× faster on NumPy's BLAS),
its per-stage median/history runs have work ~1e4 over ~30 elements; the
CNN/MLP whole graphs are at 710-5718 with work ≥ 5e4. So `min_intensity`
= 64 and `min_work` = 32768. The price: in the CNNs' stage split, the
first conv stage (intensity 40-46) stays on NumPy. `min-intensity=0
min-work=0` outlines every run with a linalg op (the IREE backend reads
CORTEX_IREE_MIN_INTENSITY / CORTEX_IREE_MIN_WORK; tests of small
programs set both to 0).

The result computes the same values (the NumPy backend emits segment
functions as ordinary Python functions: `tests/test_iree_backend.py` runs
modules before and after); the IREE backend compiles the segments and calls
them in place of their Python form (`cortex.runtime.iree_runtime`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    IntegerType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i8,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.dialects.abi import ORIGIN, SEGMENT
from cortex.runtime.native_report import RunChoice

COMPILABLE_DIALECTS = ("arith", "math", "linalg", "tensor", "scf")
TENSOR_ELEMENTS = ("f16", "f32", "f64", "i1", "i8", "i16", "i32", "i64")


def _dialect(op: Operation) -> str:
    return op.name.split(".", 1)[0]


F64_MATH_ON_IREE = frozenset({
    "math.absf", "math.ceil", "math.copysign", "math.exp", "math.exp2", "math.expm1", "math.floor", "math.log",
    "math.log1p", "math.powf", "math.round", "math.roundeven", "math.rsqrt", "math.sinh", "math.sqrt", "math.trunc",
})
"""The `math` ops IREE's CPU backend compiles on f64 (IREE 3.13, each checked): it has f32 approximations of
every math op, but on f64 `math.tanh`, `sin`, `cos`, `atan`, `log2` ... become libm calls its linker cannot
resolve ("undefined symbol: tanh") and `math.erf`, `erfc`, `cbrt` fail to legalise. A run holding any other
f64 math op stays on the host, where the NumPy backend computes it."""


def _f64_math_ok(op: Operation) -> bool:
    if _dialect(op) != "math" or op.name in F64_MATH_ON_IREE:
        return True
    return all(str(v.type) != "f64" for v in (*op.operands, *op.results))


def compilable(op: Operation) -> bool:
    """No call anywhere inside, every op of a compilable dialect (f64 math: one IREE compiles), not a terminator."""
    if op.has_trait(IsTerminator):
        return False
    return all(_dialect(inner) in COMPILABLE_DIALECTS and _f64_math_ok(inner) for inner in op.walk())


def cloneable(op: Operation) -> bool:
    """Constants and static `tensor.empty`: each run gets its own copy instead of an argument."""
    return isinstance(op, arith.ConstantOp) or (isinstance(op, tensor.EmptyOp) and not op.operands)


def crossing_type(t: Attribute) -> Attribute | None:
    """The type a value of type `t` crosses a segment boundary as, or None if it cannot."""
    if isinstance(t, TensorType):
        if any(d < 0 for d in t.get_shape()) or str(t.get_element_type()) not in TENSOR_ELEMENTS:
            return None
        return t
    if t == i1:
        return TensorType(i8, [])
    if isinstance(t, AnyFloat) or (isinstance(t, IntegerType) and str(t) in TENSOR_ELEMENTS):
        return TensorType(t, [])
    return None


def _top(op: Operation, block: Block) -> Operation | None:
    """The ancestor of `op` (itself included) that sits directly in `block`."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _defining_top(value: SSAValue, block: Block) -> Operation | None:
    owner = value.owner
    if isinstance(owner, Block):
        parent = owner.parent_op()
        return _top(parent, block) if parent is not None else None
    return _top(owner, block)


@dataclass
class Run:
    block: Block
    ops: list[Operation]

    def boundary(self) -> tuple[list[SSAValue], list[Operation], list[SSAValue]]:
        """(values read from outside, ops to clone in, values used outside) in first-use order."""
        members = set(self.ops)
        inputs: dict[SSAValue, None] = {}
        clones: dict[Operation, None] = {}
        for op in self.ops:
            for inner in op.walk():
                for operand in inner.operands:
                    top = _defining_top(operand, self.block)
                    if top is not None and top in members:
                        continue
                    owner = operand.owner
                    if isinstance(owner, Operation) and cloneable(owner):
                        clones[owner] = None
                    else:
                        inputs[operand] = None
        outputs: dict[SSAValue, None] = {}
        for op in self.ops:
            for result in op.results:
                for use in result.uses:
                    top = _top(use.operation, self.block)
                    if top is None or top not in members:
                        outputs[result] = None
                        break
        return list(inputs), list(clones), list(outputs)


MIN_INTENSITY = 64
"""Work per boundary element below which a run stays on the host (see the module docstring)."""
MIN_WORK = 32768
"""Work below which IREE's fixed cost per call dominates and a run stays on the host."""


def _elements(t: Attribute) -> int:
    """Elements of a value of type `t`: a scalar counts 1; a dynamic dimension counts 1 (such runs never cross)."""
    if isinstance(t, TensorType):
        return math.prod(max(d, 1) for d in t.get_shape())
    return 1


def linalg_work(op: Operation) -> int:
    """Iteration-space size × body ops (at least 1) of one linalg op; its largest operand for the ops
    without indexing maps (`linalg.broadcast`, `linalg.reduce`, ...)."""
    body = sum(1 for region in op.regions for inner in region.walk() if not inner.has_trait(IsTerminator))
    size = 0
    if isinstance(op, LinalgStructuredOperation):
        try:
            size = math.prod(op.get_static_loop_ranges())
        except Exception:  # dynamic shapes or maps xDSL cannot invert: fall back to the operands
            size = 0
    if size <= 0:
        size = max((_elements(t) for t in (*op.operand_types, *op.result_types)), default=1)
    return size * max(body, 1)


def estimate(run: Run) -> tuple[int, int]:
    """(work, boundary elements) of `run`: Σ `linalg_work` over its linalg ops (not those nested in a
    linalg body), and the elements of the values it reads from outside and the values used outside."""
    work = 0
    for op in run.ops:
        for inner in op.walk():
            parent = inner.parent_op()
            if _dialect(inner) == "linalg" and not inner.has_trait(IsTerminator) and (parent is None or _dialect(parent) != "linalg"):
                work += linalg_work(inner)
    inputs, _, outputs = run.boundary()
    return work, sum(_elements(v.type) for v in (*inputs, *outputs))


def worth_compiling(run: Run, min_intensity: float = MIN_INTENSITY, min_work: int = MIN_WORK) -> bool:
    """The cost rule: enough work in all, and enough work per element crossing the boundary."""
    work, boundary = estimate(run)
    return work >= min_work and work >= min_intensity * boundary


def runs_of(block: Block, min_linalg: int, min_intensity: float = 0, min_work: int = 0,
            rejected: list[Run] | None = None) -> list[Run]:
    """The runs worth outlining in `block` and (recursively) in the regions of the ops kept; the runs the
    cost rule turned down are appended to `rejected` when given."""
    found: list[Run] = []
    current: list[Operation] = []

    def flush() -> None:
        if current and sum(_dialect(o) == "linalg" for op in current for o in op.walk()) >= min_linalg:
            run = Run(block, list(current))
            if worth_compiling(run, min_intensity, min_work):
                found.append(run)
            elif rejected is not None:
                rejected.append(run)
        current.clear()

    for op in list(block.ops):
        if cloneable(op):
            continue  # neither part of a run nor a break in one
        if compilable(op) and not isinstance(op, scf.IfOp):
            current.append(op)
            continue
        flush()
        for region in op.regions:
            for inner in region.blocks:
                found += runs_of(inner, min_linalg, min_intensity, min_work, rejected)
    flush()
    return found


def _wrap(rewriter_at: InsertPoint, value: SSAValue, crossing: Attribute) -> SSAValue:
    """`value` as the boundary type `crossing` (a rank-0 tensor for scalars), built at `rewriter_at`."""
    if value.type == crossing:
        return value
    ops: list[Operation] = []
    scalar = value
    if value.type == i1:
        ext = arith.ExtUIOp(value, i8)
        ops.append(ext)
        scalar = ext.result
    assert isinstance(crossing, TensorType)
    wrap = tensor.FromElementsOp.create(operands=[scalar], result_types=[crossing])
    ops.append(wrap)
    Rewriter.insert_op(ops, rewriter_at)
    return wrap.results[0]


def _unwrap(rewriter_at: InsertPoint, value: SSAValue, original: Attribute) -> SSAValue:
    """The boundary value `value` back as type `original`."""
    if value.type == original:
        return value
    assert isinstance(value.type, TensorType)
    extract = tensor.ExtractOp(value, [], value.type.get_element_type())
    ops: list[Operation] = [extract]
    result: SSAValue = extract.result
    if original == i1:
        trunc = arith.TruncIOp(result, i1)
        ops.append(trunc)
        result = trunc.result
    Rewriter.insert_op(ops, rewriter_at)
    return result


def run_origin(run: Run) -> str:
    """The source ops `run` came from, joined with "+" as fused ops' are ("" when none is named)."""
    origins = [o.data for op in run.ops for inner in op.walk() if isinstance(o := inner.attributes.get(ORIGIN), StringAttr)]
    origins = [o for o in origins if not o.startswith("cortex.")] or origins  # op names label anonymous constants
    return "+".join(dict.fromkeys("+".join(origins).split("+"))) if origins else ""


def choice(run: Run, native: bool) -> RunChoice:
    """What the cost rule made of `run`, as the program records it (`cortex.runtime.native_report`)."""
    work, boundary = estimate(run)
    return RunChoice(run_origin(run) or "(unnamed ops)", work, boundary, native)


def outline(run: Run, name: str) -> func.FuncOp | None:
    """Move `run` into a new function `name` and call it in its place; None (nothing changed) if it cannot cross."""
    inputs, clones, outputs = run.boundary()
    in_types = [crossing_type(v.type) for v in inputs]
    out_types = [crossing_type(v.type) for v in outputs]
    if any(t is None for t in (*in_types, *out_types)) or not outputs:
        return None
    in_crossing: list[Attribute] = [t for t in in_types if t is not None]
    out_crossing: list[Attribute] = [t for t in out_types if t is not None]

    body = Block(arg_types=in_crossing)
    mapping: dict[SSAValue, SSAValue] = {}
    at_end = InsertPoint.at_end(body)
    for value, arg in zip(inputs, body.args):
        mapping[value] = _unwrap(at_end, arg, value.type)
    for op in clones:
        copy = op.clone()
        body.add_op(copy)
        mapping.update(zip(op.results, copy.results))
    for op in run.ops:
        copy = op.clone(value_mapper=mapping)
        body.add_op(copy)
        mapping.update(zip(op.results, copy.results))
    returned = [_wrap(at_end, mapping[v], t) for v, t in zip(outputs, out_crossing)]
    body.add_op(func.ReturnOp(*returned))
    segment = func.FuncOp(name, (in_crossing, out_crossing), Region(body), visibility="private")
    segment.attributes[SEGMENT] = UnitAttr()

    origin = run_origin(run)
    before = InsertPoint.before(run.ops[0])
    args = [_wrap(before, v, t) for v, t in zip(inputs, in_crossing)]
    call = func.CallOp(name, args, out_crossing)
    if origin:
        call.attributes[ORIGIN] = StringAttr(origin)
    Rewriter.insert_op(call, before)
    after = InsertPoint.after(call)
    members = set(run.ops)
    for value, result in zip(outputs, call.res):
        replacement = _unwrap(after, result, value.type)
        replacement.name_hint = value.name_hint  # the host keeps the SSA names it had (%gray, %saliency)
        if replacement.owner is not call:
            after = InsertPoint.after(replacement.owner)  # type: ignore[arg-type]
        for use in list(value.uses):
            top = _top(use.operation, run.block)
            if top is None or top not in members:
                use.operation.operands[use.index] = replacement
    for op in reversed(run.ops):
        for result in op.results:
            for use in list(result.uses):  # only uses inside the run remain, erased with it
                assert _top(use.operation, run.block) in members
        Rewriter.erase_op(op, safe_erase=False)
    return segment


def outline_segments(module: ModuleOp, min_linalg: int = 1, min_intensity: float = MIN_INTENSITY,
                     min_work: int = MIN_WORK, choices: list[RunChoice] | None = None) -> list[func.FuncOp]:
    """Outline every run of every function of `module` that passes the cost rule (in place); the new
    segment functions, in order. `choices`, when given, gets what the rule made of every run it weighed."""
    made: list[func.FuncOp] = []
    for fn in [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration and SEGMENT not in op.attributes]:
        count = 0
        rejected: list[Run] = []
        for run in runs_of(fn.body.block, min_linalg, min_intensity, min_work, rejected) if fn.body.blocks else []:
            weighed = choice(run, True) if choices is not None else None  # before the run moves
            segment = outline(run, f"{fn.sym_name.data}__seg{count}")
            if choices is not None and weighed is not None:
                choices.append(weighed if segment is not None else RunChoice(weighed.stages, weighed.work, weighed.boundary, False))
            if segment is None:
                continue
            count += 1
            module.body.block.add_op(segment)
            made.append(segment)
        if count:
            region_dce(fn.body)  # the constants and empties only the moved ops read
        if choices is not None:
            choices += [choice(run, False) for run in rejected]
    return made


@dataclass(frozen=True)
class OutlineSegmentsPass(ModulePass):
    """Runs of extern-free ops (with at least `min-linalg` linalg ops, and at least `min-work` work and
    `min-intensity` work per boundary element) as `cortex.segment` functions."""

    name = "cortex-outline-segments"
    min_linalg: int = 1
    min_intensity: int = MIN_INTENSITY
    min_work: int = MIN_WORK

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outline_segments(op, self.min_linalg, self.min_intensity, self.min_work)


__all__ = ["F64_MATH_ON_IREE", "MIN_INTENSITY", "MIN_WORK", "OutlineSegmentsPass", "compilable", "crossing_type", "estimate", "linalg_work",
           "outline_segments", "runs_of", "worth_compiling"]
