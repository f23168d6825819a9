"""convert-cortex-to-linalg and convert-cortex-to-extern: structure, contract, diagnostics,
and every compilable op's lowered code against its reference kernel.

The numerical tests execute the lowered IR natively with upstream MLIR
(mlir-opt to LLVM, then mlir-runner; `cortex.backends.mlir.upstream`), on small
shapes, and compare with the eager reference interpreter on the same inputs.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, ALGORITHM, REORDERED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, UnitAttr

import cortex
from cortex.backends.mlir.upstream import mlir_runner_available, run_with_mlir
from cortex.dialects.abi import ORIGIN, PROPS
from cortex.driver import lower
from cortex.ir import parse_module, to_text
from cortex.lowering.base import LoweringError
from cortex.lowering.builders import nesting
from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
from cortex.lowering.cortex_to_linalg import LOWERINGS, ConvertCortexToLinalgPass
from cortex.semantics.vision_kernels import gray

needs_mlir = pytest.mark.skipif(not mlir_runner_available(), reason="mlir-opt/mlir-runner (mlir-22-tools) not installed")


@pytest.fixture(scope="module")
def l2():
    return cortex.build_l2_pipeline()


@pytest.fixture(scope="module")
def l2_lowered(l2):
    return lower(l2)


def cortex_ops(module):
    return [op.name for op in module.walk() if op.name.startswith("cortex.")]


def entry(module, name):
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


# ---------------------------------------------------------------- structure and contract


def test_every_compilable_op_has_a_lowering():
    from cortex.dialects.cortex import ALL_OPS
    from cortex.dialects.traits import Compilable

    compilable = {op for op in ALL_OPS if Compilable() in op.traits}
    assert compilable == set(LOWERINGS)


def test_l2_lowers_to_upstream_dialects_only(l2, l2_lowered):
    assert cortex_ops(l2)
    assert cortex_ops(l2_lowered) == []
    dialects = {op.name.split(".")[0] for op in l2_lowered.walk()}
    assert dialects <= {"builtin", "func", "arith", "math", "tensor", "linalg", "scf"}


def test_lower_returns_a_copy(l2):
    before = to_text(l2)
    lower(l2)
    assert to_text(l2) == before


def test_l2_signature_threads_frame_state_and_weights(l2_lowered):
    fn = entry(l2_lowered, "l2_frame")
    inputs = [str(t) for t in fn.function_type.inputs]
    assert inputs == [
        "tensor<480x640x3xi8>",
        "tensor<480x640xf32>",
        "tensor<15x20xf32>",
        "tensor<25xf32>",
        "f32",
        "f32",
        "f32",
        "f32",
        "f32",
        "f32",
    ]
    arg_attrs = [dict(a.data) for a in fn.arg_attrs.data]
    assert arg_attrs[0] == {"cortex.unsigned": UnitAttr()}
    assert [a.get("cortex.state") for a in arg_attrs[1:4]] == [
        StringAttr("prev_gray"), StringAttr("prev_score"), StringAttr("sharpness_history")
    ]
    assert [a["cortex.weight"].data for a in arg_attrs[4:]] == ["blur_threshold", "blur_fraction", "wc", "wt", "ws", "wm"]
    outputs = [str(t) for t in fn.function_type.outputs]
    assert outputs == ["tensor<?xi8>", "tensor<15x20xf32>", "tensor<480x640xf32>", "tensor<15x20xf32>", "tensor<25xf32>"]
    res_attrs = [dict(a.data) for a in fn.res_attrs.data]
    assert res_attrs[0] == {"cortex.unsigned": UnitAttr()}
    assert res_attrs[1] == {}
    assert [a["cortex.state"].data for a in res_attrs[2:]] == ["prev_gray", "prev_score", "sharpness_history"]


def test_l2_state_results_are_the_updated_values(l2_lowered):
    fn = entry(l2_lowered, "l2_frame")
    ret = fn.body.block.last_op
    encoded, score, new_gray, new_score, new_history = ret.operands
    assert new_score is score
    assert new_gray.name_hint == "gray"
    assert new_history.name_hint == "new_history"
    assert isinstance(encoded.owner, func.CallOp) and encoded.owner.callee.string_value() == "cortex_encoder"


def test_extern_declarations_carry_op_and_all_properties(l2_lowered):
    decls = {op.sym_name.data: op for op in l2_lowered.ops if isinstance(op, func.FuncOp) and op.is_declaration}
    assert set(decls) == {"cortex_blur_detector", "cortex_scene_change", "cortex_text_roi", "cortex_encoder"}
    for name, decl in decls.items():
        assert decl.sym_visibility.data == "private"
        assert decl.attributes["cortex.extern"].data == "cortex." + name.removeprefix("cortex_")
    props = decls["cortex_text_roi"].attributes[PROPS]
    assert {k: v.value.data for k, v in props.data.items()} == {"block": 32, "delta": 5, "min_area": 60, "max_area": 14400}
    encoder = decls["cortex_encoder"]
    assert str(encoder.function_type) == "(tensor<480x640x3xi8>, tensor<15x20xf32>) -> tensor<?xi8>"
    assert dict(encoder.arg_attrs.data[0].data) == {"cortex.unsigned": UnitAttr()}
    assert dict(encoder.res_attrs.data[0].data) == {"cortex.unsigned": UnitAttr()}
    calls = [op for op in l2_lowered.walk() if isinstance(op, func.CallOp)]
    assert sorted(c.callee.string_value() for c in calls) == sorted(decls)


def test_one_declaration_per_distinct_properties():
    module = parse_module(
        """
        func.func @f(%g: tensor<64x64xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x4xf32>) {
          %a = cortex.text_roi %g : tensor<64x64xf32> -> tensor<2x2xf32>
          %b = cortex.text_roi %g {block = 32 : i64, delta = 5 : i64} : tensor<64x64xf32> -> tensor<2x2xf32>
          %c = cortex.text_roi %g {block = 16 : i64} : tensor<64x64xf32> -> tensor<4x4xf32>
          func.return %a, %b, %c : tensor<2x2xf32>, tensor<2x2xf32>, tensor<4x4xf32>
        }"""
    )
    lowered = lower(module)
    decls = [op.sym_name.data for op in lowered.ops if isinstance(op, func.FuncOp) and op.is_declaration]
    assert decls == ["cortex_text_roi", "cortex_text_roi_1"]
    callees = [op.callee.string_value() for op in lowered.walk() if isinstance(op, func.CallOp)]
    assert callees == ["cortex_text_roi", "cortex_text_roi", "cortex_text_roi_1"]


def test_every_inserted_op_names_its_origin(l2, l2_lowered):
    names = {r.name_hint for op in l2.walk() for r in op.results if op.name.startswith("cortex.")}
    tagged = 0
    for op in l2_lowered.walk():
        if op.name.startswith(("linalg.", "tensor.")) or isinstance(op, func.CallOp):
            parent = op.parent_op()
            if parent is not None and parent.name.startswith("linalg."):
                continue  # scalar body ops belong to their linalg op
            assert ORIGIN in op.attributes, op.name
            assert op.attributes[ORIGIN].data in names
            tagged += 1
    origins = {op.attributes[ORIGIN].data for op in l2_lowered.walk() if ORIGIN in op.attributes}
    assert origins == {"gray", "sharpness", "scene", "center", "text", "saliency", "motion", "fused", "smoothed", "encoded",
                       "sharpness_median", "new_history"}
    assert tagged > 50


def test_origin_falls_back_to_the_op_name():
    module = parse_module(
        """
        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
          %0 = cortex.exp %x : tensor<4xf32> -> tensor<4xf32>
          func.return %0 : tensor<4xf32>
        }"""
    )
    origins = {op.attributes[ORIGIN].data for op in lower(module).walk() if ORIGIN in op.attributes}
    assert origins == {"cortex.exp"}


def test_passes_commute(l2):
    ctx = cortex.make_context()
    a, b = l2.clone(), l2.clone()
    ConvertCortexToLinalgPass().apply(ctx, a)
    ConvertCortexToExternPass().apply(ctx, a)
    ConvertCortexToExternPass().apply(ctx, b)
    ConvertCortexToLinalgPass().apply(ctx, b)
    assert to_text(a, generic=True) == to_text(b, generic=True)


def test_partial_lowering_keeps_the_rest_legal(l2):
    ctx = cortex.make_context()
    linalg_only = l2.clone()
    ConvertCortexToLinalgPass().apply(ctx, linalg_only)
    linalg_only.verify()
    left = set(cortex_ops(linalg_only))
    assert left == {"cortex.state", "cortex.update_state", "cortex.weight", "cortex.blur_detector",
                    "cortex.scene_change", "cortex.text_roi", "cortex.encoder"}
    extern_only = l2.clone()
    ConvertCortexToExternPass().apply(ctx, extern_only)
    extern_only.verify()
    assert set(cortex_ops(extern_only)) == {"cortex.gray", "cortex.center_crop", "cortex.saliency_dft",
                                             "cortex.motion_map", "cortex.score_fusion", "cortex.temporal_smooth",
                                             "cortex.window_median", "cortex.window_push"}


def test_generic_form_round_trips_exactly(l2_lowered):
    text = to_text(l2_lowered, generic=True)
    again = parse_module(text)
    assert to_text(again, generic=True) == text


def test_custom_form_round_trips(l2_lowered):
    text = to_text(l2_lowered)
    again = parse_module(text)
    assert [op.name for op in again.walk()] == [op.name for op in l2_lowered.walk()]
    assert to_text(again) == text


def test_lower_runs_a_pipeline_first(l2):
    lowered = lower(l2, passes="cortex-specialize-mode{mode=power_save},cortex-canonicalize,cortex-dce")
    origins = {op.attributes[ORIGIN].data for op in lowered.walk() if ORIGIN in op.attributes}
    assert "saliency" not in origins and "motion" not in origins
    assert {"center", "text", "fused"} <= origins
    fn = entry(lowered, "l2_frame")
    weights = [a.data["cortex.weight"].data for a in fn.arg_attrs.data if "cortex.weight" in a.data]
    assert weights == ["blur_threshold", "blur_fraction"]  # the mode's weights are constants; the gate's inputs stay


def test_reshape_reassociation():
    assert nesting((6,), (1, 2, 3)) == [[0, 1, 2]]
    assert nesting((2, 3), (2, 1, 3)) == [[0], [1, 2]]
    assert nesting((6, 1), (2, 3, 1, 1)) == [[0, 1], [2, 3]]
    assert nesting((), (1, 1)) == []
    assert nesting((4,), (2, 3)) is None
    assert nesting((4, 6), (2, 3, 4)) is None


# ---------------------------------------------------------------- diagnostics


def lowering_error(text: str) -> str:
    with pytest.raises(LoweringError) as info:
        lower(parse_module(text))
    message = str(info.value)
    assert "\n" not in message
    return message


def test_dynamic_shapes_are_rejected_with_the_op():
    message = lowering_error(
        """
        func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
          %y = cortex.exp %x : tensor<?x4xf32> -> tensor<?x4xf32>
          func.return %y : tensor<?x4xf32>
        }"""
    )
    assert "'cortex.exp' op (" in message and "defining %y" in message and "tensor<?x4xf32>" in message and "cortex-shape-inference" in message


def test_state_update_inside_a_region_is_rejected():
    message = lowering_error(
        """
        func.func @f(%c: i1, %x: tensor<4xf32>) {
          scf.if %c {
            cortex.update_state "s" = %x : tensor<4xf32>
          }
          func.return
        }"""
    )
    assert "cortex.update_state" in message and "top level" in message


def test_state_in_a_called_function_is_rejected():
    message = lowering_error(
        """
        func.func @inner() -> tensor<4xf32> {
          %s = cortex.state "s" : tensor<4xf32>
          func.return %s : tensor<4xf32>
        }
        func.func @outer() -> tensor<4xf32> {
          %r = func.call @inner() : () -> tensor<4xf32>
          func.return %r : tensor<4xf32>
        }"""
    )
    assert "@inner" in message and "@outer" in message


def test_cortex_opt_reports_a_lowering_error_in_one_line(tmp_path):
    path = tmp_path / "dyn.mlir"
    path.write_text(
        "func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {\n"
        "  %y = cortex.neg %x : tensor<?xf32> -> tensor<?xf32>\n"
        "  func.return %y : tensor<?xf32>\n}\n"
    )
    proc = subprocess.run(
        [sys.executable, "-m", "cortex.tools.cortex_opt", str(path), "-p", "convert-cortex-to-linalg"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 1
    assert "Traceback" not in proc.stderr
    assert "'cortex.neg' op (" in proc.stderr and "defining %y" in proc.stderr


# ---------------------------------------------------------------- numerical equivalence, op by op

RNG = np.random.default_rng(7)


def normal(*shape, scale=1.0):
    return np.asarray(RNG.standard_normal(shape) * scale, np.float32)


def positive(*shape):
    return np.asarray(RNG.random(shape) + 0.1, np.float32)


def ttype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def unary(op, shape, attrs="", out=None):
    out = shape if out is None else out
    return (
        f"func.func @f(%x: {ttype(shape)}) -> {ttype(out)} {{\n"
        f"  %y = {op} %x {attrs} : {ttype(shape)} -> {ttype(out)}\n"
        f"  func.return %y : {ttype(out)}\n}}"
    )


def binary(op, a, b, out, attrs=""):
    return (
        f"func.func @f(%a: {ttype(a)}, %b: {ttype(b)}) -> {ttype(out)} {{\n"
        f"  %y = {op} %a, %b {attrs} : ({ttype(a)}, {ttype(b)}) -> {ttype(out)}\n"
        f"  func.return %y : {ttype(out)}\n}}"
    )


def generic(op, operands, out, attrs=""):
    """An op in the `operands attr-dict : functional-type` form (matmul, linear, conv2d, ...)."""
    args = ", ".join(f"%a{i}: {ttype(s)}" for i, s in enumerate(operands))
    names = ", ".join(f"%a{i}" for i in range(len(operands)))
    types = ", ".join(ttype(s) for s in operands)
    return (
        f"func.func @f({args}) -> {ttype(out)} {{\n"
        f"  %y = {op} {names} {attrs} : ({types}) -> {ttype(out)}\n"
        f"  func.return %y : {ttype(out)}\n}}"
    )


TENSOR_CASES = {
    "neg": (unary("cortex.neg", (3, 4)), lambda: [normal(3, 4)]),
    "exp": (unary("cortex.exp", (3, 4)), lambda: [normal(3, 4)]),
    "log": (unary("cortex.log", (3, 4)), lambda: [positive(3, 4)]),
    "sqrt": (unary("cortex.sqrt", (3, 4)), lambda: [positive(3, 4)]),
    "abs": (unary("cortex.abs", (3, 4)), lambda: [normal(3, 4)]),
    "relu": (unary("cortex.relu", (2, 3, 4)), lambda: [normal(2, 3, 4)]),
    "sigmoid": (unary("cortex.sigmoid", (3, 4)), lambda: [normal(3, 4, scale=4)]),
    "tanh": (unary("cortex.tanh", (3, 4)), lambda: [normal(3, 4, scale=2)]),
    "gelu_erf": (unary("cortex.gelu", (3, 4)), lambda: [normal(3, 4, scale=2)]),
    "gelu_tanh": (unary("cortex.gelu", (3, 4), '{approximate = "tanh"}'), lambda: [normal(3, 4, scale=2)]),
    "add_broadcast_row": (binary("cortex.add", (2, 3), (3,), (2, 3)), lambda: [normal(2, 3), normal(3)]),
    "sub_broadcast_both": (binary("cortex.sub", (2, 1, 3), (4, 1), (2, 4, 3)), lambda: [normal(2, 1, 3), normal(4, 1)]),
    "mul_scalar": (binary("cortex.mul", (3, 4), (), (3, 4)), lambda: [normal(3, 4), normal()]),
    "div": (binary("cortex.div", (3, 4), (3, 4), (3, 4)), lambda: [normal(3, 4), positive(3, 4)]),
    "pow": (binary("cortex.pow", (3, 4), (1, 4), (3, 4)), lambda: [positive(3, 4), normal(1, 4)]),
    "matmul_2d": (generic("cortex.matmul", [(3, 5), (5, 4)], (3, 4)), lambda: [normal(3, 5), normal(5, 4)]),
    "matmul_batch_broadcast": (
        generic("cortex.matmul", [(2, 3, 5), (5, 4)], (2, 3, 4)),
        lambda: [normal(2, 3, 5), normal(5, 4)],
    ),
    "matmul_batch_size1": (
        generic("cortex.matmul", [(1, 2, 3, 5), (3, 1, 5, 4)], (3, 2, 3, 4)),
        lambda: [normal(1, 2, 3, 5), normal(3, 1, 5, 4)],
    ),
    "linear_weight_bias_3d": (
        generic("cortex.linear", [(2, 3, 5), (4, 5), (4,)], (2, 3, 4)),
        lambda: [normal(2, 3, 5), normal(4, 5), normal(4)],
    ),
    "linear_vector": (generic("cortex.linear", [(5,), (4, 5)], (4,)), lambda: [normal(5), normal(4, 5)]),
    "batch_norm_nchw": (
        generic("cortex.batch_norm", [(2, 3, 4, 5), (3,), (3,), (3,), (3,)], (2, 3, 4, 5), "{epsilon = 1.0e-3 : f32}"),
        lambda: [normal(2, 3, 4, 5), normal(3), normal(3), normal(3), positive(3)],
    ),
    "batch_norm_2d": (
        generic("cortex.batch_norm", [(4, 3), (3,), (3,), (3,), (3,)], (4, 3)),
        lambda: [normal(4, 3), normal(3), normal(3), normal(3), positive(3)],
    ),
    "conv2d_pads_strides_bias": (
        generic(
            "cortex.conv2d",
            [(2, 3, 7, 8), (4, 3, 3, 2), (4,)],
            (2, 4, 4, 5),
            "{pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 2>}",
        ),
        lambda: [normal(2, 3, 7, 8), normal(4, 3, 3, 2), normal(4)],
    ),
    "max_broadcast": (binary("cortex.max", (2, 3), (3,), (2, 3)), lambda: [normal(2, 3), normal(3)]),
    "min_scalar": (binary("cortex.min", (3, 4), (), (3, 4)), lambda: [normal(3, 4), normal()]),
    "erf": (unary("cortex.erf", (3, 4)), lambda: [normal(3, 4, scale=2)]),
    "concat_axis1": (
        generic("cortex.concat", [(2, 3, 4), (2, 1, 4), (2, 2, 4)], (2, 6, 4), "{axis = 1 : i64}"),
        lambda: [normal(2, 3, 4), normal(2, 1, 4), normal(2, 2, 4)],
    ),
    "pad_value": (
        unary("cortex.pad", (2, 3, 4), "{pads = array<i64: 0, 1, 2, 1, 0, 3>, value = 1.5 : f32}", (3, 4, 9)),
        lambda: [normal(2, 3, 4)],
    ),
    "slice_strided": (
        unary(
            "cortex.slice",
            (4, 7, 5),
            "{starts = array<i64: 1, 0, 2>, sizes = array<i64: 2, 3, 2>, steps = array<i64: 2, 3, 1>}",
            (2, 3, 2),
        ),
        lambda: [normal(4, 7, 5)],
    ),
    "conv2d_grouped": (
        generic(
            "cortex.conv2d",
            [(2, 4, 7, 8), (6, 2, 3, 3), (6,)],
            (2, 6, 4, 4),
            "{group = 2 : i64, pads = array<i64: 1, 1, 1, 0>, strides = array<i64: 2, 2>}",
        ),
        lambda: [normal(2, 4, 7, 8), normal(6, 2, 3, 3), normal(6)],
    ),
    "conv2d_depthwise_dilated": (
        generic("cortex.conv2d", [(1, 3, 7, 7), (3, 1, 3, 3)], (1, 3, 3, 3), "{dilations = array<i64: 2, 2>, group = 3 : i64}"),
        lambda: [normal(1, 3, 7, 7), normal(3, 1, 3, 3)],
    ),
    "conv2d_dilated": (
        generic("cortex.conv2d", [(1, 2, 7, 7), (3, 2, 3, 3)], (1, 3, 3, 3), "{dilations = array<i64: 2, 2>}"),
        lambda: [normal(1, 2, 7, 7), normal(3, 2, 3, 3)],
    ),
    "avg_pool_pads": (
        unary(
            "cortex.avg_pool",
            (1, 2, 5, 6),
            "{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>}",
            (1, 2, 3, 3),
        ),
        lambda: [normal(1, 2, 5, 6)],
    ),
    "avg_pool_pads_asymmetric": (  # top ≠ left, bottom ≠ right: each side's count is its own
        unary(
            "cortex.avg_pool",
            (1, 2, 5, 6),
            "{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 0, 2, 1>}",
            (1, 2, 3, 3),
        ),
        lambda: [normal(1, 2, 5, 6)],
    ),
    "avg_pool": (
        unary("cortex.avg_pool", (2, 2, 4, 6), "{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>}", (2, 2, 2, 3)),
        lambda: [normal(2, 2, 4, 6)],
    ),
    "max_pool_pads": (
        unary(
            "cortex.max_pool",
            (1, 2, 5, 5),
            "{kernel_shape = array<i64: 3, 2>, pads = array<i64: 1, 0, 1, 1>}",
            (1, 2, 5, 5),
        ),
        lambda: [normal(1, 2, 5, 5) - 3.0],
    ),
    "transpose": (unary("cortex.transpose", (2, 3, 4), "{perm = array<i64: 2, 0, 1>}", (4, 2, 3)), lambda: [normal(2, 3, 4)]),
    "reshape_collapse": (unary("cortex.reshape", (2, 3, 4), "", (6, 4)), lambda: [normal(2, 3, 4)]),
    "reshape_expand": (unary("cortex.reshape", (6, 4), "", (2, 3, 2, 2)), lambda: [normal(6, 4)]),
    "reshape_general": (unary("cortex.reshape", (2, 3, 4), "", (4, 6)), lambda: [normal(2, 3, 4)]),
    "reshape_to_scalar": (unary("cortex.reshape", (1, 1), "", ()), lambda: [normal(1, 1)]),
    "softmax_last": (unary("cortex.softmax", (3, 5)), lambda: [normal(3, 5, scale=3)]),
    "softmax_axis1": (unary("cortex.softmax", (2, 4, 3), "{axis = 1 : i64}"), lambda: [normal(2, 4, 3, scale=3)]),
    "reduce_sum_all": (unary("cortex.reduce_sum", (3, 4), "{keepdims = 0 : i64}", ()), lambda: [normal(3, 4)]),
    "reduce_sum_keepdims": (unary("cortex.reduce_sum", (3, 4), "", (1, 1)), lambda: [normal(3, 4)]),
    "reduce_mean_axes": (
        unary("cortex.reduce_mean", (2, 3, 4), "{axes = array<i64: 0, 2>}", (1, 3, 1)),
        lambda: [normal(2, 3, 4)],
    ),
    "reduce_max_last": (
        unary("cortex.reduce_max", (2, 3, 4), "{axes = array<i64: -1>, keepdims = 0 : i64}", (2, 3)),
        lambda: [normal(2, 3, 4)],
    ),
    "constant": (
        "func.func @f(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {\n"
        "  %c = cortex.constant dense<[[1.5, -2.0], [0.25, 4.0]]> : tensor<2x2xf32>\n"
        "  %y = cortex.mul %x, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>\n"
        "  func.return %y : tensor<2x2xf32>\n}",
        lambda: [normal(2, 2)],
    ),
    "linear_constant_weight": (
        "func.func @f(%x: tensor<3x4xf32>) -> tensor<3x2xf32> {\n"
        "  %w = cortex.constant dense<[[1.0, 2.0, 3.0, 4.0], [-1.0, 0.5, 0.0, 2.0]]> : tensor<2x4xf32>\n"
        "  %b = cortex.constant dense<[0.5, -0.5]> : tensor<2xf32>\n"
        "  %y = cortex.linear %x, %w, %b : (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2xf32>) -> tensor<3x2xf32>\n"
        "  func.return %y : tensor<3x2xf32>\n}",
        lambda: [normal(3, 4)],
    ),
}

H, W = 64, 96
GRAY, GRID = ttype((H, W)), ttype((H // 16, W // 16))


def textured_frame(seed: int = 0) -> np.ndarray:
    """A frame with structure at several scales (a natural-like spectrum), BGR uint8."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:H, 0:W]
    base = 120 + 60 * np.sin(xx / 7.0) * np.cos(yy / 5.0) + rng.normal(0, 25, (H, W))
    frame = np.stack([base, base[::-1], base[:, ::-1]], axis=-1)
    return np.clip(frame, 0, 255).astype(np.uint8)


