"""Profile-guided int8 quantisation: calibration, the quantised ops, the rewrite, its report, lowering.

The acceptance test of int8 quantisation is `test_int8_cnn_keeps_the_float_answers`:
the int8 CNN keeps the float top-1 class on >= 97 % of 100 held-out inputs
with a max probability error <= 0.05, and the report states exactly the
error an independent measurement finds.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, assert_f32_close
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.backends.mlir.upstream import (
    mlir_opt_available,
    mlir_runner_available,
    run_with_mlir,
    verify_with_mlir_opt,
)
from cortex.dialects.quant import (
    DequantizeOp,
    QConv2dOp,
    QLinearOp,
    QMaxPoolOp,
    QReluOp,
    QuantizeOp,
)
from cortex.errors import CortexError
from cortex.examples.small_cnn import (
    ENTRY,
    build_small_cnn,
    numpy_small_cnn,
    small_cnn_inputs,
)
from cortex.ir import parse
from cortex.passes.calibrate import (
    ARG_RANGES_ATTR,
    RANGE_ATTR,
    Range,
    calibrate,
    load_samples,
    range_of,
)
from cortex.passes.quantize import Scheme, op_labels, quantize_module
from cortex.semantics import quant_kernels as qk

CALIBRATION = small_cnn_inputs(32)
HELD_OUT = small_cnn_inputs(100, seed=7)
SCHEMES = [(s, g) for s in ("symmetric", "asymmetric") for g in ("tensor", "channel")]


@pytest.fixture(scope="module")
def cnn():
    return build_small_cnn()


@pytest.fixture(scope="module")
def quantised(cnn):
    return cortex.quantize(cnn, CALIBRATION, held_out=HELD_OUT)


def run(module, xs):
    runner = cortex.reference(module, entry=ENTRY, mode=None)
    return np.concatenate([runner(x)[0] for x in xs])


# ---------------------------------------------------------------- the example


def test_small_cnn_matches_its_numpy_formula(cnn):
    got = run(cnn, CALIBRATION[:8])
    want = np.concatenate([numpy_small_cnn(x) for x in CALIBRATION[:8]])
    assert_f32_close(got, want, ulps=ACCUMULATED)
    compiled = cortex.compile(cnn, entry=ENTRY, mode=None)
    assert_f32_close(np.concatenate([compiled(x)[0] for x in CALIBRATION[:8]]), got, ulps=ACCUMULATED)


# ---------------------------------------------------------------- calibration


def test_calibration_records_what_the_interpreter_saw(cnn):
    module = cnn.clone()
    calibrate(module, CALIBRATION[:4])
    function = module.body.block.first_op
    arg = range_of(function.args[0])
    stacked = np.stack(CALIBRATION[:4])
    assert (arg.min, arg.max) == (float(stacked.min()), float(stacked.max()))
    assert sum(arg.histogram) == stacked.size
    labels = {label: op for op, label in op_labels(module).items()}
    relu = Range.from_attr(labels["relu1"].attributes[RANGE_ATTR])
    assert relu.min == 0.0 and relu.max > 0
    assert sum(relu.histogram) == 4 * 8 * 16 * 16
    assert ARG_RANGES_ATTR in function.attributes
    # calibration only annotates: the results are unchanged
    np.testing.assert_array_equal(run(module, CALIBRATION[:2]), run(cnn, CALIBRATION[:2]))


def test_percentile_range_is_inside_min_max():
    values = np.concatenate([np.random.default_rng(0).standard_normal(10000), [50.0]]).astype(np.float32)
    r = Range.of([values])
    lo, hi = r.percentile(99.9)
    assert r.min <= lo < hi < r.max and hi < 10


def test_calibration_rejects_bad_inputs(tmp_path, cnn):
    function = cnn.body.block.first_op
    bad = tmp_path / "bad.npz"
    np.savez(bad, arg0=np.zeros((2, 3, 3), np.float32))
    with pytest.raises(CortexError, match=r"argument #0 needs samples of shape \(1, 3, 16, 16\)"):
        load_samples(str(bad), function)
    with pytest.raises(CortexError, match="calibration set is empty"):
        calibrate(cnn.clone(), [])


# ---------------------------------------------------------------- kernels: integer arithmetic


def test_quantised_kernels_use_int8_storage_and_int32_accumulation():
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, (5, 64), dtype=np.int8)
    w = rng.integers(-127, 128, (7, 64), dtype=np.int8)
    bias = rng.integers(-1000, 1000, 7).astype(np.int32)
    got = qk.qlinear(x, w, bias, x_scale=0.02, x_zero_point=-3, w_scales=[0.01], out_scale=0.5, out_zero_point=4)
    assert got.dtype == np.int8
    acc = (x.astype(np.int64) + 3) @ w.astype(np.int64).T + bias  # exact integers
    want = np.clip(np.rint(acc.astype(np.float32) * np.float32(0.02 * 0.01 / 0.5)) + 4, -128, 127)
    np.testing.assert_array_equal(got, want)


@settings(max_examples=40, deadline=None)
@given(
    scale=st.floats(1e-3, 10.0),
    zero_point=st.integers(-128, 127),
    values=st.lists(st.floats(-1e4, 1e4, width=32), min_size=1, max_size=32),
)
def test_quantize_dequantize_error_is_half_a_step_inside_the_range(scale, zero_point, values):
    x = np.array(values, np.float32)
    q = qk.quantize(x, scale=scale, zero_point=zero_point)
    back = qk.dequantize(q, scale=scale, zero_point=zero_point)
    lo, hi = (-128 - zero_point) * np.float32(scale), (127 - zero_point) * np.float32(scale)
    inside = (x >= lo) & (x <= hi)
    assert np.all(np.abs(back - x)[inside] <= scale * 0.5 * (1 + 1e-4) + 1e-6 * np.abs(x[inside]))
    assert np.all(back[x > hi] == np.float32(hi)) and np.all(back[x < lo] == np.float32(lo))


# ---------------------------------------------------------------- the rewrite


@pytest.mark.slow
def test_int8_cnn_keeps_the_float_answers(cnn, quantised):
    qmodule, report = quantised
    float_probs, int8_probs = run(cnn, HELD_OUT), run(qmodule, HELD_OUT)
    agreement = float(np.mean(float_probs.argmax(-1) == int8_probs.argmax(-1)))
    error = float(np.abs(float_probs - int8_probs).max())
    assert agreement >= 0.97
    assert error <= 0.05
    held = report.by_label("held-out")["result #0"]
    assert held.max_abs == pytest.approx(error, rel=1e-6)
    assert held.top1 == pytest.approx(agreement)
    assert held.samples == 100


def test_quantised_cnn_is_one_int8_region(quantised):
    qmodule, report = quantised
    names = [op.name for op in qmodule.walk() if op.name.startswith("cortex.")]
    assert names.count("cortex.quantize") == 1 and names.count("cortex.dequantize") == 1
    assert "cortex.requantize" not in names
    kinds = {type(op) for op in qmodule.walk()}
    assert {QConv2dOp, QLinearOp, QReluOp, QMaxPoolOp} <= kinds
    assert not {"cortex.conv2d", "cortex.linear", "cortex.relu", "cortex.max_pool"} & set(names)
    assert report.conversions == {"quantize": 1, "dequantize": 1, "requantize": 0}


def test_report_names_every_quantised_op(quantised):
    _, report = quantised
    rows = report.by_label("calibration")
    assert {"conv1", "relu1", "conv2", "relu2", "pool", "conv3", "relu3", "flat", "logits", "result #0"} <= set(rows)
    for row in rows.values():
        assert 0 <= row.relative < 0.1 and row.sqnr_db > 20
    text = str(report)
    assert "conv1" in text and "SQNR dB" in text and "held-out set (100 inputs)" in text


def test_report_measures_the_error_of_each_op(cnn, quantised):
    """The report's figure for one op, measured independently."""
    qmodule, report = quantised
    float_runner = cortex.reference(cnn, entry=ENTRY, mode=None)
    from cortex.interpreter.tracing import TracingRunner

    tracer = TracingRunner(qmodule, entry=ENTRY, mode=None)
    (logits_q,) = [op for op in qmodule.walk() if isinstance(op, QLinearOp)]
    (logits_f,) = [op for op, label in op_labels(cnn).items() if label == "logits"]
    float_tracer = TracingRunner(cnn, entry=ENTRY, mode=None)
    worst = 0.0
    for x in CALIBRATION:
        tracer(x)
        float_tracer(x)
        q = tracer.last_trace[logits_q][0]
        f = float_tracer.last_trace[logits_f][0]
        real = (q.astype(np.float32) - logits_q.out_zero_point.value.data) * np.float32(logits_q.out_scale.value.data)
        worst = max(worst, float(np.abs(real - f).max()))
    assert float_runner  # the float graph ran through the public API too
    assert report.by_label("calibration")["logits"].max_abs == pytest.approx(worst, rel=1e-6)


