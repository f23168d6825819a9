"""`cortex-fuse-linalg-elementwise`: fuse chains of elementwise `linalg.generic`s.

After `convert-cortex-to-linalg` every elementwise cortex op is its own
`linalg.generic` that writes a full intermediate tensor. This pass is the
counterpart of MLIR's `linalg-fuse-elementwise-ops` (producer into consumer)
restricted to the safe, common case, so a chain like `relu(x * 2 + 1)`
becomes one loop nest and no intermediate tensor is materialised.

A producer generic is fused into a consumer generic when:

- both have only `parallel` iterators;
- the producer has a single result, used exactly once, as an *input* of the
  consumer (never as its init/output);
- the producer's output indexing map is a permutation (no symbols), so each
  consumer iteration reads exactly one producer iteration;
- every op of the producer body is side-effect free, the body reads neither
  its output block argument nor `linalg.index`.

The fused generic keeps the consumer's iteration space. Its inputs are the
consumer's other inputs followed by the producer's inputs, with maps

    producer_input_map ∘ inverse(producer_output_map) ∘ consumer_operand_map

and an input that appears twice with the same map becomes one operand. The
producer body is cloned into the consumer body in place of the fused block
argument.

Provenance: the fused op's `cortex.origin` joins the producer's and the
consumer's origins with `+`, producer first, each name once (`"kx+kx2"`,
then `"kx+kx2+kx3"`), so the NumPy backend's per-source-op profile names
every source op whose work the fused loop now does. Source-op names never
contain `+` (they are SSA names or dialect op names).

xDSL's linalg ops carry no memory-effect traits, so the applier's DCE would
keep the dead producer: the pattern erases it, and its `tensor.empty` init,
itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import tensor
from xdsl.dialects.builtin import AffineMapAttr, ArrayAttr, ModuleOp, StringAttr
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import Rewriter
from xdsl.traits import is_side_effect_free

from cortex.dialects import abi


def _all_parallel(op: GenericOp) -> bool:
    return all(it.data == IteratorType.PARALLEL for it in op.iterator_types)


def _maps(op: GenericOp) -> list[AffineMap]:
    return [m.data for m in op.indexing_maps]


def _is_permutation(m: AffineMap) -> bool:
    return m.num_symbols == 0 and len(m.results) == m.num_dims and m.inverse_permutation() is not None


def _body_is_fusible(op: GenericOp) -> bool:
    """Pure scalar code that reads only the input block arguments."""
    block = op.body.block
    if any(arg.uses for arg in block.args[len(op.inputs) :]):
        return False
    for inner in block.walk():
        if isinstance(inner, IndexOp) or inner.regions:
            return False
        if not isinstance(inner, YieldOp) and not is_side_effect_free(inner):
            return False
    return True


def fusible_producer(consumer: GenericOp, operand_index: int) -> GenericOp | None:
    """The producer of the consumer's input `operand_index` if it may be fused, else None."""
    value = consumer.inputs[operand_index]
    producer = value.owner
    if not isinstance(producer, GenericOp) or producer is consumer:
        return None
    if len(producer.results) != 1 or len(producer.outputs) != 1:
        return None
    if not value.has_one_use():  # the one use is this input, not also an init or another op
        return None
    if producer.parent_block() is not consumer.parent_block():
        return None
    if not (_all_parallel(producer) and _all_parallel(consumer)):
        return None
    if not _is_permutation(_maps(producer)[-1]):
        return None
    if not _body_is_fusible(producer):
        return None
    return producer


def join_origins(*origins: Attribute | None) -> StringAttr | None:
    """`a` + `b+c` → `a+b+c`, each name once, in order (what is not a string is no origin)."""
    names: dict[str, None] = {}  # an ordered set: joining n origins stays linear
    for origin in origins:
        if not isinstance(origin, StringAttr):
            continue
        names.update(dict.fromkeys(origin.data.split("+")))
    return StringAttr("+".join(names)) if names else None


def _clone_body(ops: list[Operation], mapping: dict[SSAValue, SSAValue], into: Block) -> Operation:
    """Clone `ops` but the last (the yield) into `into`, extending `mapping`; return the yield."""
    *body, yield_op = ops
    for inner in body:
        clone = inner.clone(value_mapper=mapping)
        into.add_op(clone)
        mapping.update(zip(inner.results, clone.results))
    return yield_op


