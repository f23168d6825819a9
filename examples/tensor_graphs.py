"""The small tensor graphs (a textbook graph per classic rewrite), as cortex-dialect `.mlir` examples.

Each example is a committed `examples/<name>.mlir` file, written in the
custom form `cortex-opt` prints, plus what a test needs to run it: the entry
function, seeded inputs, and an independent plain-NumPy formula of the graph
(`numpy_reference`) to check the reference interpreter and every pass
against.

The files are rendered from templates by this module
(`python -m cortex.examples.tensor_graphs` rewrites them) so that their
constants come from a seeded RNG; a test keeps the committed files equal to
`render(name)`. Constants are multiples of 1/16, exact in f32 and short in
decimal, so the text stays readable and NumPy sees the same values.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from cortex.semantics import defaults as D

HERE = Path(__file__).resolve().parent
PARAM_SEED = 2024
BN_EPSILON = D.BATCH_NORM_EPSILON
GELU_C = 0.7978845608  # sqrt(2/π) to 10 digits, as PyTorch's tanh GELU writes it
GELU_K = D.GELU_TANH_K


# ---- constants --------------------------------------------------------


def sixteenths(rng: np.random.Generator, shape, lo: float, hi: float) -> np.ndarray:
    """Uniform multiples of 1/16 in [lo, hi], as f32 (exact, short decimals)."""
    values = rng.integers(int(round(lo * 16)), int(round(hi * 16)) + 1, size=shape) / 16.0
    return (values + 0.0).astype(np.float32)  # + 0.0: no -0.0 in the text


@cache
def params(name: str) -> dict[str, np.ndarray]:
    """The deterministic constants of example `name` (read-only arrays)."""
    rng = np.random.default_rng([PARAM_SEED, sum(map(ord, name))])
    if name == "linear_bn":
        out = {
            "weight": sixteenths(rng, (8, 16), -0.5, 0.5),
            "bias": sixteenths(rng, (8,), -1.0, 1.0),
            "bn_scale": sixteenths(rng, (8,), 0.5, 1.5),
            "bn_bias": sixteenths(rng, (8,), -0.5, 0.5),
            "bn_mean": sixteenths(rng, (8,), -1.0, 1.0),
            "bn_var": sixteenths(rng, (8,), 0.5, 2.0),
        }
    elif name == "conv_bn":
        out = {
            "weight": sixteenths(rng, (8, 3, 3, 3), -0.5, 0.5),
            "bias": sixteenths(rng, (8,), -0.5, 0.5),
            "bn_scale": sixteenths(rng, (8,), 0.5, 1.5),
            "bn_bias": sixteenths(rng, (8,), -0.5, 0.5),
            "bn_mean": sixteenths(rng, (8,), -1.0, 1.0),
            "bn_var": sixteenths(rng, (8,), 0.5, 2.0),
        }
    else:
        out = {}
    for value in out.values():
        value.flags.writeable = False
    return out


# ---- NumPy formulas (independent of the dialect and its kernels) -------


def relu(x: np.ndarray) -> np.ndarray:
    return np.maximum(x, 0)


def batch_norm(y: np.ndarray, p: dict[str, np.ndarray]) -> np.ndarray:
    """Inference batch norm over axis 1, computed in float64."""
    shape = (1, -1) + (1,) * (y.ndim - 2)
    scale, bias, mean, var = (p[k].astype(np.float64).reshape(shape) for k in ("bn_scale", "bn_bias", "bn_mean", "bn_var"))
    return (y - mean) / np.sqrt(var + BN_EPSILON) * scale + bias


def unoptimized_model_ref(x: np.ndarray) -> tuple[np.ndarray]:
    x = x.astype(np.float64)
    a = relu(x)
    return ((a + relu(6.0 * a + 1.0)).astype(np.float32),)


def linear_bn_ref(x: np.ndarray) -> tuple[np.ndarray]:
    p = params("linear_bn")
    y = x.astype(np.float64) @ p["weight"].astype(np.float64).T + p["bias"]
    return (batch_norm(y, p).astype(np.float32),)


def conv2d_nchw(x: np.ndarray, w: np.ndarray, b: np.ndarray, pad: int) -> np.ndarray:
    """Stride-1 convolution as a sum of shifted products (cross-correlation, as ONNX)."""
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i : i + oh, j : j + ow]  # N, C, OH, OW
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return out + b.reshape(1, -1, 1, 1)


def conv_bn_ref(x: np.ndarray) -> tuple[np.ndarray]:
    p = params("conv_bn")
    y = conv2d_nchw(x.astype(np.float64), p["weight"].astype(np.float64), p["bias"].astype(np.float64), pad=1)
    return (batch_norm(y, p).astype(np.float32),)


def gelu_tanh_ref(x: np.ndarray) -> tuple[np.ndarray]:
    x = x.astype(np.float64)
    return ((0.5 * x * (1.0 + np.tanh(GELU_C * (x + GELU_K * x**3)))).astype(np.float32),)


def normal_inputs(*shapes: tuple[int, ...], scale: float = 1.0) -> Callable[[int], tuple[np.ndarray, ...]]:
    def make(seed: int) -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(seed)
        return tuple((rng.standard_normal(s) * scale).astype(np.float32) for s in shapes)

    return make


# ---- the .mlir text ---------------------------------------------------


def literal(v: float | np.ndarray) -> str:
    return repr(float(v))


def dense(arr: np.ndarray, indent: str, inline_rank: int = 1) -> str:
    """`dense<...>`, one line per `inline_rank`-D slice once the array is bigger than that."""

    def inline(a: np.ndarray) -> str:
        return literal(a) if a.ndim == 0 else "[" + ", ".join(inline(s) for s in a) + "]"

    def lines(a: np.ndarray, depth: int) -> str:
        if a.ndim <= inline_rank:
            return inline(a)
        sep = ",\n" + indent + " " * (depth + 1)
        return "[" + sep.join(lines(s, depth + 1) for s in a) + "]"

    if arr.ndim <= inline_rank:
        return f"dense<{inline(arr)}>"
    return f"dense<\n{indent}{lines(arr, 0)}>"


def ttype(shape: tuple[int, ...]) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def const(name: str, arr: np.ndarray, inline_rank: int = 1) -> str:
    return f"  %{name} = cortex.constant {dense(np.asarray(arr), ' ' * 4, inline_rank)} : {ttype(np.shape(arr))}"


S = "tensor<f32>"


def render_unoptimized_model() -> str:
    t = ttype((4, 8))
    return f"""\
