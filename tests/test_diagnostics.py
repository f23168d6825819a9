"""Diagnostics: bad input is one located diagnostic (or one CortexError), never a traceback.

A regression corpus: every case once broke that promise. Sections:
(1) structural IR the verifier accepted, (2) non-finite and degenerate values,
(3) internal errors where a diagnostic belongs, and cases the fuzz campaign
found. The Python API's errors are in test_api_errors.py, fusion at scale in
test_fuse_elementwise.py.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import FloatAttr, ModuleOp, StringAttr, f32, i1
from xdsl.ir import Block, Region
from xdsl.utils.exceptions import VerifyException

import cortex
from cortex.backends.numpy.codegen import value_expr
from cortex.backends.numpy.syntax import code
from cortex.dialects import tensor_ops as t
from cortex.dialects.base import tensor
from cortex.dialects.state import StateOp, UpdateStateOp
from cortex.dialects.vision import CenterCropOp, EncoderOp
from cortex.ir import CortexError, InvalidIRError, verify_located
from cortex.tools import cortex_opt, cortex_run

ROOT = Path(__file__).resolve().parent.parent
L2_TEXT = cortex.to_text(cortex.build_l2_pipeline(480, 640))  # the static form of the bundled (shape-generic) pipeline
ONE_LOCATED_LINE = re.compile(r"^\S+:\d+:\d+: error: [^\n]+$")
FRAME = np.zeros((64, 64, 3), np.uint8)


def opt(capsys, *argv: str) -> tuple[int, str]:
    rc = cortex_opt.main(list(argv))
    return rc, capsys.readouterr().err


def assert_clean(rc: int, err: str, message: str) -> None:
    """Exit 1 with the message; no traceback, no internal error."""
    assert rc == 1, err
    assert message in err
    assert "Traceback" not in err and "internal error" not in err


# ---------------------------------------------------------------- (1) structural IR

ELSE_YIELDS_NOTHING = """func.func @f(%c: i1, %x: f32) -> f32 {
  %r = scf.if %c -> (f32) {
    scf.yield %x : f32
  } else {
    scf.yield
  }
  func.return %r : f32
}"""

USE_BEFORE_DEF = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = cortex.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = cortex.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}"""

TWO_STATE_TYPES = """func.func @f(%x: tensor<4xf32>, %y: f32) {
  cortex.update_state "s" = %x : tensor<4xf32>
  cortex.update_state "s" = %y : f32
  func.return
}"""

NON_ASCII_STATE = """func.func @f(%x: tensor<4xf32>) {
  cortex.update_state "s\u00e9" = %x : tensor<4xf32>
  func.return
}"""


@pytest.mark.parametrize(
    "text,where,message",
    [
        (ELSE_YIELDS_NOTHING, "5:5", "yields nothing, but the parent 'scf.if' expects (f32)"),
        (USE_BEFORE_DEF, "2:8", "operand #1 (%b) is used before it is defined"),
        (TWO_STATE_TYPES, "3:3", "state 's' has type f32 here but is updated as tensor<4xf32>"),
        (NON_ASCII_STATE, "2:3", "must be printable ASCII"),
    ],
    ids=["else-yields-nothing", "use-before-def", "two-state-types", "non-ascii-state"],
)
def test_structural_errors_are_located(capsys, tmp_path, text, where, message):
    with pytest.raises(InvalidIRError) as info:
        cortex.parse(text)
    assert ONE_LOCATED_LINE.match(str(info.value)), str(info.value)
    assert f"<string>:{where}: error:" in str(info.value) and message in str(info.value)
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    rc, err = opt(capsys, str(path))
    assert_clean(rc, err, f"bad.mlir:{where}: error:")


