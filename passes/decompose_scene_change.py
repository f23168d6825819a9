"""`cortex-decompose-scene-change`: 1 − mean SSIM written as Gaussian blurs and elementwise ops.

`cortex.scene_change` is one OpenCV-backed stage to every other pass, yet
most of its work is five Gaussian blurs and elementwise algebra the
compiler can reason about: two of the blurs (of `prev_gray` and its square)
were computed one frame earlier on `gray` (temporal reuse,
`cortex-temporal-reuse`, carries them), several blurs of one shape may share
a call (operator stacking), and the precision is a choice. This pass
rewrites each scene change into exactly the kernel's formula
(`cortex.semantics.vision_kernels.scene_change`), same operations in the
same order, so with `precision=f64` (the default) the result is the same
bits:

    x, y   = cast(gray), cast(prev_gray)              (f64)
    μx, μy = G(x), G(y);   σxx, σyy, σxy = G(x·x), G(y·y), G(x·y)
    μxy = μx·μy;  μ² = μx·μx + μy·μy
    var = (σxx + σyy) − μ²;  cov = σxy − μxy
    ssim = ((2·μxy + C1)·(2·cov + C2)) / ((μ² + C1)·(var + C2))
    scene = to_scalar(1 − mean(ssim))                  (rounded to f32)

G is `cortex.gaussian_blur` (11×11, σ = 1.5, reflect-101: an extern bound to
OpenCV), the rest `cortex.cast/mul/add/sub/div/reduce_mean/to_scalar`
(compilable). `precision=f32` computes the same formula in float32 (no casts):
about twice as fast and not the same bits; `cortex.compile` applies it only
under `fast_math` or `precision="f32"`, and `benchmarks/scene_precision.py`
reports its error against float64 and whether any gate or reset decision
changes. The op itself stays in the dialect: the graph view, the profiler and
DCE see one stage; this pass runs inside `cortex.compile`'s pipeline, and
every op it makes carries `cortex.origin = "<scene's name>"`, so the compiled
profile and the stage split still count one scene-change stage.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, Float32Type, Float64Type, ModuleOp, StringAttr, TensorType, f32, f64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern, op_type_rewrite_pattern

from cortex.dialects import abi
from cortex.dialects import tensor_ops as ops
from cortex.dialects.stencil import GaussianBlurOp
from cortex.dialects.vision import SceneChangeOp
from cortex.errors import CortexError
from cortex.semantics import defaults as D
from cortex.semantics import vision_kernels as vk

PRECISIONS: dict[str, Float32Type | Float64Type] = {"f64": f64, "f32": f32}
"""The element type of each of `SCENE_PRECISIONS` (`cortex.semantics.defaults`, where the names live)."""


class _Builder:
    """Inserts ops before the scene change, naming each result `<scene>_<part>`."""

    def __init__(self, rewriter: PatternRewriter, base: str, element: Float32Type | Float64Type, shape: tuple[int, ...]):
        self.rewriter, self.base, self.element, self.shape = rewriter, base, element, shape

    def add(self, op: Operation, name: str) -> SSAValue:
        op.attributes[abi.ORIGIN] = StringAttr(self.base)  # profiles and stage groups see one stage
        self.rewriter.insert(op)
        for i, r in enumerate(op.results):
            r.name_hint = f"{self.base}_{name}" if len(op.results) == 1 else f"{self.base}_{name.split(',')[i]}"
        return op.results[0]

    def const(self, value: float, name: str) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(TensorType(self.element, []), [value])
        return self.add(ops.ConstantOp(attr), name)

    def blur(self, x: SSAValue, name: str) -> SSAValue:
        return self.add(GaussianBlurOp([x], ksize=D.SSIM_KSIZE, sigma=D.SSIM_SIGMA), name)

    def bin(self, cls: type[ops.BinaryOp], a: SSAValue, b: SSAValue, name: str) -> SSAValue:
        return self.add(cls(a, b), name)


class DecomposeSceneChange(RewritePattern):
    def __init__(self, precision: str):
        self.element = PRECISIONS[precision]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SceneChangeOp, rewriter: PatternRewriter) -> None:
        gray_t = op.gray.type
        assert isinstance(gray_t, TensorType)
        shape = tuple(gray_t.get_shape())
        base = op.result.name_hint or "scene"
        b = _Builder(rewriter, base, self.element, shape)
        el = self.element
        if isinstance(el, Float32Type):
            x, y = op.gray, op.prev_gray
        else:
            x = b.add(ops.CastOp(op.gray, el), "x")
            y = b.add(ops.CastOp(op.prev_gray, el), "y")
        # the products first, then the five blurs side by side (independent: stackable), then the algebra
        xx, yy, xy = b.bin(ops.MulOp, x, x, "xx"), b.bin(ops.MulOp, y, y, "yy"), b.bin(ops.MulOp, x, y, "xy")
        mu_x, mu_y = b.blur(x, "mu_x"), b.blur(y, "mu_y")
        s_xx, s_yy, s_xy = b.blur(xx, "s_xx"), b.blur(yy, "s_yy"), b.blur(xy, "s_xy")
        mu_xy = b.bin(ops.MulOp, mu_x, mu_y, "mu_xy")
        mu_xx = b.bin(ops.MulOp, mu_x, mu_x, "mu_xx")
        mu_yy = b.bin(ops.MulOp, mu_y, mu_y, "mu_yy")
        mu_sq = b.bin(ops.AddOp, mu_xx, mu_yy, "mu_sq")
        var_sum = b.bin(ops.SubOp, b.bin(ops.AddOp, s_xx, s_yy, "s_sum"), mu_sq, "var_sum")
        cov = b.bin(ops.SubOp, s_xy, mu_xy, "cov")
        two, c1, c2 = b.const(2.0, "two"), b.const(vk.SSIM_C1, "c1"), b.const(vk.SSIM_C2, "c2")
        numerator = b.bin(
            ops.MulOp,
            b.bin(ops.AddOp, b.bin(ops.MulOp, two, mu_xy, "two_mu_xy"), c1, "num_l"),
            b.bin(ops.AddOp, b.bin(ops.MulOp, two, cov, "two_cov"), c2, "num_r"),
            "num",
        )
        denominator = b.bin(
            ops.MulOp, b.bin(ops.AddOp, mu_sq, c1, "den_l"), b.bin(ops.AddOp, var_sum, c2, "den_r"), "den"
        )
        ssim = b.bin(ops.DivOp, numerator, denominator, "ssim")
        mean = b.add(ops.ReduceMeanOp(ssim, axes=(), keepdims=False), "mean")
        one = b.const(1.0, "one")
        value = b.bin(ops.SubOp, one, mean, "value")
        scene = ops.ToScalarOp(value, op.result.type)
        scene.attributes[abi.ORIGIN] = StringAttr(base)
        rewriter.replace(op, scene)
        scene.result.name_hint = base


def decompose_scene_change(module: ModuleOp, precision: str = "f64") -> ModuleOp:
    """Rewrite every `cortex.scene_change` of `module` in place (see the module docstring)."""
    if precision not in PRECISIONS:
        raise CortexError(f"unknown precision '{precision}' (known: {', '.join(PRECISIONS)})")
    PatternRewriteWalker(DecomposeSceneChange(precision), apply_recursively=False).rewrite_module(module)
    return module


@dataclass(frozen=True)
class DecomposeSceneChangePass(ModulePass):
    """cortex-decompose-scene-change{precision=f64}: each scene change → Gaussian blurs + elementwise SSIM."""

    name = "cortex-decompose-scene-change"
    precision: str = "f64"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        decompose_scene_change(op, self.precision)


__all__ = ["PRECISIONS", "DecomposeSceneChangePass", "decompose_scene_change"]