@pytest.mark.parametrize("schema, granularity", SCHEMES)
def test_every_scheme_stays_close_to_float(cnn, schema, granularity):
    qmodule, report = cortex.quantize(cnn, CALIBRATION[:16], schema=schema, granularity=granularity)
    out = report.by_label("calibration")["result #0"]
    assert out.max_abs < 0.06 and out.sqnr_db > 20
    zero_points = {op.zero_point.value.data for op in qmodule.walk() if isinstance(op, QuantizeOp)}
    assert (zero_points == {0}) == (schema == "symmetric")
    scales = [len(op.w_scales.get_values()) for op in qmodule.walk() if isinstance(op, QConv2dOp)]
    assert scales == ([1, 1, 1] if granularity == "tensor" else [8, 8, 16])


def test_unknown_options_are_one_line_errors(cnn):
    with pytest.raises(CortexError, match="unknown schema 'affine'"):
        cortex.quantize(cnn, CALIBRATION[:2], schema="affine")
    with pytest.raises(CortexError, match="unknown precision 'int4'"):
        cortex.quantize(cnn, CALIBRATION[:2], precision="int4")


def test_matmul_with_two_activations_is_quantised_with_both_zero_points():
    module = parse(
        """
        func.func @mm(%a: tensor<3x4xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
          %c = cortex.matmul %a, %b : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
          func.return %c : tensor<3x2xf32>
        }
        """
    )
    rng = np.random.default_rng(5)
    samples = [(rng.uniform(0, 2, (3, 4)).astype(np.float32), rng.uniform(-1, 3, (4, 2)).astype(np.float32)) for _ in range(8)]
    qmodule, report = cortex.quantize(module, samples, schema="asymmetric", entry="mm")
    (mm,) = [op for op in qmodule.walk() if op.name == "cortex.qmatmul"]
    assert mm.x_zero_point.value.data != 0 and mm.w_zero_point.value.data != 0
    assert report.by_label("calibration")["c"].relative < 0.02


