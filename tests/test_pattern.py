"""The declarative matcher (rewriting/pattern.py): combinators, bindings, optional
operands, commutativity, one-use, explain(), and matching inside an xDSL RewritePattern."""

from __future__ import annotations

import pytest
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from cortex.dialects.tensor_ops import AddOp, Conv2dOp, LinearOp, MulOp, ReluOp, SubOp, TanhOp
from cortex.ir import parse_module
from cortex.rewriting.pattern import Any, Const, Not, Op, Optional, explain, match

T = "tensor<4xf32>"
S = "tensor<f32>"

SRC = f"""
func.func @f(%x: {T}, %y: {T}) -> ({T}, {T}, {T}, {T}) {{
  %two = cortex.constant dense<2.0> : {S}
  %r = cortex.relu %x : {T} -> {T}
  %rr = cortex.relu %r : {T} -> {T}
  %m = cortex.mul %two, %x : ({S}, {T}) -> {T}
  %s = cortex.sub %x, %two : ({T}, {S}) -> {T}
  %sq = cortex.mul %x, %x : ({T}, {T}) -> {T}
  %xy = cortex.mul %x, %y : ({T}, {T}) -> {T}
  %a = cortex.add %m, %r : ({T}, {T}) -> {T}
  func.return %rr, %s, %sq, %xy : {T}, {T}, {T}, {T}
}}
func.func @lin(%lx: tensor<2x3xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {{
  %w = cortex.constant dense<1.0> : tensor<4x3xf32>
  %with = cortex.linear %lx, %w, %b : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %without = cortex.linear %lx, %w : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  func.return %with, %without : tensor<2x4xf32>, tensor<2x4xf32>
}}
"""


@pytest.fixture
def v():
    """Every named value of SRC, by name."""
    module = parse_module(SRC)
    values = {}
    for op in module.walk():
        for r in op.results:
            values[r.name_hint] = r
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    values[arg.name_hint] = arg
    return values


def test_op_and_wildcard_bind(v):
    m = match(Op(ReluOp, Op(ReluOp, Any().bind("x")).bind("inner")), v["rr"])
    assert m is not None
    assert m["x"] is v["x"]
    assert m.op("inner") is v["r"].owner
    assert m.root is v["rr"]
    assert match(Op(ReluOp, Op(ReluOp)), v["r"]) is None  # relu of a block argument


def test_op_by_name_and_props():
    module = parse_module(
        "func.func @c(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32> {\n"
        "  %y = cortex.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} :"
        " (tensor<1x1x4x4xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x2x2xf32>\n"
        "  func.return %y : tensor<1x1x2x2xf32>\n}"
    )
    y = next(op for op in module.walk() if isinstance(op, Conv2dOp)).result
    assert match(Op("cortex.conv2d", props={"strides": (2, 2)}), y) is not None
    assert match(Op(Conv2dOp, props={"strides": (1, 1)}), y) is None
    assert match(Op(Conv2dOp, props={"pads": lambda p: sum(p) > 0}), y) is not None
    assert match(Op(Conv2dOp, predicate=lambda op: op.bias is not None), y) is None
    assert "strides = (1, 1), found strides = (2, 2)" in explain(Op(Conv2dOp, props={"strides": (1, 1)}), y)


def test_same_name_must_be_same_value(v):
    x = Any().bind("x")
    assert match(Op(MulOp, x, x), v["sq"]) is not None
    assert match(Op(MulOp, x, x), v["xy"]) is None
    assert "'x' is already bound to %x" in explain(Op(MulOp, x, x), v["xy"])


def test_commutative_add_mul_only(v):
    # %m = mul(2, x): matched as mul(x, 2) through commutativity.
    m = match(Op(MulOp, Any().bind("x"), Const(2.0).bind("k")), v["m"])
    assert m is not None and m["x"] is v["x"] and m["k"] is v["two"]
    # sub is not commutative: %s = sub(x, 2) does not match sub(2, x).
    assert match(Op(SubOp, Const(2.0), Any()), v["s"]) is None
    assert match(Op(SubOp, Any(), Const(2.0)), v["s"]) is not None
    # commutativity can be switched off
    assert match(Op(MulOp, Any(), Const(2.0), commutative=False), v["m"]) is None


def test_commutative_backtracks_into_nested_patterns(v):
    # add(mul(2, x), relu(x)) written the other way round, with x shared.
    x = Any().bind("x")
    p = Op(AddOp, Op(ReluOp, x), Op(MulOp, x, Const(2.0)))
    assert match(p, v["a"])["x"] is v["x"]


def test_or_and_not(v):
    relu_or_mul = Op(ReluOp) | Op(MulOp)
    assert match(relu_or_mul, v["r"]) is not None
    assert match(relu_or_mul, v["m"]) is not None
    assert match(relu_or_mul, v["s"]) is None
    # AND: both on the same value, bindings combined
    both = Op(MulOp, Any().bind("a"), Any()).bind("m") & Op(MulOp, Any(), Any().bind("b"))
    m = match(both, v["xy"])
    assert m["m"] is v["xy"] and {m["a"], m["b"]} <= {v["x"], v["y"]}
    assert match(Op(MulOp) & Op(ReluOp), v["m"]) is None
    # NOT
    assert match(Not(Const()), v["x"]) is not None
    assert match(~Const(), v["two"]) is None
    assert match(Op(MulOp, ~Const(), ~Const()), v["xy"]) is not None
    assert match(Op(MulOp, ~Const(), ~Const()), v["m"]) is None
    assert "expected anything but Const()" in explain(Op(MulOp, ~Const(), Any(), commutative=False), v["m"])


