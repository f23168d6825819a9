"""cortex-opt's --verify-each-pass-semantics on shape-generic input and as the usage line spells it;
the lexer's message for a prefix with no name; the reference interpreter's floating-point policy.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass

import cortex
from cortex.dialects import EncoderOp
from cortex.examples.l2_pipeline import L2_PIPELINE
from cortex.ir import InvalidIRError
from cortex.tools.cortex_opt import CortexOptMain, main, normalise_argv

SOFTMAX = """\
func.func @graph(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = cortex.softmax %x {axis = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""
BIND = "cortex-specialize-shapes{shapes=64x96x3}"


def run(capsys, *argv: str, driver=CortexOptMain) -> tuple[int, str, str]:
    rc = main(list(argv), driver=driver)
    out, err = capsys.readouterr()
    return rc, out, err


@dataclass(frozen=True)
class LowerQualityPass(ModulePass):
    """Keeps the IR valid but changes what it computes (every encoder at quality 5)."""

    name = "test-lower-quality"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for encoder in op.walk():
            if isinstance(encoder, EncoderOp):
                encoder.quality = IntegerAttr(5, i64)


class QualityDriver(CortexOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        self.register_pass(LowerQualityPass.name, lambda: LowerQualityPass)


def test_the_frame_count_may_follow_the_flag_as_the_usage_line_shows(capsys, tmp_path):
    assert normalise_argv(["in.mlir", "--verify-each-pass-semantics", "2"]) == ["in.mlir", "--verify-each-pass-semantics=2"]
    assert normalise_argv(["--verify-each-pass-semantics", "in.mlir"]) == ["--verify-each-pass-semantics=3", "in.mlir"]
    path = tmp_path / "g.mlir"
    path.write_text(SOFTMAX)
    rc, out, err = run(capsys, str(path), "-p", "canonicalize", "--verify-each-pass-semantics", "2")
    assert (rc, err) == (0, "") and "cortex.softmax" in out


def test_the_bundled_shape_generic_pipeline_is_checked_once_its_shapes_are_bound(capsys):
    rc, out, err = run(capsys, str(L2_PIPELINE), "-p", f"canonicalize,{BIND},canonicalize,cse",
                       "--verify-each-pass-semantics", "1")
    assert (rc, err) == (0, "")
    assert "tensor<64x96x3xui8>" in out


def test_a_pass_after_the_binding_that_changes_results_is_named(capsys):
    rc, out, err = run(capsys, str(L2_PIPELINE), "-p", f"{BIND},test-lower-quality",
                       "--verify-each-pass-semantics=1", driver=QualityDriver)
    assert rc == 1 and out == ""
    assert err.startswith("error: pass 'test-lower-quality' changed the results of @l2_frame"), err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("  ^ bad", "expected a block label (such as ^bb0) after '^'"),
        ("  # bad", "expected an attribute alias name (such as #map) after '#'"),
        ("  % = cortex.weight \"wc\" : f32", "expected a value name (such as %x or %0) after '%'"),
        ("  %x = cortex.weight \"wc\" : ! f32", "expected a type alias name (such as !t) after '!'"),
    ],
)
def test_a_prefix_without_a_name_says_what_was_expected(line, message):
    with pytest.raises(InvalidIRError) as e:
        cortex.parse(f"func.func @f() {{\n{line}\n  func.return\n}}\n")
    assert str(e.value).startswith("<string>:2:")
    assert str(e.value).endswith(f"error: {message}")
    assert "{first_char}" not in str(e.value)


OVERFLOWING = """\
func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = cortex.mul %x, %x : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %z = cortex.sub %y, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %z : tensor<3xf32>
}
"""


def test_the_reference_interpreter_warns_no_more_than_the_compiled_code():
    x = np.array([np.nan, np.inf, -3e38], np.float32)
    module = cortex.parse(OVERFLOWING)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning would fail the call
        compiled = cortex.compile(module, entry="f", mode=None)(x)[0]
        reference = cortex.reference(module, entry="f", mode=None)(x)[0]
    np.testing.assert_array_equal(reference, compiled)
    assert np.isnan(reference).all()
