"""The lowered-module ABI (cortex.dialects.abi) and the call boundary both runners share."""

from __future__ import annotations

import numpy as np
import pytest

import cortex
from cortex.dialects import abi
from cortex.errors import CortexError
from cortex.interpreter.calling import check_value, initial_zeros
from cortex.ir import parse_module

STATEFUL = """
func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %prev = cortex.state "acc" : tensor<2x3xf32>
  %s = cortex.add %prev, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  cortex.update_state "acc" = %s : tensor<2x3xf32>
  func.return %s : tensor<2x3xf32>
}
"""


def test_entry_ports_read_what_the_lowering_writes():
    lowered = cortex.lower(parse_module(STATEFUL))
    (f,) = [op for op in lowered.ops if op.sym_name.data == "f"]
    args, results = abi.entry_ports(f)
    assert [(p.kind, p.name) for p in args] == [("input", "x"), ("state", "acc")]
    assert [(p.kind, p.name) for p in results] == [("output", "#0"), ("state", "acc")]


def test_extern_properties_round_trip():
    lowered = cortex.lower(cortex.build_l2_pipeline(64, 64))
    decls = {op.sym_name.data: op for op in lowered.ops if abi.EXTERN in op.attributes}
    kernel, props = abi.extern_of(decls["cortex_text_roi"])
    assert kernel == "cortex.text_roi"
    assert props == {"block": 32, "delta": 5, "min_area": 60, "max_area": 14400}


@pytest.mark.parametrize(
    "bad, got",
    [
        (np.zeros((2, 3), np.float64), "got a float64 array of shape (2, 3)"),
        (np.zeros((3, 3), np.float32), "got a float32 array of shape (3, 3)"),
        ("x", "got a str"),
    ],
)
def test_both_runners_reject_a_bad_argument_in_the_same_words(bad, got):
    module = parse_module(STATEFUL)
    expected = f"expected a float32 array of shape (2, 3), {got}"
    for runner in (cortex.reference(module, entry="f", mode=None),
                   cortex.compile(module, entry="f", mode=None)):
        with pytest.raises(CortexError, match=r"argument #0\b") as excinfo:
            runner(bad)
        assert str(excinfo.value).endswith(expected)


def test_both_runners_start_from_the_same_zeros():
    module = parse_module(STATEFUL)
    x = np.ones((2, 3), np.float32)
    reference = cortex.reference(module, entry="f", mode=None)
    compiled = cortex.compile(module, entry="f", mode=None)
    for _ in range(2):
        np.testing.assert_array_equal(reference(x)[0], compiled(x)[0])


def test_check_value_scalars_and_zeros():
    from xdsl.dialects.builtin import TensorType, f32, i64

    assert check_value(f32, np.array(2.5, np.float32), "w") == 2.5
    assert check_value(i64, 3, "n") == 3
    with pytest.raises(CortexError, match="w: expected an f32 scalar, got a bool"):
        check_value(f32, True, "w")
    assert initial_zeros(i64, "s") == 0
    with pytest.raises(CortexError, match="dynamic shape"):
        initial_zeros(TensorType(f32, [-1]), "state 's'")