# ---------------------------------------------------------------- lowering and backends


@pytest.mark.slow
@pytest.mark.parametrize("schema, granularity", SCHEMES)
def test_numpy_backend_computes_the_reference_integers(cnn, schema, granularity):
    qmodule, _ = cortex.quantize(cnn, CALIBRATION[:8], schema=schema, granularity=granularity)
    # return the last i8 tensor itself, so the comparison is on integers
    from xdsl.dialects import func

    function = qmodule.body.block.first_op
    (dq,) = [op for op in function.walk() if isinstance(op, DequantizeOp)]
    ret = function.body.block.last_op
    ret.operands = [dq.x]
    function.function_type = func.FunctionType.from_lists([function.args[0].type], [dq.x.type])
    for op in reversed(list(function.body.block.ops)):
        if not op.results or any(r.uses for r in op.results) or op is ret:
            continue
        op.detach()
        op.erase()
    qmodule.verify()
    compiled = cortex.compile(qmodule, entry=ENTRY, mode=None)
    assert "np.int32" in compiled.source and "int8" in compiled.source
    runner = cortex.reference(qmodule, entry=ENTRY, mode=None)
    for x in HELD_OUT[:5]:
        (want,), (got,) = runner(x), compiled(x)
        assert got.dtype == np.int8
        np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
