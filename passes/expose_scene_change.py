"""`cortex-expose-scene-change`: the value cortex-run's report shows, made a result of the entry (like the
blur gate's, `cortex-expose-blur-gate`).

`expose_scene_change` returns the scene-change measure of each frame — the value
`cortex.temporal_smooth` compares with its `reset_threshold` to restart smoothing
at a cut — as one more f32 result of the entry. The L2 pipeline computes it only
on frames the blur gate lets through, inside the gate's `scf.if`: the `if` gets
one more result, the measure on the scoring side and NaN (not measured) on the
gated side. Both backends then report the very value the pipeline used, with no
recomputation and no hook in the backends.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FloatAttr, ModuleOp, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from cortex.dialects import SceneChangeOp, TemporalSmoothOp
from cortex.errors import CortexError


@dataclass(frozen=True)
class SceneProbe:
    """Where the scene measure comes out (result index) and what a cut is (measure > reset_threshold)."""

    index: int
    reset_threshold: float


def _lift_out_of_if(if_op: scf.IfOp, value: SSAValue) -> SSAValue:
    """`value`, defined inside one region of `if_op`, as a new last result of it (NaN from the other region)."""
    new_yields = []
    for region in if_op.regions:
        block = region.block
        yield_op = block.last_op
        assert isinstance(yield_op, scf.YieldOp)
        inside = _defined_in(value, region)
        if inside:
            extra = value
        else:
            nan = arith.ConstantOp(FloatAttr(float("nan"), f32))
            block.insert_op_before(nan, yield_op)
            extra = nan.result
        new_yields.append((yield_op, scf.YieldOp(*yield_op.arguments, extra)))
    for old, new in new_yields:
        Rewriter.replace_op(old, new)
    regions = [if_op.detach_region(r) for r in list(if_op.regions)]
    new_if = scf.IfOp(if_op.cond, [*if_op.result_types, f32], regions[0], regions[1] if len(regions) > 1 else None)
    Rewriter.replace_op(if_op, new_if, new_results=list(new_if.results[:-1]))
    return new_if.results[-1]


def _defined_in(value: SSAValue, region) -> bool:
    owner = value.owner
    op: Operation | None = owner if isinstance(owner, Operation) else owner.parent_op() if isinstance(owner, Block) else None
    while op is not None:
        if op.parent_region() is region:
            return True
        op = op.parent_op()
    return False


def expose_scene_change(module: ModuleOp, function: func.FuncOp) -> SceneProbe | None:
    """Make `function` also return its scene-change measure (f32); None when it has not exactly one
    `cortex.scene_change`, or it sits inside something other than `scf.if`s."""
    scenes = [op for op in function.walk() if isinstance(op, SceneChangeOp)]
    if len(scenes) != 1:
        return None
    reset = reset_threshold(module)
    value: SSAValue = scenes[0].results[0]
    parent = scenes[0].parent_op()
    while parent is not function:
        if not isinstance(parent, scf.IfOp) or len(parent.regions) != 2:
            return None
        value = _lift_out_of_if(parent, value)
        lifted = value.owner
        assert isinstance(lifted, Operation)
        parent = lifted.parent_op()  # the new scf.if's parent (the old one is gone)
    ret = function.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    index = len(ret.arguments)
    Rewriter.replace_op(ret, func.ReturnOp(*ret.arguments, value))
    function.function_type = func.FunctionType.from_lists(
        function.function_type.inputs.data, [*function.function_type.outputs.data, f32]
    )
    if function.res_attrs is not None:
        function.res_attrs = ArrayAttr([*function.res_attrs.data, DictionaryAttr({})])
    return SceneProbe(index, reset)


def reset_threshold(module: ModuleOp) -> float:
    """The scene measure above which the pipeline's temporal smoothing restarts (a cut); 0.5 without one."""
    smooth = [op for op in module.walk() if isinstance(op, TemporalSmoothOp)]
    return float(smooth[0].reset_threshold.value.data) if smooth else 0.5


@dataclass(frozen=True)
class ExposeSceneChangePass(ModulePass):
    """cortex-expose-scene-change{entry=l2_frame}: @entry also returns its scene-change measure (f32, NaN on
    frames the blur gate skips); left as it is without exactly one scene change (see the module doc)."""

    name = "cortex-expose-scene-change"
    entry: str = "l2_frame"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        function = next((f for f in op.ops if isinstance(f, func.FuncOp) and f.sym_name.data == self.entry), None)
        if function is None:
            raise CortexError(f"no function '@{self.entry}' to expose the scene change of")
        expose_scene_change(op, function)


__all__ = ["ExposeSceneChangePass", "SceneProbe", "expose_scene_change", "reset_threshold"]