// UnoptimizedModel, a graph with one chance for each classic graph rewrite,
// one op per line of its forward():
//   constant folding   %scale = 2.0 * 3.0
//   CSE                %b repeats %a
//   algebraic simpl.   %c = %a * 1.0
//   DCE                %d = exp(x) is never used
//   fusion             %e -> %f -> %g (mul, add, relu)
// Each Python literal is its own constant, as in the traced graph.
// Entry @unoptimized_model; NumPy: relu(x) + relu(6 * relu(x) + 1).
func.func @unoptimized_model(%x: {t}) -> {t} {{
  %two = cortex.constant dense<2.0> : {S}
  %three = cortex.constant dense<3.0> : {S}
  %scale = cortex.mul %two, %three : ({S}, {S}) -> {S}
  %a = cortex.relu %x : {t} -> {t}
  %b = cortex.relu %x : {t} -> {t}
  %one = cortex.constant dense<1.0> : {S}
  %c = cortex.mul %a, %one : ({t}, {S}) -> {t}
  %d = cortex.exp %x : {t} -> {t}
  %e = cortex.mul %b, %scale : ({t}, {S}) -> {t}
  %one_0 = cortex.constant dense<1.0> : {S}
  %f = cortex.add %e, %one_0 : ({t}, {S}) -> {t}
  %g = cortex.relu %f : {t} -> {t}
  %out = cortex.add %c, %g : ({t}, {t}) -> {t}
  func.return %out : {t}
}}
"""


def render_linear_bn() -> str:
    p = params("linear_bn")
    x, w, v, y = ttype((4, 16)), ttype((8, 16)), ttype((8,)), ttype((4, 8))
    consts = "\n".join(const(k, p[k]) for k in ("weight", "bias", "bn_scale", "bn_bias", "bn_mean", "bn_var"))
    return f"""\
// Linear (with bias) followed by BatchNorm, the classic fusion
// example: batch norm is affine, so it folds into
// the linear layer's weight and bias at inference time.
// Entry @linear_bn(x: 4x16) -> 4x8; NumPy:
//   y = x @ weight.T + bias
//   (y - bn_mean) / sqrt(bn_var + 1e-5) * bn_scale + bn_bias
// Constants: seeded (examples/tensor_graphs.py, params("linear_bn")).
func.func @linear_bn(%x: {x}) -> {y} {{
{consts}
  %y = cortex.linear %x, %weight, %bias : ({x}, {w}, {v}) -> {y}
  %out = cortex.batch_norm %y, %bn_scale, %bn_bias, %bn_mean, %bn_var : ({y}, {v}, {v}, {v}, {v}) -> {y}
  func.return %out : {y}
}}
"""


def render_conv_bn() -> str:
    p = params("conv_bn")
    x, w, v, y = ttype((1, 3, 16, 16)), ttype((8, 3, 3, 3)), ttype((8,)), ttype((1, 8, 16, 16))
    consts = "\n".join(
        [const("weight", p["weight"], inline_rank=2)]
        + [const(k, p[k]) for k in ("bias", "bn_scale", "bn_bias", "bn_mean", "bn_var")]
    )
    return f"""\
