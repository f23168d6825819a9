"""Quantisation on degenerate and bad input: zero-range and huge-constant
calibration work; an unreadable .npz, a NaN/inf weight or calibration sample and a calibration set
or module of the wrong type are each one CortexError naming what is wrong.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.dialects.folding import constant_value
from cortex.errors import CortexError
from cortex.examples.small_cnn import ENTRY, build_small_cnn, small_cnn_inputs
from cortex.passes.calibrate import BINS, Range
from cortex.semantics.values import numpy_to_dense

INPUTS = small_cnn_inputs(3)


@pytest.fixture(scope="module")
def cnn():
    return build_small_cnn()


@settings(max_examples=40, deadline=None)
@given(value=st.floats(width=32, allow_nan=False, allow_infinity=False), count=st.integers(1, 50))
def test_a_constant_tensor_of_any_magnitude_has_a_range(value, count):
    r = Range.of([np.full(count, value, np.float32)])
    assert r.min == r.max == float(np.float32(value))
    assert sum(r.histogram) == count and len(r.histogram) == BINS


@pytest.mark.parametrize("lo, hi", [(1e6, 1e6 + 0.125), (-3e38, 3e38), (1e30, 1.0000001e30)])
def test_a_narrow_or_huge_range_has_a_histogram(lo, hi):
    r = Range.of([np.array([lo, hi, lo], np.float32)])
    assert sum(r.histogram) == 3 and r.min <= r.max


@pytest.mark.parametrize("value", [0.0, 1e5, 1e6])
def test_quantising_on_constant_inputs_works(cnn, value):
    calibration = [np.full_like(INPUTS[0], value)] * 2
    qmodule, report = cortex.quantize(cnn, calibration, entry=ENTRY)
    (got,) = cortex.reference(qmodule, entry=ENTRY, mode=None)(calibration[0])
    assert np.all(np.isfinite(got))
    assert "quantised ops" in str(report)


def with_weight(cnn, value: float):
    module = cnn.clone()
    for op in module.walk():
        if op.name == "cortex.constant":
            array = constant_value(op.results[0]).copy()
            array.flat[0] = value
            op.properties["value"] = numpy_to_dense(array, op.properties["value"].type)
            return module
    raise AssertionError("no constant")


@pytest.mark.parametrize("value, what", [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")])
def test_a_non_finite_weight_is_refused_naming_it(cnn, value, what):
    with pytest.raises(CortexError, match=rf"cannot quantise conv1 \(cortex.conv2d\): its constant %w1 holds {what}"):
        cortex.quantize(with_weight(cnn, value), INPUTS, entry=ENTRY)


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_calibration_data_is_refused_naming_the_sample(cnn, value):
    bad = INPUTS[1].copy()
    bad.flat[3] = value
    with pytest.raises(CortexError, match=r"calibration sample #1, argument #0 holds NaN or infinity"):
        cortex.quantize(cnn, [INPUTS[0], bad], entry=ENTRY)
    with pytest.raises(CortexError, match=r"sample #1, argument #0 holds NaN"):
        cortex.calibrate(cnn.clone(), [INPUTS[0], bad], entry=ENTRY)


@pytest.mark.parametrize("calibration", [None, 5, 2.5, "x.npz", b"xx", {"arg0": 1}])
def test_a_calibration_set_of_the_wrong_type_is_one_error(cnn, calibration):
    with pytest.raises(CortexError, match="the calibration set must be a list"):
        cortex.quantize(cnn, calibration, entry=ENTRY)
    with pytest.raises(CortexError, match="the calibration set must be a list"):
        cortex.calibrate(cnn.clone(), calibration, entry=ENTRY)


@pytest.mark.parametrize("sample, message", [(("a",), "not numeric"), ((INPUTS[0], INPUTS[0]), "has 2 input")])
def test_a_bad_sample_is_named(cnn, sample, message):
    with pytest.raises(CortexError, match=rf"calibration sample #0.*{message}"):
        cortex.quantize(cnn, [sample], entry=ENTRY)


def test_a_module_given_as_text_is_one_error():
    with pytest.raises(CortexError, match="quantize takes a builtin.module, got str"):
        cortex.quantize("module.mlir", INPUTS)
    with pytest.raises(CortexError, match="calibrate takes a builtin.module, got str"):
        cortex.calibrate("module.mlir", INPUTS)


@pytest.mark.parametrize("cut", [0.5, 0.1])
def test_a_truncated_npz_is_one_line(cnn, tmp_path, cut):
    np.savez(tmp_path / "c.npz", arg0=np.stack(INPUTS))
    data = (tmp_path / "c.npz").read_bytes()
    (tmp_path / "t.npz").write_bytes(data[: int(len(data) * cut)])
    with pytest.raises(CortexError) as caught:
        cortex.run_passes(cnn.clone(), f'cortex-calibrate{{inputs="{tmp_path / "t.npz"}" entry="{ENTRY}"}}')
    message = str(caught.value)
    assert "cannot read calibration inputs" in message and "not a readable .npz" in message
    assert "internal error" not in message and "\n" not in message
