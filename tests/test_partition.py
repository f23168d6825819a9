"""cortex-partition: structure of the pieces, no cycles, and unchanged results.

Equivalence runs the reference interpreter (which follows `func.call`) on
the original and the partitioned module; the no-cycle property is checked
on random graphs that mix compilable ops with calls to extern declarations.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation
from xdsl.traits import ConstantLike, IsTerminator, is_side_effect_free

from cortex.dialects.traits import op_kind
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.interpreter.reference import ReferenceRunner
from cortex.ir import make_context, parse_module, to_text
from cortex.passes.partition import COMPILED_ATTR, PartitionPass, compiled_callee, compiled_functions
from cortex.video.synthetic import SyntheticVideo


def partition(module: ModuleOp) -> ModuleOp:
    result = module.clone()
    PartitionPass().apply(make_context(), result)
    result.verify()
    assert_defined_before_use(result)
    return result


def assert_defined_before_use(module: ModuleOp) -> None:
    """SSA dominance inside every block (xDSL's verifier does not check it)."""
    for op in module.walk():
        for region in op.regions:
            for block in region.blocks:
                check_block(block)


def check_block(block: Block) -> None:
    seen: set[Operation] = set()
    for op in block.ops:
        for inner in op.walk():
            for value in inner.operands:
                owner = value.owner
                if isinstance(owner, Operation) and owner.parent_block() is block:
                    assert owner in seen, f"{op.name} uses %{value.name_hint} before it is defined"
        seen.add(op)


def run(module: ModuleOp, inputs, entry: str = "l2_frame", mode: str | None = "balanced") -> list[tuple]:
    runner = ReferenceRunner(module, entry=entry, mode=mode)
    return [runner(*args) for args in inputs]


def assert_same_results(expected: list[tuple], actual: list[tuple]) -> None:
    for want, got in zip(expected, actual, strict=True):
        assert len(want) == len(got)
        for w, g in zip(want, got):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


# ---- the L2 pipeline ---------------------------------------------------


@pytest.fixture(scope="module")
def small_l2():
    module = build_l2_pipeline(96, 128, 32)
    return module, partition(module)


def test_l2_pieces(small_l2):
    _, parted = small_l2
    pieces = compiled_functions(parted)
    assert [p.sym_name.data for p in pieces] == [f"l2_frame_compiled_{i}" for i in range(4)]
    for piece in pieces:
        assert piece.sym_visibility.data == "private" and COMPILED_ATTR in piece.attributes
        body = [op for op in piece.body.walk() if not op.has_trait(IsTerminator)]
        assert body and all(op_kind(op) == "compilable" for op in body)
    inner = {p.sym_name.data: [op.name for op in p.body.block.ops] for p in pieces}
    assert inner["l2_frame_compiled_0"] == ["cortex.gray", "func.return"]
    assert inner["l2_frame_compiled_1"] == [  # the blur gate, fixed and relative thresholds
        "cortex.window_median", "arith.mulf", "arith.maximumf", "arith.cmpf", "func.return"
    ]
    assert inner["l2_frame_compiled_2"] == [
        "cortex.center_crop",
        "cortex.saliency_dft",
        "cortex.motion_map",
        "cortex.score_fusion",
        "cortex.temporal_smooth",
        "func.return",
    ]
    assert inner["l2_frame_compiled_3"] == ["cortex.window_push", "func.return"]


def test_l2_caller_keeps_externals_state_and_branch(small_l2):
    _, parted = small_l2
    entry = next(op for op in parted.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "l2_frame")
    kinds = Counter()
    for op in entry.body.walk():
        if op.name.startswith("cortex."):
            kinds[op_kind(op)] += 1
    # blur_detector, scene_change, text_roi, encoder; 3 state reads, 6 weights, 3 updates
    assert kinds == {"external": 4, "boundary": 12}
    branch = next(op for op in entry.body.walk() if isinstance(op, scf.IfOp))
    else_ops = [op.name for op in branch.false_region.block.ops]
    assert else_ops[:2] == ["cortex.scene_change", "cortex.text_roi"]
    assert else_ops[-2:] == ["func.call", "scf.yield"]
    assert compiled_callee(branch.false_region.block.ops.last.prev_op).sym_name.data == "l2_frame_compiled_2"
    # the blur threshold moved into its piece: no constant is left in the caller
    assert not any(op.has_trait(ConstantLike) for op in entry.body.walk())


def test_l2_partitioned_equals_original(small_l2):
    original, parted = small_l2
    video = SyntheticVideo(96, 128)
    frames = [(video.frame(i),) for i in range(10)]  # frame 8 is blurred: both branches run
    assert any(video.is_blurred(i) for i in range(10))
    for mode in ("balanced", "power_save"):
        assert_same_results(run(original, frames, mode=mode), run(parted, frames, mode=mode))


def test_l2_full_size_partitioned_equals_original():
    original = build_l2_pipeline()
    parted = partition(original)
    frames = [(frame,) for frame in SyntheticVideo(480, 640).frames(2)]
    assert_same_results(run(original, frames), run(parted, frames))


def test_partition_is_idempotent(small_l2):
    _, parted = small_l2
    again = partition(parted)
    assert to_text(again) == to_text(parted)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_tensor_graph_partitioned_equals_original(name):
    spec = EXAMPLES[name]
    original = parse_module(spec.text(), str(spec.path))
    parted = partition(original)
    assert len(compiled_functions(parted)) == 1  # all compilable: one piece
    inputs = [spec.make_inputs(seed) for seed in range(2)]
    assert_same_results(run(original, inputs, spec.entry, None), run(parted, inputs, spec.entry, None))


# ---- cycles ------------------------------------------------------------

CYCLE = """
func.func @cycle(%g: tensor<64x64xf32>) -> tensor<2x2xf32> {
  %a = cortex.add %g, %g : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = cortex.text_roi %a : tensor<64x64xf32> -> tensor<2x2xf32>
  %c = cortex.center_crop %a : tensor<64x64xf32> -> tensor<2x2xf32>
  %f = cortex.add %t, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %f : tensor<2x2xf32>
}
"""


def test_external_between_compilable_ops_splits_them():
    """a → text_roi → f and a → c → f: {a, c, f} in one piece would need text_roi inside it."""
    original = parse_module(CYCLE)
    parted = partition(original)
    pieces = {p.sym_name.data: [op.name for op in p.body.block.ops] for p in compiled_functions(parted)}
    assert pieces == {
        "cycle_compiled_0": ["cortex.add", "cortex.center_crop", "func.return"],
        "cycle_compiled_1": ["cortex.add", "func.return"],
    }
    rng = np.random.default_rng(0)
    image = (rng.random((64, 64)) * 127).astype(np.float32)
    image[20:44, 10:54] = 0.0  # a dark box for MSER to find
    inputs = [(image,)]
    assert_same_results(run(original, inputs, "cycle", None), run(parted, inputs, "cycle", None))


def test_independent_external_does_not_split_a_region():
    """An external op between two compilable ops in program order, but not in dataflow, stays outside one piece."""
    parted = partition(
        parse_module("""
func.func @f(%g: tensor<64x64xf32>, %s: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = cortex.center_crop %g : tensor<64x64xf32> -> tensor<2x2xf32>
  %sharp = cortex.blur_detector %g : tensor<64x64xf32> -> f32
  %r = cortex.temporal_smooth %c, %s, %sharp : (tensor<2x2xf32>, tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}""")
    )
    (piece,) = compiled_functions(parted)
    assert [op.name for op in piece.body.block.ops] == ["cortex.center_crop", "cortex.temporal_smooth", "func.return"]
    caller = next(op for op in parted.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "f")
    assert [op.name for op in caller.body.block.ops] == ["cortex.blur_detector", "func.call", "func.return"]


def test_compilable_branch_is_outlined_whole_and_dead_code_stays():
    parted = partition(
        parse_module("""
func.func @f(%p: i1, %x: tensor<4xf32>) -> tensor<4xf32> {
  %dead = cortex.exp %x : tensor<4xf32> -> tensor<4xf32>
  %r = scf.if %p -> (tensor<4xf32>) {
    %a = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  %s = cortex.abs %r : tensor<4xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}""")
    )
    (piece,) = compiled_functions(parted)
    assert [op.name for op in piece.body.block.ops] == ["scf.if", "cortex.abs", "func.return"]
    caller = next(op for op in parted.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "f")
    # the unused exp is left for DCE rather than turned into a call DCE cannot remove
    assert [op.name for op in caller.body.block.ops] == ["cortex.exp", "func.call", "func.return"]


# ---- property: random graphs with externs ------------------------------

T = "tensor<4x4xf32>"


@st.composite
def mixed_graphs(draw) -> str:
    """A random DAG of compilable cortex ops and calls to extern declarations."""
    values = ["%x", "%y"]
    lines = [f"  %k = cortex.constant dense<2.0> : {T}"]
    for i in range(draw(st.integers(2, 24))):
        pick = st.sampled_from(values)
        kind = draw(st.sampled_from(["relu", "add", "mul", "ext1", "ext2", "addk"]))
        if kind == "relu":
            line = f"cortex.relu {draw(pick)} : {T} -> {T}"
        elif kind in ("add", "mul"):
            line = f"cortex.{kind} {draw(pick)}, {draw(pick)} : ({T}, {T}) -> {T}"
        elif kind == "addk":
            line = f"cortex.add {draw(pick)}, %k : ({T}, {T}) -> {T}"
        elif kind == "ext1":
            line = f"func.call @ext1({draw(pick)}) : ({T}) -> {T}"
        else:
            line = f"func.call @ext2({draw(pick)}, {draw(pick)}) : ({T}, {T}) -> {T}"
        lines.append(f"  %v{i} = {line}")
        values.append(f"%v{i}")
    outs = draw(st.lists(st.sampled_from(values[2:]), min_size=1, max_size=3, unique=True))
    types = ", ".join([T] * len(outs))
    return (
        f"func.func private @ext1({T}) -> {T}\n"
        f"func.func private @ext2({T}, {T}) -> {T}\n"
        f"func.func @g(%x: {T}, %y: {T}) -> ({types}) {{\n" + "\n".join(lines) + "\n"
        f"  func.return {', '.join(outs)} : {types}\n}}\n"
    )


def dataflow(module: ModuleOp, ids: dict[tuple, int]) -> tuple[Counter, tuple[int, ...]]:
    """Every non-constant op of @g as a hash-consed expression, calls to pieces inlined.

    Two modules compute the same thing op for op when, interned in the same
    `ids` table, these multisets and the returned expressions agree.
    """
    counts: Counter = Counter()

    def intern(key: tuple) -> int:
        return ids.setdefault(key, len(ids))

    def walk(block: Block, env: dict) -> tuple[int, ...]:
        for op in block.ops:
            operands = tuple(env[v] for v in op.operands)
            if op.has_trait(IsTerminator):
                return operands
            piece = compiled_callee(op)
            if piece is not None:
                env.update(zip(op.results, walk(piece.body.block, dict(zip(piece.body.block.args, operands)))))
                continue
            props = tuple(sorted((k, str(v)) for k, v in op.properties.items()))
            node = intern((op.name, props, operands))
            if not op.has_trait(ConstantLike):
                counts[node] += 1
            env.update((r, intern(("result", node, i))) for i, r in enumerate(op.results))
        raise AssertionError("block without terminator")

    g = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "g")
    returned = walk(g.body.block, {a: intern(("arg", i)) for i, a in enumerate(g.body.block.args)})
    return counts, returned


