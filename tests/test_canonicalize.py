"""canonicalize on cortex IR: exact identities, fast-math opt-in, constant folding.

Every rewrite is checked two ways: the IR has the expected shape afterwards,
and the reference interpreter gives the same results before and after.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from xdsl.dialects import arith

import cortex
from cortex.dialects import folding
from cortex.dialects.canonicalization import CANONICAL, FAST_MATH, patterns_for
from cortex.dialects.tensor_ops import ConstantOp
from cortex.driver import run_passes
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.ir import parse_module, to_text
from cortex.passes.canonicalize import canonicalize

RNG = np.random.default_rng(7)


def cortex_ops(module) -> list[str]:
    return [op.name for op in module.walk() if op.name.startswith("cortex.")]


def results(module, entry: str, inputs) -> tuple:
    return cortex.reference(module, entry=entry, mode=None)(*inputs)


def rewrite(text: str, pipeline: str = "canonicalize"):
    """(before, after): the module parsed from `text`, and a copy run through `pipeline`."""
    before = parse_module(text)
    after = run_passes(parse_module(text), pipeline)
    after.verify()
    return before, after


def assert_same(before, after, entry: str, inputs, rtol: float = 1e-6) -> None:
    for a, b in zip(results(before, entry, inputs), results(after, entry, inputs), strict=True):
        assert_f32_close(b, a, ulps=ACCUMULATED)


def fn(body: str, args: str = "%x: tensor<3x4xf32>", result: str = "tensor<3x4xf32>") -> str:
    return f"func.func @f({args}) -> {result} {{\n{body}\n}}\n"


T = "tensor<3x4xf32>"
S = "tensor<f32>"

# (id, function body over %x: 3x4, cortex ops left after canonicalize)
IDENTITIES = [
    (
        "mul-one-right",
        f"""%one = cortex.constant dense<1.0> : {S}
  %r = cortex.mul %x, %one : ({T}, {S}) -> {T}
  func.return %r : {T}""",
        [],
    ),
    (
        "mul-one-left-not-splat",
        f"""%one = cortex.constant dense<[1.0, 1.0, 1.0, 1.0]> : tensor<4xf32>
  %r = cortex.mul %one, %x : (tensor<4xf32>, {T}) -> {T}
  func.return %r : {T}""",
        [],
    ),
    (
        "add-zero-both-sides",
        f"""%z = cortex.constant dense<0.0> : {T}
  %a = cortex.add %x, %z : ({T}, {T}) -> {T}
  %b = cortex.add %z, %a : ({T}, {T}) -> {T}
  func.return %b : {T}""",
        [],
    ),
    (
        "sub-zero-div-one",
        f"""%z = cortex.constant dense<0.0> : {S}
  %one = cortex.constant dense<1.0> : {S}
  %a = cortex.sub %x, %z : ({T}, {S}) -> {T}
  %b = cortex.div %a, %one : ({T}, {S}) -> {T}
  func.return %b : {T}""",
        [],
    ),
    (
        "pow-two",
        f"""%two = cortex.constant dense<2.0> : {S}
  %r = cortex.pow %x, %two : ({T}, {S}) -> {T}
  func.return %r : {T}""",
        ["cortex.mul"],
    ),
    (
        "relu-relu-relu",
        f"""%a = cortex.relu %x : {T} -> {T}
  %b = cortex.relu %a : {T} -> {T}
  %c = cortex.relu %b : {T} -> {T}
  func.return %c : {T}""",
        ["cortex.relu"],
    ),
    (
        "transpose-identity",
        f"""%a = cortex.transpose %x {{perm = array<i64: 1, 0>}} : {T} -> tensor<4x3xf32>
  %b = cortex.transpose %a {{perm = array<i64: 1, 0>}} : tensor<4x3xf32> -> {T}
  func.return %b : {T}""",
        [],
    ),
    (
        "reshape-chain",
        f"""%a = cortex.reshape %x : {T} -> tensor<12xf32>
  %b = cortex.reshape %a : tensor<12xf32> -> tensor<2x6xf32>
  %c = cortex.reshape %b : tensor<2x6xf32> -> tensor<6x2xf32>
  %d = cortex.relu %c : tensor<6x2xf32> -> tensor<6x2xf32>
  %e = cortex.reshape %d : tensor<6x2xf32> -> {T}
  func.return %e : {T}""",
        ["cortex.reshape", "cortex.relu", "cortex.reshape"],
    ),
]


@pytest.mark.parametrize("body,left", [(b, l) for _, b, l in IDENTITIES], ids=[i for i, _, _ in IDENTITIES])
def test_identity_rewrites(body, left):
    before, after = rewrite(fn(body))
    assert cortex_ops(after) == left
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    x[0, 0] = -0.0
    assert_same(before, after, "f", [x])


def test_transposes_compose_into_one():
    text = fn(
        """%a = cortex.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
  %b = cortex.transpose %a {perm = array<i64: 0, 2, 1>} : tensor<4x2x3xf32> -> tensor<4x3x2xf32>
  func.return %b : tensor<4x3x2xf32>""",
        args="%x: tensor<2x3x4xf32>",
        result="tensor<4x3x2xf32>",
    )
    before, after = rewrite(text)
    (op,) = [op for op in after.walk() if op.name == "cortex.transpose"]
    assert op.perm.get_values() == (2, 1, 0)
    assert_same(before, after, "f", [RNG.normal(size=(2, 3, 4)).astype(np.float32)])


@pytest.mark.parametrize(
    "body",
    [
        # broadcasting: x + zeros(2x3x4) is not x (the shape changes)
        f"""%z = cortex.constant dense<0.0> : tensor<2x3x4xf32>
  %r = cortex.add %x, %z : ({T}, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %s = cortex.reduce_sum %r {{axes = array<i64: 0>, keepdims = 0 : i64}} : tensor<2x3x4xf32> -> {T}
  func.return %s : {T}""",
        # 0 - x, 1 / x, x * (1 except one 2), x ** 2.5
        f"""%z = cortex.constant dense<0.0> : {S}
  %one = cortex.constant dense<1.0> : {S}
  %m = cortex.constant dense<[1.0, 1.0, 2.0, 1.0]> : tensor<4xf32>
  %p = cortex.constant dense<2.5> : {S}
  %a = cortex.sub %z, %x : ({S}, {T}) -> {T}
  %b = cortex.div %one, %a : ({S}, {T}) -> {T}
  %c = cortex.mul %b, %m : ({T}, tensor<4xf32>) -> {T}
  %d = cortex.abs %c : {T} -> {T}
  %e = cortex.pow %d, %p : ({T}, {S}) -> {T}
  func.return %e : {T}""",
    ],
    ids=["broadcast-guard", "non-identities"],
)
def test_non_identities_are_kept(body):
    before, after = rewrite(fn(body))

    def computations(module):
        return [n for n in cortex_ops(module) if n != "cortex.constant"]

    assert computations(after) == computations(before)
    assert_same(before, after, "f", [RNG.normal(size=(3, 4)).astype(np.float32)])


# ---------------------------------------------------------------- fast-math

FAST_BODY = f"""%z = cortex.constant dense<0.0> : {S}
  %a = cortex.mul %x, %z : ({T}, {S}) -> {T}
  %b = cortex.div %x, %x : ({T}, {T}) -> {T}
  %l = cortex.log %x : {T} -> {T}
  %c = cortex.exp %l : {T} -> {T}
  %s = cortex.add %a, %b : ({T}, {T}) -> {T}
  %r = cortex.add %s, %c : ({T}, {T}) -> {T}
  func.return %r : {T}"""


def test_fast_math_patterns_are_not_reachable_from_the_trait():
    for op_class, patterns in FAST_MATH.items():
        assert not set(map(type, patterns)) & set(map(type, patterns_for(op_class)))


@pytest.mark.parametrize("pipeline", ["canonicalize", "cortex-canonicalize", "cortex-canonicalize{fast-math=false}"])
def test_fast_math_rewrites_do_not_fire_by_default(pipeline):
    _, after = rewrite(fn(FAST_BODY), pipeline)
    assert {"cortex.div", "cortex.exp", "cortex.log"} <= set(cortex_ops(after))
    assert cortex_ops(after).count("cortex.mul") == 1


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_fast_math_rewrites_fire_when_asked_and_are_exact_on_positive_finite_inputs():
    before, after = rewrite(fn(FAST_BODY), "cortex-canonicalize{fast-math=true}")
    assert set(cortex_ops(after)) == {"cortex.constant", "cortex.add"}
    x = RNG.uniform(0.1, 10.0, size=(3, 4)).astype(np.float32)
    assert_same(before, after, "f", [x], rtol=1e-5)
    # ... and why they are opt-in: inf·0 and inf/inf are nan, the rewrite says 0 and 1.
    x[0, 0] = np.inf
    (exact,) = results(before, "f", [x])
    (fast,) = results(after, "f", [x])
    assert np.isnan(exact[0, 0]) and not np.isnan(fast[0, 0])


# ---------------------------------------------------------------- folding


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_examples_keep_their_results(name):
    spec = EXAMPLES[name]
    before, after = rewrite(spec.text(), "canonicalize,cse,dce")
    inputs = spec.make_inputs(0)
    assert_same(before, after, spec.entry, inputs, rtol=1e-5)
    for got, want in zip(results(after, spec.entry, inputs), spec.numpy_reference(*inputs)):
        assert_f32_close(got, want, ulps=ACCUMULATED)


def test_unoptimized_model_folds_and_simplifies():
    """The textbook pipeline exercise: 2·3 folds, ·1 goes, exp(x) is dead, the relus merge under cse."""
    spec = EXAMPLES["unoptimized_model"]
    _, after = rewrite(spec.text(), "canonicalize,cse")
    names = cortex_ops(after)
    assert "cortex.exp" not in names
    assert names.count("cortex.relu") == 2 and names.count("cortex.mul") == 1
    six = [op for op in after.walk() if isinstance(op, ConstantOp) and folding.constant_value(op.result).size == 1]
    assert sorted(float(folding.constant_value(c.result)) for c in six) == [1.0, 6.0]


def test_folding_gives_what_the_reference_interpreter_computes():
    """Constant-only graph: the folded constant holds exactly the interpreter's result."""
    w = RNG.normal(size=(4, 3, 3, 3)).astype(np.float32)
    x = RNG.normal(size=(1, 3, 6, 6)).astype(np.float32)

    def dense(a):
        return f"dense<{np.array2string(a, separator=', ', threshold=10**6, floatmode='unique')}>"

    text = f"""func.func @f() -> tensor<1x4x2x2xf32> {{
  %x = cortex.constant {dense(x)} : tensor<1x3x6x6xf32>
  %w = cortex.constant {dense(w)} : tensor<4x3x3x3xf32>
  %c = cortex.conv2d %x, %w {{strides = array<i64: 2, 2>}} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x2x2xf32>
  %s = cortex.sigmoid %c : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xf32>
  %p = cortex.max_pool %s {{kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 1, 1>}} : tensor<1x4x2x2xf32> -> tensor<1x4x2x2xf32>
  func.return %p : tensor<1x4x2x2xf32>
}}"""
    before, after = rewrite(text)
    assert cortex_ops(after) == ["cortex.constant"]
    (want,) = results(before, "f", [])
    (got,) = results(after, "f", [])
    np.testing.assert_array_equal(got, want)


def test_folding_calls_the_reference_kernel(monkeypatch):
    """One implementation of each op's meaning: folding asks run_kernel, nothing else."""
    calls = []
    real = folding.run_kernel

    def spy(op, values):
        calls.append(op.name)
        return real(op, values)

    monkeypatch.setattr(folding, "run_kernel", spy)
    rewrite(
        fn(
            f"""%a = cortex.constant dense<2.0> : {T}
  %b = cortex.tanh %a : {T} -> {T}
  func.return %b : {T}""",
            args="",
        )
    )
    assert "cortex.tanh" in calls


def test_center_crop_folds_from_the_shape():
    text = fn(
        """%c = cortex.center_crop %g {block = 16 : i64} : tensor<48x64xf32> -> tensor<3x4xf32>
  func.return %c : tensor<3x4xf32>""",
        args="%g: tensor<48x64xf32>",
        result="tensor<3x4xf32>",
    )
    before, after = rewrite(text)
    assert cortex_ops(after) == ["cortex.constant"]
    gray = RNG.uniform(0, 255, size=(48, 64)).astype(np.float32)
    (want,) = results(before, "f", [gray])
    (got,) = results(after, "f", [np.zeros_like(gray)])
    np.testing.assert_array_equal(got, want)


def test_what_does_not_fold(monkeypatch):
    monkeypatch.setattr(folding, "MAX_FOLDED_ELEMENTS", 4)
    text = """func.func @f(%frame: tensor<32x32x3xui8>) -> (tensor<2xf32>, tensor<6xf32>, f32, tensor<2xf32>) {
  %a = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = cortex.constant dense<1.0> : tensor<6xf32>
  %small = cortex.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %large = cortex.add %b, %b : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %g = cortex.constant dense<100.0> : tensor<32x32xf32>
  %sharp = cortex.blur_detector %g : tensor<32x32xf32> -> f32
  %s = cortex.state "s" : tensor<2xf32>
  cortex.update_state "s" = %small : tensor<2xf32>
  func.return %small, %large, %sharp, %s : tensor<2xf32>, tensor<6xf32>, f32, tensor<2xf32>
}"""
    _, after = rewrite(text)
    names = cortex_ops(after)
    assert names.count("cortex.add") == 1  # the 6-element result is over the (patched) limit
    assert {"cortex.blur_detector", "cortex.state", "cortex.update_state"} <= set(names)


# ---------------------------------------------------------------- score_fusion

FUSION = """func.func @f(%m0: tensor<2x3xf32>, %m1: tensor<2x3xf32>, %m2: tensor<2x3xf32>) -> tensor<2x3xf32> {{
  %w0 = arith.constant {w0} : f32
  %w1 = arith.constant {w1} : f32
  %w2 = arith.constant {w2} : f32
  %s = cortex.score_fusion(%m0, %m1, %m2) weights(%w0, %w1, %w2) {{terms = ["a", "b", "c"]}} : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}}"""


def maps():
    return [RNG.uniform(0, 1, size=(2, 3)).astype(np.float32) for _ in range(3)]


def test_score_fusion_drops_zero_weight_terms():
    before, after = rewrite(FUSION.format(w0="0.5", w1="0.0", w2="-0.0"))
    (fusion,) = [op for op in after.walk() if op.name == "cortex.score_fusion"]
    assert fusion.term_names == ("a",)
    assert "operandSegmentSizes = array<i32: 1, 1>" in to_text(after, generic=True)
    assert [op.value.value.data for op in after.walk() if isinstance(op, arith.ConstantOp)] == [0.5]
    inputs = maps()
    (want,) = results(before, "f", inputs)
    (got,) = results(after, "f", inputs)
    np.testing.assert_array_equal(got, want)


def test_score_fusion_with_no_weight_left_is_a_zero_map():
    before, after = rewrite(FUSION.format(w0="0.0", w1="0.0", w2="0.0"))
    assert cortex_ops(after) == ["cortex.constant"]
    inputs = maps()
    (got,) = results(after, "f", inputs)
    np.testing.assert_array_equal(got, results(before, "f", inputs)[0])
    assert not got.any()


def test_score_fusion_keeps_nonzero_weights():
    _, after = rewrite(FUSION.format(w0="0.5", w1="1.0e-30", w2="0.25"))
    (fusion,) = [op for op in after.walk() if op.name == "cortex.score_fusion"]
    assert fusion.term_names == ("a", "b", "c")


def test_canonical_table_is_keyed_by_cortex_ops():
    for op_class, patterns in CANONICAL.items():
        assert op_class.name.startswith("cortex.") and patterns
        assert set(patterns) <= set(patterns_for(op_class))


def test_canonicalize_helper_equals_the_pass():
    text = EXAMPLES["gelu_tanh"].text()
    via_pass = run_passes(parse_module(text), "cortex-canonicalize")
    module = parse_module(text)
    canonicalize(module)
    assert to_text(module) == to_text(via_pass)
