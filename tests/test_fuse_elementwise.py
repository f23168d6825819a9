"""cortex-fuse-linalg-elementwise: which generics fuse, and that fusion changes no result.

Results are compared on the NumPy backend (fused vs unfused lowered module,
same inputs) for every tensor example and for the L2 pipeline over a few
synthetic frames; upstream `mlir-opt` must accept every fused module.
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, REORDERED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker

import cortex
from cortex.backends.mlir.upstream import MLIR_BIN, verify_with_mlir_opt
from cortex.dialects import tensor_ops as t
from cortex.dialects.abi import ORIGIN
from cortex.dialects.base import tensor
from cortex.driver import compile_lowered, lower
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import make_context, parse_module, verify_located
from cortex.linalg_opt.fuse_elementwise import (
    FuseElementwisePass,
    FuseElementwiseProducer,
    count_generics,
    fuse_elementwise,
    join_origins,
)
from cortex.runtime.pipeline import LoadedProgram
from cortex.video.synthetic import SyntheticVideo

HAVE_MLIR = shutil.which(str(MLIR_BIN / "mlir-opt")) is not None


def fused_copy(lowered):
    module = lowered.clone()
    FuseElementwisePass().apply(make_context(), module)
    module.verify()
    return module


def runner(lowered, entry: str, mode: str | None) -> LoadedProgram:
    return compile_lowered(lowered, entry, mode)


def assert_same(a, b) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert_f32_close(np.asarray(y), np.asarray(x), ulps=REORDERED)


# ---------------------------------------------------------------- examples and L2


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_fuse_and_keep_results(name):
    spec = EXAMPLES[name]
    lowered = lower(cortex.parse(spec.text()))
    fused = fused_copy(lowered)
    assert count_generics(fused) < count_generics(lowered)
    plain, fast = runner(lowered, spec.entry, None), runner(fused, spec.entry, None)
    for seed in (0, 1):
        inputs = spec.make_inputs(seed)
        assert_same(plain(*inputs), fast(*inputs))
    if HAVE_MLIR:
        verify_with_mlir_opt(fused)


@pytest.fixture(scope="module")
def l2():
    lowered = lower(cortex.build_l2_pipeline(96, 128, 32))
    return lowered, fused_copy(lowered)


def test_l2_pipeline_fuses(l2):
    lowered, fused = l2
    before, after = count_generics(lowered), count_generics(fused)
    assert after < before
    # no fused op ends up with a dead producer or init left behind
    assert not any(isinstance(op, GenericOp) and not op.results[0].uses for op in fused.walk())


def test_l2_pipeline_same_results_over_frames(l2):
    lowered, fused = l2
    plain, fast = runner(lowered, "l2_frame", "balanced"), runner(fused, "l2_frame", "balanced")
    for frame in SyntheticVideo(96, 128).frames(4):
        assert_same(plain(frame), fast(frame))  # state threads through both runners alike
    assert_same(list(plain.state.values()), list(fast.state.values()))


@pytest.mark.skipif(not HAVE_MLIR, reason="mlir-opt not installed")
def test_l2_pipeline_fused_is_valid_upstream(l2):
    verify_with_mlir_opt(l2[1])


# ---------------------------------------------------------------- single rewrites

ID = "affine_map<(d0, d1) -> (d0, d1)>"
T = "tensor<4x8xf32>"


def generic(name, ins, ins_types, maps, body, out="tensor.empty() : " + T, iters='"parallel", "parallel"', res=T):
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    return f"""
    %{name}_init = {out}
    %{name} = linalg.generic {{indexing_maps = [{", ".join(maps)}], iterator_types = [{iters}]}}
        ins({", ".join(ins)} : {", ".join(ins_types)}) outs(%{name}_init : {res}) attrs = {{cortex.origin = "{name}"}} {{
    ^bb0({args}, %o: f32):
      {body}
    }} -> {res}"""


def module(body: str, ret: str = "%r", args: str = f"%x: {T}, %y: {T}", rtype: str = T):
    text = f"func.func @f({args}) -> ({rtype}) {{{body}\n    func.return {ret} : {rtype}\n}}"
    return parse_module(text, "<test>")


def run_f(m, *inputs):
    return runner(lower(m), "f", None)(*inputs)


X, Y = np.random.default_rng(3).normal(size=(2, 4, 8)).astype(np.float32)

SCALE = generic("s", ["%x"], [T], [ID, ID], "%c2 = arith.constant 2.0 : f32\n      %v = arith.mulf %a0, %c2 : f32\n      linalg.yield %v : f32")


def test_chain_fuses_to_one_generic_with_joined_origin():
    body = SCALE + generic("r", ["%s", "%y"], [T, T], [ID, ID, ID], "%v = arith.addf %a0, %a1 : f32\n      linalg.yield %v : f32")
    m = module(body)
    fused = fused_copy(m)
    (op,) = [o for o in fused.walk() if isinstance(o, GenericOp)]
    assert op.attributes[ORIGIN].data == "s+r"
    assert [v.name_hint for v in op.inputs] == ["y", "x"]
    assert_same(run_f(m, X, Y), run_f(fused, X, Y))
    assert_f32_close(run_f(fused, X, Y)[0], X * 2 + Y, ulps=REORDERED)


def test_shared_input_is_deduplicated():
    body = SCALE + generic("r", ["%s", "%x"], [T, T], [ID, ID, ID], "%v = arith.addf %a0, %a1 : f32\n      linalg.yield %v : f32")
    fused = fused_copy(module(body))
    (op,) = [o for o in fused.walk() if isinstance(o, GenericOp)]
    assert len(op.inputs) == 1
    assert_f32_close(run_f(fused, X, Y)[0], X * 3, ulps=REORDERED)


def test_transposed_consumer_and_permuted_producer_compose_maps():
    tr = "affine_map<(d0, d1) -> (d1, d0)>"
    tt = "tensor<8x4xf32>"
    prod = generic("p", ["%x"], [T], [ID, tr], "%v = arith.negf %a0 : f32\n      linalg.yield %v : f32", out=f"tensor.empty() : {tt}", res=tt)
    body = prod + generic("r", ["%p", "%y"], [tt, T], [tr, ID, ID], "%v = arith.subf %a0, %a1 : f32\n      linalg.yield %v : f32")
    m = module(body)
    fused = fused_copy(m)
    assert count_generics(fused) == 1
    assert_f32_close(run_f(fused, X, Y)[0], -X - Y, ulps=REORDERED)
    assert_same(run_f(m, X, Y), run_f(fused, X, Y))


def test_producer_with_two_users_is_not_fused():
    add = "%v = arith.addf %a0, %a1 : f32\n      linalg.yield %v : f32"
    body = SCALE + generic("r", ["%s", "%y"], [T, T], [ID, ID, ID], add)
    m = module(body, ret="%r, %s", rtype=f"{T}, {T}")
    fused = fused_copy(m)
    assert count_generics(fused) == 2  # %s is also returned: fusing would compute it twice
    assert_same(run_f(m, X, Y), run_f(fused, X, Y))


def test_reduction_producer_is_not_fused():
    red = generic(
        "s", ["%x"], [T], [ID, "affine_map<(d0, d1) -> (d0)>"], "%v = arith.addf %a0, %o : f32\n      linalg.yield %v : f32",
        out="arith.constant dense<0.0> : tensor<4xf32>", iters='"parallel", "reduction"', res="tensor<4xf32>",
    )
    body = red + generic(
        "r", ["%s"], ["tensor<4xf32>"], ["affine_map<(d0) -> (d0)>"] * 2, "%v = math.exp %a0 : f32\n      linalg.yield %v : f32",
        out="tensor.empty() : tensor<4xf32>", iters='"parallel"', res="tensor<4xf32>",
    )
    fused = fused_copy(module(body, rtype="tensor<4xf32>"))
    assert count_generics(fused) == 2


def test_join_origins():
    from xdsl.dialects.builtin import StringAttr

    assert join_origins(StringAttr("a+b"), StringAttr("b+c")).data == "a+b+c"
    assert join_origins(None, StringAttr("c")).data == "c"
    assert join_origins(None, None) is None


# ---------------------------------------------------------------- scale


def _chain(n: int, branchy: bool = False) -> ModuleOp:
    ty = tensor((2, 3))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", ([ty, ty], [ty]))
    with ImplicitBuilder(fn.body):
        v = fn.args[0]
        for k in range(n):
            if branchy and k % 3 == 2:
                v = t.AddOp(t.NegOp(v).result, t.ExpOp(fn.args[1]).result).result
            else:
                v = (t.MulOp(v, fn.args[1]) if k % 2 else t.TanhOp(v)).result
        func.ReturnOp(v)
    return module


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_long_elementwise_chain_fuses_to_one_generic():
    """A 3000-op chain (minutes with pairwise fusion) fuses; the result is checked against the reference."""
    module = _chain(3000)
    lowered = cortex.lower(module)
    fuse_elementwise(lowered)
    assert count_generics(lowered) == 1
    verify_located(lowered)


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(st.integers(1, 12), st.booleans())
@pytest.mark.timeout(120)
def test_tree_fusion_equals_pairwise_fusion(n, branchy):
    """The pass (whole trees) and the pairwise pattern give the same generics and the same numbers."""
    lowered = cortex.lower(_chain(n, branchy))
    tree, pairwise = lowered.clone(), lowered.clone()
    fuse_elementwise(tree)
    PatternRewriteWalker(GreedyRewritePatternApplier([FuseElementwiseProducer()]), apply_recursively=True).rewrite_module(pairwise)
    assert count_generics(tree) == count_generics(pairwise)
    rng = np.random.default_rng(n)
    x, y = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    got = [cortex.compile(m, entry="f", mode=None)(x, y)[0] for m in (tree, pairwise, lowered)]
    assert_f32_close(got[0], got[2], ulps=ACCUMULATED)
    assert_f32_close(got[1], got[2], ulps=ACCUMULATED)