def _if_module(yield_value: bool) -> ModuleOp:
    """scf.if -> (f32) built in Python, its else-branch yielding nothing unless `yield_value`."""
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", ([i1, f32], [f32]))
    with ImplicitBuilder(fn.body):
        branch = scf.IfOp(fn.args[0], [f32], Region(Block()), Region(Block()))
        func.ReturnOp(branch.results[0])
    with ImplicitBuilder(branch.true_region):
        scf.YieldOp(fn.args[1])
    with ImplicitBuilder(branch.false_region):
        scf.YieldOp(*([fn.args[1]] if yield_value else []))
    return module


def test_modules_built_in_python_are_verified_by_every_entry_point():
    bad = _if_module(yield_value=False)
    verify_located(_if_module(yield_value=True))
    for call in (
        lambda: cortex.lower(bad),
        lambda: cortex.compile(bad, entry="f", mode=None),
        lambda: cortex.reference(bad, entry="f", mode=None),
        lambda: cortex.run_passes(bad, "canonicalize"),
    ):
        with pytest.raises(CortexError, match="yields nothing, but the parent 'scf.if' expects"):
            call()


def test_value_from_a_region_that_does_not_enclose_the_use():
    """Only Python can build this (the parser scopes names); partitioning it used to crash."""
    module = ModuleOp([])
    ty = tensor((4,))
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", ([i1, ty], [ty]))
    with ImplicitBuilder(fn.body):
        branch = scf.IfOp(fn.args[0], [], Region(Block()))
        with ImplicitBuilder(branch.true_region):
            inner = t.NegOp(fn.args[1])
            scf.YieldOp()
        outer = t.AddOp(inner.result, fn.args[1])
        func.ReturnOp(outer.result)
    inner.result.name_hint = "inner"
    with pytest.raises(CortexError, match=r"operand #0 \(%inner\) is defined in a region that does not enclose this use"):
        cortex.run_passes(module, "cortex-partition")
    with pytest.raises(CortexError, match="does not enclose"):
        cortex.reference(module, entry="f", mode=None)


def test_state_name_that_would_not_round_trip_is_rejected_when_built():
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", ([tensor((4,))], []))
    with ImplicitBuilder(fn.body):
        state = StateOp("s", tensor((4,)))
        func.ReturnOp()
    with pytest.raises(VerifyException, match="printable ASCII"):  # builders check their typing rule
        UpdateStateOp("s\u00e9", fn.args[0])
    state.properties["name"] = StringAttr('a"b')
    with pytest.raises(CortexError, match="printable ASCII"):
        verify_located(module)


def test_dominance_check_is_linear_and_iterative_on_a_long_chain():
    """10k ops in one block and 90 nested scf.ifs verify without recursion trouble."""
    ty = tensor((2,))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", ([ty], [ty]))
    with ImplicitBuilder(fn.body):
        v = fn.args[0]
        for _ in range(10_000):
            v = t.NegOp(v).result
        func.ReturnOp(v)
    verify_located(module)
    nested = "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * 90 + "}\n" * 90 + "func.return\n}\n"
    verify_located(cortex.parse(nested))


# ---------------------------------------------------------------- (2) non-finite and degenerate values

NAN = "0x7FC00000"
INF = "0x7F800000"


@pytest.mark.parametrize(
    "old,new,message",
    [
        ("cortex.encoder %frame, %score", f"cortex.encoder %frame, %score {{threshold = {NAN} : f32}}", "'threshold' must be a finite number, got nan"),
        ("cortex.center_crop %gray", f"cortex.center_crop %gray {{sigma = {NAN} : f32}}", "'sigma' must be a finite number"),
        ("cortex.center_crop %gray", f"cortex.center_crop %gray {{sigma = {INF} : f32}}", "'sigma' must be a finite number, got inf"),
        ("%fused, %prev_score, %scene", f"%fused, %prev_score, %scene {{alpha = {NAN} : f32}}", "'alpha' must be a finite number"),
    ],
    ids=["threshold-nan", "sigma-nan", "sigma-inf", "alpha-nan"],
)
def test_non_finite_properties_are_rejected(old, new, message):
    assert old in L2_TEXT
    with pytest.raises(InvalidIRError, match=re.escape(message)):
        cortex.parse(L2_TEXT.replace(old, new, 1))