def fuse(producer: GenericOp, consumer: GenericOp, operand_index: int) -> GenericOp:
    """A new generic computing `consumer` with `producer` (feeding input `operand_index`) inlined."""
    consumer_maps, producer_maps = _maps(consumer), _maps(producer)
    n_in = len(consumer.inputs)
    to_producer_domain = producer_maps[-1].inverse_permutation()
    assert to_producer_domain is not None
    via = to_producer_domain.compose(consumer_maps[operand_index])

    # (value, map) pairs of the fused op's inputs, deduplicated.
    inputs: list[tuple[SSAValue, AffineMap]] = []

    def slot(value: SSAValue, m: AffineMap) -> int:
        key = (value, m)
        if key not in inputs:
            inputs.append(key)
        return inputs.index(key)

    consumer_slots = {i: slot(consumer.inputs[i], consumer_maps[i]) for i in range(n_in) if i != operand_index}
    producer_slots = [slot(v, m.compose(via)) for v, m in zip(producer.inputs, producer_maps)]

    c_block, p_block = consumer.body.block, producer.body.block
    arg_types: list = [None] * len(inputs)
    for i, s in consumer_slots.items():
        arg_types[s] = c_block.args[i].type
    for j, s in enumerate(producer_slots):
        arg_types[s] = p_block.args[j].type
    out_args = c_block.args[n_in:]
    block = Block(arg_types=[*arg_types, *(a.type for a in out_args)])
    sources = [*((s, p_block.args[j]) for j, s in enumerate(producer_slots)), *((s, c_block.args[i]) for i, s in consumer_slots.items())]
    for s, source in [*sources, *((len(inputs) + k, a) for k, a in enumerate(out_args))]:
        block.args[s].name_hint = block.args[s].name_hint or source.name_hint

    mapping: dict[SSAValue, SSAValue] = {}
    for j, s in enumerate(producer_slots):
        mapping[p_block.args[j]] = block.args[s]
    p_yield = _clone_body(list(p_block.ops), mapping, block)
    fused_value = mapping.get(p_yield.operands[0], p_yield.operands[0])

    mapping = {c_block.args[i]: block.args[s] for i, s in consumer_slots.items()}
    mapping[c_block.args[operand_index]] = fused_value
    mapping.update(zip(out_args, block.args[len(inputs) :]))
    c_yield = _clone_body(list(c_block.ops), mapping, block)
    block.add_op(c_yield.clone(value_mapper=mapping))

    fused = GenericOp(
        inputs=[v for v, _ in inputs],
        outputs=list(consumer.outputs),
        body=Region(block),
        indexing_maps=[AffineMapAttr(m) for _, m in inputs] + [AffineMapAttr(m) for m in consumer_maps[n_in:]],
        iterator_types=ArrayAttr(consumer.iterator_types.data),
        result_types=[r.type for r in consumer.results],
        doc=consumer.doc,
        library_call=consumer.library_call,
    )
    fused.attributes.update(consumer.attributes)
    origin = join_origins(producer.attributes.get(abi.ORIGIN), consumer.attributes.get(abi.ORIGIN))
    if origin is not None:
        fused.attributes[abi.ORIGIN] = origin
    for old, new in zip(consumer.results, fused.results):
        new.name_hint = old.name_hint
    return fused


def _erase_dead_init(value: SSAValue, rewriter: PatternRewriter) -> None:
    owner = value.owner
    if isinstance(owner, tensor.EmptyOp) and not owner.tensor.uses:
        rewriter.erase(owner)


class FuseElementwiseProducer(RewritePattern):
    """Fuse the first fusible producer of a consumer generic's inputs into it."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        for index in range(len(op.inputs)):
            producer = fusible_producer(op, index)
            if producer is None:
                continue
            fused = fuse(producer, op, index)
            rewriter.replace(op, fused)
            init = producer.outputs[0]
            rewriter.erase(producer)
            _erase_dead_init(init, rewriter)
            return


def absorbing_consumer(producer: GenericOp) -> GenericOp | None:
    """The generic that `producer` will be fused into, if any."""
    if len(producer.results) != 1 or not producer.results[0].has_one_use():
        return None
    use = next(iter(producer.results[0].uses))
    consumer = use.operation
    if not isinstance(consumer, GenericOp) or use.index >= len(consumer.inputs):
        return None
    return consumer if fusible_producer(consumer, use.index) is producer else None


@dataclass
class FusionNode:
    """A generic of a fusion tree: how the root's loop indices reach its own, and its fused producers."""

    op: GenericOp
    from_root: AffineMap
    producers: dict[int, GenericOp]


def fusion_tree(root: GenericOp) -> list[FusionNode]:
    """The root and every producer that fuses into it, transitively, in pre-order (consumers first).

    Fusing the whole tree at once gives what repeated producer-into-consumer
    fusion gives, but clones each body once: linear, where pairwise fusion
    re-clones the growing body at every step (quadratic on long chains).
    """
    nodes: list[FusionNode] = []
    rank = len(root.iterator_types)
    stack = [(root, AffineMap.identity(rank))]
    while stack:
        op, from_root = stack.pop()
        maps = _maps(op)
        producers = {i: p for i in range(len(op.inputs)) if (p := fusible_producer(op, i)) is not None}
        nodes.append(FusionNode(op, from_root, producers))
        for i in reversed(list(producers)):
            producer = producers[i]
            to_producer = _maps(producer)[-1].inverse_permutation()
            assert to_producer is not None
            stack.append((producer, to_producer.compose(maps[i].compose(from_root))))
    return nodes