def gray_of(seed: int) -> np.ndarray:
    return gray(textured_frame(seed))


VISION_CASES = {
    "gray": (
        f"func.func @f(%frame: tensor<{H}x{W}x3xui8>) -> {GRAY} {{\n"
        f"  %y = cortex.gray %frame : tensor<{H}x{W}x3xui8> -> {GRAY}\n"
        f"  func.return %y : {GRAY}\n}}",
        lambda: [textured_frame(1)],
    ),
    "center_crop": (
        unary("cortex.center_crop", (H, W), "{block = 16 : i64, sigma = 0.25 : f32}", (H // 16, W // 16)),
        lambda: [gray_of(2)],
    ),
    "saliency_dft": (
        unary("cortex.saliency_dft", (H, W), "{block = 16 : i64, scale = 4 : i64}", (H // 16, W // 16)),
        lambda: [gray_of(3)],
    ),
    "saliency_dft_scale2": (
        unary("cortex.saliency_dft", (H, W), "{block = 16 : i64, scale = 2 : i64}", (H // 16, W // 16)),
        lambda: [gray_of(4)],
    ),
    "saliency_dft_black": (
        unary("cortex.saliency_dft", (H, W), "{block = 16 : i64, scale = 4 : i64}", (H // 16, W // 16)),
        lambda: [np.zeros((H, W), np.float32)],
    ),
    "motion_map": (
        binary("cortex.motion_map", (H, W), (H, W), (H // 16, W // 16), "{block = 16 : i64}"),
        lambda: [gray_of(5), gray_of(6)],
    ),
    "score_fusion": (
        f"func.func @f(%a: {GRID}, %b: {GRID}, %c: {GRID}, %wa: f32, %wb: f32, %wc: f32) -> {GRID} {{\n"
        f'  %y = cortex.score_fusion(%a, %b, %c) weights(%wa, %wb, %wc) {{terms = ["a", "b", "c"]}}'
        f" : {GRID}, {GRID}, {GRID} -> {GRID}\n"
        f"  func.return %y : {GRID}\n}}",
        lambda: [positive(4, 6), positive(4, 6), positive(4, 6), 0.25, 0.5, 0.125],
    ),
    "temporal_smooth_blend": (
        f"func.func @f(%s: {GRID}, %p: {GRID}, %scene: f32) -> {GRID} {{\n"
        f"  %y = cortex.temporal_smooth %s, %p, %scene {{alpha = 0.7 : f32}} : ({GRID}, {GRID}, f32) -> {GRID}\n"
        f"  func.return %y : {GRID}\n}}",
        lambda: [positive(4, 6), positive(4, 6), 0.2],
    ),
    "temporal_smooth_reset": (
        f"func.func @f(%s: {GRID}, %p: {GRID}, %scene: f32) -> {GRID} {{\n"
        f"  %y = cortex.temporal_smooth %s, %p, %scene : ({GRID}, {GRID}, f32) -> {GRID}\n"
        f"  func.return %y : {GRID}\n}}",
        lambda: [positive(4, 6), positive(4, 6), 0.9],
    ),
}

# mlir-runner against the reference kernels: saliency is a DFT (f32 products vs np.fft), erf/exp come from
# MLIR's polynomial expansions vs libm; everything else reorders a few f32 roundings.
TOLERANCE = {"saliency_dft": ALGORITHM, "saliency_dft_scale2": ALGORITHM, "gelu_erf": ACCUMULATED, "sigmoid": ACCUMULATED}


def check_against_reference(name: str, text: str, make_inputs) -> None:
    module = parse_module(text)
    inputs = make_inputs()
    expected = cortex.reference(module, entry="f", mode=None)(*inputs)
    lowered = lower(module)
    assert cortex_ops(lowered) == []
    got = run_with_mlir(lowered, "f", inputs)
    assert len(got) == len(expected)
    ulps = TOLERANCE.get(name, REORDERED)
    for g, e in zip(got, expected):
        e = np.asarray(e, np.float32)
        assert g.shape == e.shape
        assert_f32_close(g, e, ulps=ulps)


@pytest.mark.slow
@needs_mlir
@pytest.mark.parametrize("name", sorted(TENSOR_CASES))
def test_tensor_op_matches_reference(name):
    check_against_reference(name, *TENSOR_CASES[name])


@needs_mlir
@pytest.mark.parametrize("name", sorted(VISION_CASES))
def test_vision_op_matches_reference(name):
    check_against_reference(name, *VISION_CASES[name])


@needs_mlir
def test_tests_can_fail():
    """The harness sees a wrong lowering: a module computing something else fails the comparison."""
    text, make_inputs = TENSOR_CASES["exp"]
    wrong = text.replace("cortex.exp", "cortex.tanh")
    module, inputs = parse_module(text), make_inputs()
    expected = cortex.reference(module, entry="f", mode=None)(*inputs)[0]
    (got,) = run_with_mlir(lower(parse_module(wrong)), "f", inputs)
    assert not np.allclose(got, expected, rtol=1e-3)


# ---------------------------------------------------------------- properties


@st.composite
def groupings(draw):
    """A fine shape and the coarse shape of some grouping of its consecutive dims."""
    fine = draw(st.lists(st.integers(1, 4), min_size=1, max_size=5))
    cuts = sorted(draw(st.sets(st.integers(1, len(fine) - 1), max_size=len(fine) - 1))) if len(fine) > 1 else []
    bounds = [0, *cuts, len(fine)]
    coarse = [int(np.prod(fine[a:b])) for a, b in zip(bounds, bounds[1:])]
    return tuple(coarse), tuple(fine)


@given(groupings())
def test_nesting_finds_a_reassociation(shapes):
    coarse, fine = shapes
    groups = nesting(coarse, fine)
    assert groups is not None
    assert [i for g in groups for i in g] == list(range(len(fine)))
    assert [int(np.prod([fine[i] for i in g])) for g in groups] == list(coarse)


@st.composite
def broadcast_pairs(draw):
    """Two operand shapes that broadcast (NumPy rules) to a random output shape."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))

    def operand():
        rank = draw(st.integers(0, len(out)))
        tail = out[len(out) - rank :]
        return tuple(1 if draw(st.booleans()) else d for d in tail)

    return operand(), operand()


@needs_mlir
@settings(max_examples=6, deadline=None)
@given(broadcast_pairs(), st.sampled_from(["cortex.add", "cortex.sub", "cortex.mul"]))
def test_broadcasting_binary_ops_match_reference(shapes, op):
    a, b = shapes
    out = np.broadcast_shapes(a, b)
    text = binary(op, a, b, out)
    check_against_reference(op, text, lambda: [normal(*a), normal(*b)])