def test_non_finite_properties_built_in_python_are_rejected():
    for op in (EncoderOp, CenterCropOp):
        module = cortex.build_l2_pipeline(64, 64)
        target = next(o for o in module.walk() if isinstance(o, op))
        name = "threshold" if op is EncoderOp else "sigma"
        target.properties[name] = FloatAttr(float("nan"), f32)
        with pytest.raises(CortexError, match=f"'{name}' must be a finite number"):
            cortex.compile(module)


def test_sigma_nan_fails_the_positivity_check_too():
    from cortex.dialects.vision import positive

    module = cortex.build_l2_pipeline(64, 64)
    crop = next(o for o in module.walk() if isinstance(o, CenterCropOp))
    crop.properties["sigma"] = FloatAttr(float("nan"), f32)
    with pytest.raises(Exception, match="'sigma' must be positive, got nan"):
        positive(crop, "sigma")


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf"), 10**400])
def test_non_finite_weights_are_one_error(value):
    module = cortex.build_l2_pipeline(64, 64)
    for make in (cortex.reference, cortex.compile):
        with pytest.raises(CortexError, match="weight 'wc' must be a finite number"):
            make(module, weights={"wc": value})


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_mode_tables_are_one_error(tmp_path, literal):
    table = tmp_path / "modes.json"
    table.write_text(f'{{"m": {{"wc": {literal}, "wt": 0, "ws": 0, "wm": 0}}}}')
    with pytest.raises(CortexError, match="cannot read mode table|finite number"):
        cortex.run_passes(cortex.build_l2_pipeline(64, 64), f'cortex-specialize-mode{{mode=m table="{table}"}}')


@pytest.mark.parametrize(
    "size,message",
    [
        ((0, 0), "image H=0 must be positive"),
        ((-32, 64), "image H=-32 must be positive"),
        ((32 * 10**5, 64), "image H=3200000 exceeds the largest supported side, 8192"),
        ((64.0, 64), "height must be an int"),
        ((231, 231, 7), "block (7) must be a multiple of scale (8)"),
    ],
)
def test_degenerate_frame_sizes_are_one_error(size, message):
    with pytest.raises(CortexError, match=re.escape(message)):
        cortex.build_l2_pipeline(*size)


def test_negative_and_huge_shapes_in_text_are_located():
    for bad, message in (("480x640", "0x640"), ("480x640", "9000x640")):
        text = L2_TEXT.replace(bad, message)
        with pytest.raises(InvalidIRError) as info:
            cortex.parse(text)
        assert ONE_LOCATED_LINE.match(str(info.value)), str(info.value)


def test_non_finite_constants_are_emitted_and_run():
    text = f"""func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {{
  %nan = arith.constant {NAN} : f32
  %inf = arith.constant {INF} : f32
  %e = tensor.empty() : tensor<3xf32>
  %a = linalg.fill ins(%nan : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %b = linalg.fill ins(%inf : f32) outs(%e : tensor<3xf32>) -> tensor<3xf32>
  %c = arith.addf %a, %b : tensor<3xf32>
  %d = arith.subf %b, %x : tensor<3xf32>
  func.return %d : tensor<3xf32>
}}"""
    runner = cortex.compile(cortex.parse(text), entry="f", mode=None)
    assert "np.inf" in runner.source
    np.testing.assert_array_equal(runner(np.ones(3, np.float32))[0], np.full(3, np.inf, np.float32))


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.floats(allow_nan=True, allow_infinity=True) | st.integers() | st.text(max_size=5) | st.booleans(),
        lambda inner: st.tuples(inner, inner) | st.lists(inner, max_size=3).map(tuple) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
        max_leaves=8,
    )
)
@pytest.mark.timeout(60)
def test_property_values_round_trip(value):
    """What the emitter prints for a property evaluates back to the same value (NaN == NaN here)."""
    back = eval(code(value_expr(value)), {"np": np})  # noqa: S307 - the emitter's own output

    def same(a, b) -> bool:
        if isinstance(a, float) and isinstance(b, float):
            return (math.isnan(a) and math.isnan(b)) or a == b
        if isinstance(a, tuple) and isinstance(b, tuple):
            return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
        if isinstance(a, dict) and isinstance(b, dict):
            return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
        return type(a) is type(b) and a == b

    assert same(value, back)