Graph = dict[Operation, set[Operation]]


def caller_graph(module: ModuleOp) -> tuple[func.FuncOp, Graph, Graph]:
    """@g; per op of its body, the users of its results; and the ops that must come after it.

    The latter adds, for an extern call (unknown effects), the next extern
    call: partitioning keeps their order, so that is a dependency too.
    """
    g = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "g")
    users = {op: {u.operation for r in op.results for u in r.uses} for op in g.body.block.ops}
    after = {op: set(u) for op, u in users.items()}
    externs = [op for op in g.body.block.ops if op_kind(op) == "external" and not is_side_effect_free(op)]
    for first, second in zip(externs, externs[1:]):
        after[first].add(second)
    return g, users, after


def reaches(users: dict[Operation, set[Operation]], start: Operation, goal: Operation, skip_direct: bool) -> bool:
    stack = [u for u in users[start] if not (skip_direct and u is goal)]
    seen = set(stack)
    while stack:
        op = stack.pop()
        if op is goal:
            return True
        for u in users.get(op, ()):
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return False


def live_ops(g: func.FuncOp) -> set[Operation]:
    """The ops the return value depends on."""
    live: set[Operation] = set()
    stack = [g.body.block.last_op]
    while stack:
        op = stack.pop()
        if op not in live:
            live.add(op)
            stack.extend(v.owner for v in op.operands if isinstance(v.owner, Operation))
    return live


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(mixed_graphs())
def test_partition_of_random_graphs_is_acyclic_equivalent_and_maximal(text):
    original = parse_module(text)
    for n, op in enumerate(op for op in original.walk() if isinstance(op, func.CallOp)):
        op.attributes["test.order"] = IntegerAttr(n, 64)  # program order of the extern calls
    parted = partition(original)  # verifies, and checks def-before-use in every block
    extern_calls = [op for op in parted.walk() if isinstance(op, func.CallOp) and "test.order" in op.attributes]
    order = [op.attributes["test.order"].value.data for op in extern_calls]
    assert order == sorted(order), "extern calls (unknown effects) must keep their program order"
    # partition, then inline the pieces back: the same ops on the same operands
    ids: dict[tuple, int] = {}
    assert dataflow(parted, ids) == dataflow(original, ids)
    g, users, after = caller_graph(parted)
    for op in live_ops(g):
        # what stays live in the caller: extern calls, calls to pieces, constants, the return
        assert op_kind(op) == "external" or compiled_callee(op) is not None or op.has_trait(ConstantLike) or (
            op.has_trait(IsTerminator)
        ), f"{op.name} left in the caller"
    calls = [op for op in g.body.block.ops if compiled_callee(op) is not None]
    for a in calls:
        for b in calls:
            if b in users[a]:
                # two pieces joined by an edge could not be merged: another path a ⇝ b exists
                # (through an extern call, or an effect order that must be kept)
                assert reaches(after, a, b, skip_direct=True)
