"""A scalar `arith.divf` by a zero the emitted code holds as a Python float: IEEE says ±inf or NaN.

The NumPy emitter computes scalar f64 values with Python floats where an operand is a literal;
when a select picks a literal 0.0 as the divisor (no constant folding can see that), Python
raised ZeroDivisionError instead of giving NaN (random expression trees met this once in a few
thousand draws). Scalar float division is NumPy's now, whatever the operands' Python types."""

from __future__ import annotations

import numpy as np
import pytest

from cortex.backends.numpy.emitter import emit, load
from cortex.ir import parse_module

SELECTED_ZERO = """
func.func @f(%a: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %never = "arith.cmpf"(%a, %a) <{predicate = 4 : i64, fastmath = #arith.fastmath<none>}> : (f64, f64) -> i1
  %divisor = "arith.select"(%never, %a, %zero) : (i1, f64, f64) -> f64
  %q = arith.divf %zero, %divisor : f64
  func.return %q : f64
}
"""


def test_a_selected_literal_zero_divisor_gives_nan():
    with np.errstate(all="ignore"):
        (got,) = load(emit(parse_module(SELECTED_ZERO)), "<test>")["f"](np.float64(0.0))
    assert np.isnan(got)


@pytest.mark.parametrize(("numerator", "want"), [(1.0, np.inf), (-1.0, -np.inf)])
def test_a_literal_zero_divisor_gives_signed_infinity(numerator, want):
    text = SELECTED_ZERO.replace("%q = arith.divf %zero, %divisor", "%q = arith.divf %num, %divisor").replace(
        "%zero = arith.constant 0.0 : f64", f"%zero = arith.constant 0.0 : f64\n  %num = arith.constant {numerator} : f64")
    with np.errstate(all="ignore"):
        (got,) = load(emit(parse_module(text)), "<test>")["f"](np.float64(0.0))
    assert got == want