// Conv2d (8 filters 3x3, pads 1, with bias) followed by BatchNorm, the
// classic folding example: batch norm is a
// per-channel affine map, so it folds into the convolution's filters and bias.
// NCHW input, OIHW weight (one 3x3 kernel per line below).
// Entry @conv_bn(x: 1x3x16x16) -> 1x8x16x16; NumPy:
//   y = conv2d(x, weight, pads 1) + bias[None, :, None, None]
//   (y - bn_mean) / sqrt(bn_var + 1e-5) * bn_scale + bn_bias   (per channel)
// Constants: seeded (examples/tensor_graphs.py, params("conv_bn")).
func.func @conv_bn(%x: {x}) -> {y} {{
{consts}
  %y = cortex.conv2d %x, %weight, %bias {{pads = array<i64: 1, 1, 1, 1>}} : ({x}, {w}, {v}) -> {y}
  %out = cortex.batch_norm %y, %bn_scale, %bn_bias, %bn_mean, %bn_var : ({y}, {v}, {v}, {v}, {v}) -> {y}
  func.return %out : {y}
}}
"""


def render_gelu_tanh() -> str:
    t = ttype((4, 8))
    return f"""\
// GELU (tanh approximation) written out as single ops, the GeluApprox module
// of a traced PyTorch model, in the order PyTorch evaluates
//   0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
// A pattern rewrite can recognise it and replace it with
// cortex.gelu {{approximate = "tanh"}}.
// Entry @gelu_tanh(x: 4x8) -> 4x8.
func.func @gelu_tanh(%x: {t}) -> {t} {{
  %half = cortex.constant dense<0.5> : {S}
  %x_half = cortex.mul %half, %x : ({S}, {t}) -> {t}
  %k = cortex.constant dense<{GELU_K}> : {S}
  %kx = cortex.mul %k, %x : ({S}, {t}) -> {t}
  %kx2 = cortex.mul %kx, %x : ({t}, {t}) -> {t}
  %kx3 = cortex.mul %kx2, %x : ({t}, {t}) -> {t}
  %inner = cortex.add %x, %kx3 : ({t}, {t}) -> {t}
  %c = cortex.constant dense<{GELU_C}> : {S}
  %arg = cortex.mul %c, %inner : ({S}, {t}) -> {t}
  %th = cortex.tanh %arg : {t} -> {t}
  %one = cortex.constant dense<1.0> : {S}
  %one_plus = cortex.add %one, %th : ({S}, {t}) -> {t}
  %out = cortex.mul %x_half, %one_plus : ({t}, {t}) -> {t}
  func.return %out : {t}
}}
"""


# ---- the table the tests read ------------------------------------------


@dataclass(frozen=True)
class ExampleSpec:
    """One example graph: its file, entry function, inputs and NumPy formula."""

    name: str
    path: Path
    entry: str
    make_inputs: Callable[[int], tuple[np.ndarray, ...]]
    numpy_reference: Callable[..., tuple[np.ndarray, ...]]
    render: Callable[[], str]

    def text(self) -> str:
        return self.path.read_text()


EXAMPLES: dict[str, ExampleSpec] = {
    spec.name: spec
    for spec in (
        ExampleSpec(
            "unoptimized_model",
            HERE / "unoptimized_model.mlir",
            "unoptimized_model",
            normal_inputs((4, 8)),
            unoptimized_model_ref,
            render_unoptimized_model,
        ),
        ExampleSpec(
            "linear_bn", HERE / "linear_bn.mlir", "linear_bn", normal_inputs((4, 16)), linear_bn_ref, render_linear_bn
        ),
        ExampleSpec(
            "conv_bn", HERE / "conv_bn.mlir", "conv_bn", normal_inputs((1, 3, 16, 16)), conv_bn_ref, render_conv_bn
        ),
        ExampleSpec(
            "gelu_tanh", HERE / "gelu_tanh.mlir", "gelu_tanh", normal_inputs((4, 8), scale=2.0), gelu_tanh_ref, render_gelu_tanh
        ),
    )
}


def write_all() -> None:
    """Rewrite every example file from its template."""
    for spec in EXAMPLES.values():
        spec.path.write_text(spec.render())
        print(f"wrote {spec.path}", file=sys.stderr)


if __name__ == "__main__":
    write_all()