def test_bindings_backtrack_across_and_and_or(v):
    # %m = mul(%two, %x). The left part first binds a = %two; the right part
    # (operand 1, not a constant) needs a = %x, so the left part must retry
    # with its operands swapped.
    p = Op(MulOp, Any().bind("a"), Any()) & Op(MulOp, Any(), Not(Const()).bind("a"), commutative=False)
    assert match(p, v["m"])["a"] is v["x"]
    # OR: the first alternative binds b, then fails later; the second starts clean.
    q = Op(MulOp, Const().bind("b") | Any().bind("b"), Any(), commutative=False) & Op(MulOp, Any(), Any().bind("b"))
    assert match(q, v["sq"])["b"] is v["x"]
    assert match(q, v["m"])["b"] is v["two"]  # via the commuted right part


def test_optional_bias(v):
    p = Op(LinearOp, Any(), Const().bind("w"), Optional(Any().bind("bias")))
    with_bias, without = match(p, v["with"]), match(p, v["without"])
    assert with_bias is not None and with_bias["bias"] is v["b"]
    assert without is not None and "bias" not in without and without["w"] is v["w"]
    # A required third operand rejects the linear without bias, and says so.
    required = Op(LinearOp, Any(), Any(), Any())
    assert match(required, v["without"]) is None
    assert "expected Any(), found no operand (absent)" in explain(required, v["without"])
    # A present operand must still match the optional's inner pattern.
    assert match(Op(LinearOp, Any(), Any(), Optional(Const())), v["with"]) is None
    # Too many operands for the pattern.
    assert "at most 2 operands, found 3" in explain(Op(LinearOp, Any(), Any()), v["with"])


def test_const_value_tolerance_and_predicate(v):
    assert match(Const(2.0), v["two"]) is not None
    assert match(Const(2.0000001), v["two"]) is None
    assert match(Const(2.0000001, tol=1e-6), v["two"]) is not None
    assert match(Const(predicate=lambda a: a.ndim == 0), v["two"]) is not None
    assert match(Const(), v["x"]) is None
    assert "found %two = cortex.constant holding" in explain(Const(3.0), v["two"])
    m = match(Const().bind("c"), v["two"])
    assert float(m.constant("c")) == 2.0


def test_one_use(v):
    # %r feeds %rr and %a; %rr is only returned once.
    assert match(Op(ReluOp, one_use=True), v["r"]) is None
    assert "to have one use, it has 2" in explain(Op(ReluOp, one_use=True), v["r"])
    assert match(Op(ReluOp, one_use=True), v["rr"]) is not None


def test_explain_reports_the_deepest_failure(v):
    p = Op(ReluOp, Op(ReluOp, Op(ReluOp)))
    message = explain(p, v["rr"])
    assert message == "at cortex.relu > cortex.relu > cortex.relu: expected cortex.relu, found %x (block argument #0)"
    assert explain(Op(TanhOp), v["rr"]) == "at cortex.tanh: expected cortex.tanh, found %rr = cortex.relu"
    assert explain(Op(ReluOp, Any().bind("x")), v["r"]).startswith("matched: x = %x")


class FoldReluOfRelu(RewritePattern):
    """The module docstring's example: match for the tree, the rewriter for the change."""

    def __init__(self, seen: list[str]):
        self.seen = seen

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp, rewriter: PatternRewriter, /) -> None:
        self.seen.append(op.result.name_hint or "")
        if (m := match(Op(ReluOp, Op(ReluOp, Any()).bind("inner")), op.result)) is not None:
            rewriter.replace(op, [], [m.op("inner").results[0]])


def test_a_rewrite_pattern_matches_with_the_matcher_under_xdsls_walker():
    """Rooted at cortex.relu, so the walker hands it relus only; the outer relu of relu∘relu goes, the
    inner one (whose operand is a block argument) stays; other patterns of the applier see the rest."""
    module = parse_module(SRC)
    seen: list[str] = []
    PatternRewriteWalker(GreedyRewritePatternApplier([FoldReluOfRelu(seen)], dce_enabled=False)).rewrite_module(module)
    module.verify()
    assert sorted(set(seen)) == ["r", "rr"]
    relus = [op for op in module.walk() if op.name == "cortex.relu"]
    assert [op.result.name_hint for op in relus] == ["r"]
    (ret,) = [op for op in module.walk() if op.name == "func.return" and len(op.operands) == 4]
    assert ret.operands[0] is relus[0].result


def test_the_matcher_only_matches():
    """One rewrite idiom: rewriting/ holds no rewrite engine (no RewritePattern of its own); the fusion
    passes' rewrites are xDSL RewritePatterns, as the canonicalisations are, applied by xDSL's walker."""
    import inspect

    from cortex.dialects.canonicalization import CANONICAL
    from cortex.passes.fuse_batch_norm import FUSE_BATCH_NORM
    from cortex.passes.recognize_gelu import RECOGNIZE_GELU
    from cortex.rewriting import pattern

    engines = [n for n, c in vars(pattern).items() if inspect.isclass(c) and issubclass(c, RewritePattern)]
    assert engines == []
    canonical = [p for patterns in CANONICAL.values() for p in patterns]
    for rewrite in (*FUSE_BATCH_NORM, *RECOGNIZE_GELU, *canonical):
        assert isinstance(rewrite, RewritePattern)
    assert len(FUSE_BATCH_NORM) == 2 and len(RECOGNIZE_GELU) == 2