@pytest.mark.parametrize("schema, granularity", SCHEMES)
def test_lowered_int8_cnn_verifies_in_mlir_opt(cnn, schema, granularity):
    qmodule, _ = cortex.quantize(cnn, CALIBRATION[:4], schema=schema, granularity=granularity)
    verify_with_mlir_opt(cortex.lower(qmodule))


@pytest.mark.skipif(not mlir_runner_available(), reason="mlir-runner (mlir-22-tools) not installed")
def test_mlir_runner_runs_the_int8_cnn_like_the_reference(cnn):
    qmodule, _ = cortex.quantize(cnn, CALIBRATION[:8], schema="asymmetric", granularity="channel")
    x = HELD_OUT[0]
    (native,) = run_with_mlir(cortex.lower(qmodule), ENTRY, [x])
    (want,) = cortex.reference(qmodule, entry=ENTRY, mode=None)(x)
    assert_f32_close(native, want, ulps=ACCUMULATED)


@settings(max_examples=15, deadline=None)
@given(
    in_scale=st.floats(1e-3, 1.0),
    out_scale=st.floats(1e-3, 1.0),
    in_zp=st.integers(-128, 127),
    out_zp=st.integers(-128, 127),
    seed=st.integers(0, 2**16),
)
def test_requantize_lowering_equals_its_kernel(in_scale, out_scale, in_zp, out_zp, seed):
    text = f"""
    func.func @rq(%q: tensor<64xi8>) -> tensor<64xi8> {{
      %r = cortex.requantize %q {{in_scale = {in_scale!r} : f32, in_zero_point = {in_zp} : i64, scale = {out_scale!r} : f32, zero_point = {out_zp} : i64}} : tensor<64xi8> -> tensor<64xi8>
      func.return %r : tensor<64xi8>
    }}
    """
    module = parse(text)
    q = np.random.default_rng(seed).integers(-128, 128, 64, dtype=np.int8)
    (want,) = cortex.reference(module, entry="rq", mode=None)(q)
    (got,) = cortex.compile(module, entry="rq", mode=None)(q)
    np.testing.assert_array_equal(got, want)


def test_quantize_module_leaves_uncalibrated_ops_in_float(cnn):
    module = cnn.clone()
    quantize_module(module, Scheme())  # no ranges at all: nothing to do
    assert not any(op.name.startswith("cortex.q") for op in module.walk())
    np.testing.assert_array_equal(run(module, CALIBRATION[:2]), run(cnn, CALIBRATION[:2]))


# ---------------------------------------------------------------- canonicalisation is (nearly) exact


CONVERSIONS = """
func.func @f(%q: tensor<256xi8>) -> (tensor<256xi8>, tensor<256xi8>, tensor<256xi8>) {{
  %d = cortex.dequantize %q {{scale = {s1!r} : f32, zero_point = {z1} : i64}} : tensor<256xi8> -> tensor<256xf32>
  %same = cortex.quantize %d {{scale = {s1!r} : f32, zero_point = {z1} : i64}} : tensor<256xf32> -> tensor<256xi8>
  %other = cortex.quantize %d {{scale = {s2!r} : f32, zero_point = {z2} : i64}} : tensor<256xf32> -> tensor<256xi8>
  %r1 = cortex.requantize %q {{in_scale = {s1!r} : f32, in_zero_point = {z1} : i64, scale = {s2!r} : f32, zero_point = {z2} : i64}} : tensor<256xi8> -> tensor<256xi8>
  %r2 = cortex.requantize %r1 {{in_scale = {s2!r} : f32, in_zero_point = {z2} : i64, scale = {s3!r} : f32, zero_point = {z3} : i64}} : tensor<256xi8> -> tensor<256xi8>
  func.return %same, %other, %r2 : tensor<256xi8>, tensor<256xi8>, tensor<256xi8>
}}
"""