def fuse_tree(nodes: list[FusionNode]) -> GenericOp:
    """One generic computing the root of `nodes` with every producer's body inlined."""
    root = nodes[0].op
    inputs: dict[tuple[SSAValue, AffineMap], int] = {}
    first_source: list[SSAValue] = []  # for each input slot, the block argument it replaces first
    for node in nodes:  # pre-order: the root's own inputs first, then each producer's
        maps = _maps(node.op)
        for i, value in enumerate(node.op.inputs):
            if i not in node.producers:
                key = (value, maps[i].compose(node.from_root))
                if key not in inputs:
                    inputs[key] = len(inputs)
                    first_source.append(node.op.body.block.args[i])
    out_args = root.body.block.args[len(root.inputs) :]
    arg_types = [a.type for a in first_source] + [a.type for a in out_args]
    block = Block(arg_types=arg_types)
    for arg, source in zip(block.args, [*first_source, *out_args]):
        arg.name_hint = source.name_hint

    scalar: dict[GenericOp, SSAValue] = {}
    for node in reversed(nodes):  # post-order: producers before their consumers
        args = node.op.body.block.args
        maps = _maps(node.op)
        mapping: dict[SSAValue, SSAValue] = {}
        for i, value in enumerate(node.op.inputs):
            if i in node.producers:
                mapping[args[i]] = scalar[node.producers[i]]
            else:
                mapping[args[i]] = block.args[inputs[(value, maps[i].compose(node.from_root))]]
        if node.op is root:
            mapping.update(zip(out_args, block.args[len(inputs) :]))
        yield_op = _clone_body(list(node.op.body.block.ops), mapping, block)
        if node.op is root:
            block.add_op(yield_op.clone(value_mapper=mapping))
        else:
            scalar[node.op] = mapping.get(yield_op.operands[0], yield_op.operands[0])

    fused = GenericOp(
        inputs=[v for v, _ in inputs],
        outputs=list(root.outputs),
        body=Region(block),
        indexing_maps=[AffineMapAttr(m) for _, m in inputs] + [AffineMapAttr(m) for m in _maps(root)[len(root.inputs) :]],
        iterator_types=ArrayAttr(root.iterator_types.data),
        result_types=[r.type for r in root.results],
        doc=root.doc,
        library_call=root.library_call,
    )
    fused.attributes.update(root.attributes)
    origin = join_origins(*(node.op.attributes.get(abi.ORIGIN) for node in reversed(nodes)))
    if origin is not None:
        fused.attributes[abi.ORIGIN] = origin
    for old, new in zip(root.results, fused.results):
        new.name_hint = old.name_hint
    return fused


def fuse_elementwise(module: Operation) -> None:
    """Fuse every maximal tree of fusible generics in `module` into its root (in place)."""
    roots = [op for op in module.walk() if isinstance(op, GenericOp) and absorbing_consumer(op) is None]
    for root in roots:
        nodes = fusion_tree(root)
        if len(nodes) == 1:
            continue
        fused = fuse_tree(nodes)
        Rewriter.replace_op(root, fused)
        for node in nodes[1:]:  # pre-order: each producer's only user is already gone
            init = node.op.outputs[0]
            Rewriter.erase_op(node.op)
            owner = init.owner
            if isinstance(owner, tensor.EmptyOp) and not owner.tensor.uses:
                Rewriter.erase_op(owner)


@dataclass(frozen=True)
class FuseElementwisePass(ModulePass):
    """Producer-into-consumer fusion of all-parallel `linalg.generic`s on tensors.

    Runs `fuse_elementwise` (whole fusion trees at once, linear time); the
    pairwise `FuseElementwiseProducer` pattern computes the same IR one
    producer at a time, for use inside other pattern sets.
    """

    name = "cortex-fuse-linalg-elementwise"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fuse_elementwise(op)


def count_generics(op: Operation) -> int:
    """How many `linalg.generic`s `op` holds (the figure the fusion lowers)."""
    return sum(isinstance(o, GenericOp) for o in op.walk())


__all__ = [
    "FuseElementwisePass",
    "FuseElementwiseProducer",
    "count_generics",
    "fuse",
    "fuse_elementwise",
    "fuse_tree",
    "fusible_producer",
    "fusion_tree",
    "join_origins",
]