# ---------------------------------------------------------------- (3) internal errors

DEEP_INPUTS = {
    "modules": "builtin.module {" * 3000 + "}" * 3000,
    "scf-if": "func.func @f(%c: i1) {\n" + "scf.if %c {\n" * 1500 + "}\n" * 1500 + "func.return\n}\n",
    "type": "func.func @f(%x: " + "tensor<4x" * 5000 + "f32" + ">" * 5000 + ") { func.return }",
}


@pytest.mark.parametrize("kind", sorted(DEEP_INPUTS))
def test_deep_nesting_is_a_located_diagnostic(capsys, tmp_path, kind):
    path = tmp_path / "deep.mlir"
    path.write_text(DEEP_INPUTS[kind])
    rc, err = opt(capsys, str(path))
    assert_clean(rc, err, "nests regions or types too deeply")
    assert re.match(r"^\S*deep\.mlir:\d+:\d+: error:", err)
    with pytest.raises(InvalidIRError, match="too deeply"):
        cortex.parse(DEEP_INPUTS[kind])


def test_byte_order_mark_is_a_located_diagnostic(capsys, tmp_path):
    path = tmp_path / "bom.mlir"
    path.write_bytes(b"\xef\xbb\xbf" + L2_TEXT.encode())
    rc, err = opt(capsys, str(path))
    assert_clean(rc, err, "bom.mlir:1:1: error: the input starts with a UTF-8 byte-order mark")
    with pytest.raises(InvalidIRError, match="1:1: error: the input starts with a UTF-8 byte-order mark"):
        cortex.parse(path)


def test_missing_target_dependency_is_a_diagnostic(capsys, tmp_path):
    """xDSL's llvm target (it needs llvmlite) is not offered on cortex IR:
    asking for it is argparse's one line naming the targets that work, never an import traceback."""
    path = tmp_path / "f.mlir"
    path.write_text("func.func @f() {\n  func.return\n}\n")
    rc, err = opt(capsys, str(path), "-t", "llvm")
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert "invalid choice: 'llvm' (choose from mlir, numpy, iree)" in err


@pytest.mark.parametrize(
    "pipeline,message",
    [
        ("cortex-profile{seed=-3}", "seed must be a non-negative whole number, got -3"),
        ("cortex-profile{frames=100000000000000000000000}", "frames must be a whole number from 1 to 10000"),
    ],
)
def test_profile_options_are_bounded(capsys, pipeline, message):
    rc, err = opt(capsys, str(ROOT / "examples" / "l2_pipeline.mlir"), "-p", pipeline)
    assert_clean(rc, err, message)


def test_binary_files_are_diagnostics(capsys, tmp_path):
    binary = tmp_path / "blob.bin"
    binary.write_bytes(bytes(range(256)))
    rc, err = opt(capsys, str(ROOT / "examples" / "l2_pipeline.mlir"), "-p", f'cortex-specialize-mode{{mode=m table="{binary}"}}')
    assert_clean(rc, err, "not UTF-8 text (byte 128)")
    rc = cortex_run.main(["--pipeline", str(binary), "--frames", "1"])
    err = capsys.readouterr().err
    assert rc == 1 and "not UTF-8 text" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    with pytest.raises(CortexError, match="not UTF-8 text"):
        cortex.parse(binary)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("tool", ["cortex_opt", "cortex_run"])