@settings(max_examples=25, deadline=None)
@given(
    scales=st.tuples(*[st.floats(1e-3, 4.0).map(lambda v: float(np.float32(v)))] * 3),
    zero_points=st.tuples(*[st.integers(-128, 127)] * 3),
)
def test_conversion_rewrites_keep_the_integers(scales, zero_points):
    (s1, s2, s3), (z1, z2, z3) = scales, zero_points
    module = parse(CONVERSIONS.format(s1=s1, s2=s2, s3=s3, z1=z1, z2=z2, z3=z3))
    canonical = cortex.run_passes(module.clone(), "canonicalize")
    names = [op.name for op in canonical.walk() if op.name.startswith("cortex.")]
    assert names.count("cortex.requantize") <= 2 and "cortex.quantize" not in names and "cortex.dequantize" not in names
    q = np.arange(-128, 128, dtype=np.int8)
    before = cortex.reference(module, entry="f", mode=None)(q)
    after = cortex.reference(canonical, entry="f", mode=None)(q)
    np.testing.assert_array_equal(after[0], before[0])  # same parameters: exactly q
    # an f32 multiply instead of a divide: at most one step apart
    assert np.abs(after[1].astype(np.int32) - before[1].astype(np.int32)).max() <= 1
    # one rounding instead of two, where the middle value did not saturate: the middle
    # rounding (half a step of s2) is what the two-step chain loses, magnified by s2/s3
    middle = qk.requantize(q, in_scale=s1, in_zero_point=z1, scale=s2, zero_point=z2)
    inside = (middle > -128) & (middle < 127)
    bound = 1 + int(np.ceil(0.5 * s2 / s3))
    assert np.abs(after[2].astype(np.int32) - before[2].astype(np.int32))[inside].max(initial=0) <= bound


# ---------------------------------------------------------------- add, where it pays


def residual_module():
    """conv-relu, conv, + the relu's output (a residual connection), relu."""
    from xdsl.builder import ImplicitBuilder
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp, TensorType, f32
    from xdsl.ir import Block, Region

    from cortex.dialects import tensor_ops as ops
    from cortex.lowering.builders import dense_attr

    rng = np.random.default_rng(11)
    block = Block(arg_types=[TensorType(f32, [1, 4, 8, 8])])
    with ImplicitBuilder(block):
        def conv(x, name):
            w = ops.ConstantOp(dense_attr((rng.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32))).result
            y = ops.Conv2dOp(x, w, None, pads=(1, 1, 1, 1)).result
            y.name_hint = name
            return y

        r1 = ops.ReluOp(conv(block.args[0], "c1")).result
        r1.name_hint = "r1"
        s = ops.AddOp(conv(r1, "c2"), r1).result
        s.name_hint = "sum"
        out = ops.ReluOp(s).result
        out.name_hint = "out"
        func.ReturnOp(out)
    module = ModuleOp([func.FuncOp("res", ((block.args[0].type,), (out.type,)), Region(block))])
    module.verify()
    return module


def test_residual_add_stays_in_int8():
    module = residual_module()
    rng = np.random.default_rng(12)
    samples = [rng.standard_normal((1, 4, 8, 8)).astype(np.float32) for _ in range(16)]
    qmodule, report = cortex.quantize(module, samples, schema="asymmetric", entry="res")
    names = [op.name for op in qmodule.walk() if op.name.startswith("cortex.")]
    assert "cortex.qadd" in names and "cortex.add" not in names
    assert names.count("cortex.quantize") == 1 and names.count("cortex.dequantize") == 1
    rows = report.by_label("calibration")
    assert rows["sum"].op == "qadd+relu" and rows["sum"].relative < 0.05
    # the NumPy backend and the lowering compute the reference's integers
    compiled = cortex.compile(qmodule, entry="res", mode=None)
    runner = cortex.reference(qmodule, entry="res", mode=None)
    for x in samples[:3]:
        assert_f32_close(compiled(x)[0], runner(x)[0], ulps=ACCUMULATED)
    if mlir_opt_available():
        verify_with_mlir_opt(cortex.lower(qmodule))
