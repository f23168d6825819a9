"""NaN and ±inf constants survive Cortex's printer and parser exactly.

MLIR prints a non-finite float as its bit pattern (`0x7FC00000`) and reads
that back as the float; xDSL's parser read a hexadecimal element of a
`dense<...>` as the integer 2143289344, so `cortex-opt model.onnx` (which
re-parses its own text) silently turned an initializer's NaN into 2.1e9.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Block, Region

from cortex.ir import InvalidIRError, parse, parse_module, to_text
from cortex.tools.cortex_opt import main as opt_main
from cortex.tools.import_onnx import onnx_as_text

TYPES = {"f16": (Float16Type(), np.float16), "f32": (Float32Type(), np.float32), "f64": (Float64Type(), np.float64)}
SPECIAL = [math.nan, math.inf, -math.inf, -0.0, 0.0]


def constants_module(values: list[float], width: str) -> ModuleOp:
    """@f returning one dense tensor constant and one scalar constant per value."""
    element, _ = TYPES[width]
    tensor = TensorType(element, [len(values)])
    ops = [arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor, values))]
    ops += [arith.ConstantOp(FloatAttr(v, element)) for v in values]
    ops.append(func.ReturnOp(*[op.result for op in ops]))
    body = Block(ops)
    fn = func.FuncOp("f", ([], [op.result.type for op in ops[:-1]]), Region(body))
    return ModuleOp([fn])


def constant_bits(module: ModuleOp, dtype) -> list[bytes]:
    """Every constant's value as raw bytes of `dtype` (NaN compares equal to itself this way)."""
    found = []
    for op in module.walk():
        if op.name in ("arith.constant", "cortex.constant"):
            value = op.properties["value"]
            if isinstance(value, DenseIntOrFPElementsAttr):
                found.append(np.asarray(value.get_values(), dtype).tobytes())
            else:
                found.append(np.asarray([value.value.data], dtype).tobytes())
    return found


@pytest.mark.parametrize("width", sorted(TYPES))
@pytest.mark.parametrize("generic", [False, True])
def test_non_finite_constants_round_trip_exactly(width, generic):
    module = constants_module(SPECIAL + [1.5], width)
    text = to_text(module, generic=generic)
    assert "0x" in text  # printed as bit patterns, as mlir-opt does
    again = parse_module(text)
    dtype = TYPES[width][1]
    assert constant_bits(again, dtype) == constant_bits(module, dtype)
    assert to_text(again, generic=generic) == text


@settings(max_examples=60, deadline=None)
@given(
    width=st.sampled_from(sorted(TYPES)),
    values=st.lists(st.one_of(st.sampled_from(SPECIAL), st.floats(width=32)), min_size=1, max_size=6),
    generic=st.booleans(),
)
def test_random_constants_round_trip_exactly(width, values, generic):
    dtype = TYPES[width][1]
    with np.errstate(over="ignore"):
        values = [float(dtype(v)) for v in values]  # representable in the width (f16 overflows to inf)
    module = constants_module(values, width)
    text = to_text(module, generic=generic)
    again = parse_module(text)
    assert constant_bits(again, dtype) == constant_bits(module, dtype)
    assert to_text(again, generic=generic) == text


def test_a_splat_of_nan_and_the_mlir_spelling_read_as_nan():
    module = parse("""func.func @f() -> (tensor<3xf32>, tensor<2xf64>) {
  %a = arith.constant dense<0x7FC00000> : tensor<3xf32>
  %b = arith.constant dense<[0x7FF0000000000000, 0xFFF0000000000000]> : tensor<2xf64>
  func.return %a, %b : tensor<3xf32>, tensor<2xf64>
}""")
    first, second = [op.properties["value"].get_values() for op in module.walk() if op.name == "arith.constant"]
    assert all(math.isnan(v) for v in first)
    assert list(second) == [math.inf, -math.inf]


def test_a_bit_pattern_wider_than_the_type_is_an_error():
    with pytest.raises(InvalidIRError, match="does not fit in f16"):
        parse("""func.func @f() -> tensor<1xf16> {
  %a = arith.constant dense<[0x17C00]> : tensor<1xf16>
  func.return %a : tensor<1xf16>
}""")


def test_hexadecimal_integers_stay_integers():
    module = parse("""func.func @f() -> tensor<2xi32> {
  %a = arith.constant dense<[0x10, 3]> : tensor<2xi32>
  func.return %a : tensor<2xi32>
}""")
    (op,) = [op for op in module.walk() if op.name == "arith.constant"]
    assert list(op.properties["value"].get_values()) == [16, 3]


def nan_model(path) -> np.ndarray:
    weights = np.array([np.nan, np.inf, -np.inf, 1.5], np.float32)
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "w"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(weights, "w")],
    )
    onnx.save(helper.make_model(graph), path)
    return weights


def test_cortex_opt_on_onnx_keeps_nan_and_inf_initializers(tmp_path, capsys):
    weights = nan_model(tmp_path / "m.onnx")
    assert constant_bits(parse(onnx_as_text(str(tmp_path / "m.onnx"))), np.float32) == [weights.tobytes()]
    for generic in ([], ["--print-op-generic"]):
        assert opt_main([str(tmp_path / "m.onnx"), *generic]) == 0
        printed = capsys.readouterr().out
        assert constant_bits(parse(printed), np.float32) == [weights.tobytes()]
