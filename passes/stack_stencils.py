"""`cortex-stack-stencils`: independent Gaussian blurs of one type → one multi-channel call.

Glow's operator stacking: N calls of the same stencil with the same
window on same-shaped images can be one call on an N-channel image, which
OpenCV filters in one pass over memory. `cortex.gaussian_blur` is variadic for
this: the pass merges blurs with equal properties and operand types that sit
in one block and are independent (no member reads another's result, directly
or through ops between them), into one op placed where the last member was.

Not in `cortex.compile`'s default passes, for two measured reasons
(benchmarks/bench_schedule.py, `stacking` rows): packing the images into one
interleaved array and unpacking the results costs more than the single call
saves (two and three float64 480×640 blurs ran ~10 % slower stacked:
benchmarks/README.md, "Figures behind the compiler's choices"), and OpenCV's multi-channel path rounds a few pixels differently in
the last bit, so the result is not the same bits as separate calls. The pass
stays for a kernel where it pays (an interleaved producer, no unpacking),
tested for equivalence within that rounding.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from cortex.dialects.stencil import GaussianBlurOp


def _key(op: GaussianBlurOp) -> tuple:
    return (op.ksize.value.data, op.sigma.value.data, str(op.images[0].type))


def _uses_before(op: Operation, results: set, block: Block, position: dict[Operation, int]) -> bool:
    """Whether an op of `block` before `op` (or `op` itself) reads one of `results` (at any depth)."""
    for r in results:
        for use in r.uses:
            user = use.operation
            while user.parent_block() is not block and user.parent_op() is not None:
                user = user.parent_op()
            if user.parent_block() is block and position[user] <= position[op]:
                return True
    return False


def stack_block(block: Block, max_images: int = 4) -> int:
    """Merge the independent single-image blurs of `block` (groups of up to `max_images`); returns merges made."""
    ops = list(block.ops)
    position = {op: i for i, op in enumerate(ops)}
    groups: dict[tuple, list[GaussianBlurOp]] = {}
    done: list[list[GaussianBlurOp]] = []
    for op in ops:
        if not isinstance(op, GaussianBlurOp) or len(op.images) != 1:
            continue
        key = _key(op)
        group = groups.get(key)
        if group is not None and (len(group) >= max_images or _uses_before(op, {r for g in group for r in g.results}, block, position)):
            done.append(group)
            group = None
        if group is None:
            group = groups[key] = []
        group.append(op)
    done.extend(groups.values())
    merges = 0
    for group in done:
        if len(group) < 2:
            continue
        last = group[-1]
        merged = GaussianBlurOp([g.images[0] for g in group], ksize=last.ksize.value.data, sigma=last.sigma.value.data)
        merged.attributes.update(last.attributes)
        Rewriter.insert_op(merged, InsertPoint.before(last))
        for g, r in zip(group, merged.results):
            r.name_hint = g.results[0].name_hint
            g.results[0].replace_all_uses_with(r)
            Rewriter.erase_op(g)
        merges += 1
    return merges


def stack_stencils(module: ModuleOp, max_images: int = 4) -> int:
    """Stack the blurs of every block of `module`; returns how many calls were made of several."""
    blocks = {op.parent_block() for op in module.walk() if isinstance(op, GaussianBlurOp)}
    return sum(stack_block(b, max_images) for b in blocks if b is not None)


@dataclass(frozen=True)
class StackStencilsPass(ModulePass):
    """cortex-stack-stencils{max-images=4}: independent same-typed Gaussian blurs → one multi-channel call."""

    name = "cortex-stack-stencils"
    max_images: int = 4

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stack_stencils(op, self.max_images)


__all__ = ["StackStencilsPass", "stack_stencils"]