def test_ctrl_c_during_start_up_exits_130_quietly(tool):
    """A KeyboardInterrupt while the tool's modules import (as Ctrl-C would raise it)."""
    script = f"""
import builtins, sys
real_import = builtins.__import__
def interrupting(name, *args, **kwargs):
    if name == "xdsl.xdsl_opt_main" or name.startswith("cv2"):
        raise KeyboardInterrupt
    return real_import(name, *args, **kwargs)
builtins.__import__ = interrupting
from cortex.tools.entry import {tool}
{tool}()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=110)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "" and done.stdout == ""


def test_json_mode_table_with_big_int_is_rejected(tmp_path):
    table = tmp_path / "t.json"
    table.write_text(json.dumps({"m": {"wc": 10**400, "wt": 0, "ws": 0, "wm": 0}}))
    with pytest.raises(CortexError, match="finite number"):
        cortex.run_passes(cortex.build_l2_pipeline(64, 64), f'cortex-specialize-mode{{mode=m table="{table}"}}')


# ---------------------------------------------------------------- found by the fuzz campaign


def test_only_comments_is_an_empty_module_in_the_api_as_in_cortex_opt(capsys, tmp_path):
    for text in ("", "// nothing\n// at all", "  \n\t"):
        assert list(cortex.parse(text).ops) == []
    path = tmp_path / "comments.mlir"
    path.write_text("// nothing\n")
    assert opt(capsys, str(path))[0] == 0


def test_parser_assertions_are_located_parse_errors():
    """xDSL's dense-literal parser asserts when '(' opens what it takes for a complex number."""
    text = "func.func @f() -> tensor<1x3xf32> {\n  %c = cortex.constant dense<[[(1.0, 2.0, 3.0]]> : tensor<1x3xf32>\n  func.return %c : tensor<1x3xf32>\n}"
    with pytest.raises(InvalidIRError) as info:
        cortex.parse(text)
    assert ONE_LOCATED_LINE.match(str(info.value)), str(info.value)


def test_symbol_redefinition_in_the_implicit_module_is_located_at_the_second_definition():
    text = "func.func @f() {\n  func.return\n}\nfunc.func @f() {\n  func.return\n}\n"
    with pytest.raises(InvalidIRError, match=r'^<string>:4:1: error: .*Redefinition of symbol "f"'):
        cortex.parse(text)


def test_use_of_a_value_defined_later_in_a_nested_region_is_a_dominance_error():
    """The parser leaves a placeholder; xDSL's IsolatedFromAbove check used to crash on it."""
    lines = L2_TEXT.split("\n")
    cmp = next(i for i, line in enumerate(lines) if "%blurred = arith.cmpf" in line)
    wm = next(i for i, line in enumerate(lines) if '%wm = cortex.weight "wm"' in line)
    lines[cmp], lines[wm] = lines[wm], lines[cmp]
    with pytest.raises(InvalidIRError, match=r"operand #0 \(%blurred\) is defined later, in a region that does not enclose this use"):
        cortex.parse("\n".join(lines))


def test_public_declarations_are_rejected_as_mlir_opt_does():
    with pytest.raises(InvalidIRError, match="@g has no body, so it must be private"):
        cortex.parse("func.func @g(tensor<2xf32>) -> tensor<2xf32>\n")
    cortex.parse("func.func private @g(tensor<2xf32>) -> tensor<2xf32>\n")


def test_error_in_an_implicit_terminator_is_located_at_its_parent():
    """Deleting `scf.yield %smoothed` leaves the parser's implicit, unlocated `scf.yield`."""
    lines = [line for line in L2_TEXT.split("\n") if "scf.yield %smoothed" not in line]
    with pytest.raises(InvalidIRError) as info:
        cortex.parse("\n".join(lines))
    assert ONE_LOCATED_LINE.match(str(info.value)), str(info.value)
    line = next(i for i, text in enumerate(lines, 1) if "= scf.if" in text)  # the parent's line
    assert f":{line}:14: error: 'scf.yield' op yields nothing" in str(info.value)
