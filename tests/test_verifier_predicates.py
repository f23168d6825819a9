"""The verifier on comparison predicates and unreachable blocks, as MLIR has them."""

from __future__ import annotations

import subprocess

import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, f32, i1, i64
from xdsl.ir import Block, Region

import cortex
from cortex.backends.mlir.upstream import MLIR_BIN, mlir_opt_available
from cortex.errors import CortexError
from cortex.ir import InvalidIRError, parse


def cmpf_text(predicate: int) -> str:
    return f"""func.func @f(%a: f32) -> i1 {{
  %b = "arith.cmpf"(%a, %a) <{{predicate = {predicate} : i64, fastmath = #arith.fastmath<none>}}> : (f32, f32) -> i1
  func.return %b : i1
}}"""


@pytest.mark.parametrize("predicate", [-1, 16, 2**63 - 1])
def test_a_cmpf_predicate_outside_the_enum_is_rejected(predicate):
    with pytest.raises(InvalidIRError, match=rf"predicate {predicate} is not one of arith's 16 predicates"):
        parse(cmpf_text(predicate))


@pytest.mark.parametrize("predicate", [0, 15])
def test_the_enum_ends_are_accepted(predicate):
    parse(cmpf_text(predicate))


def test_a_cmpi_predicate_outside_the_enum_is_rejected():
    with pytest.raises(InvalidIRError, match=r"predicate 10 is not one of arith's 10 predicates"):
        parse("""func.func @f(%a: i32) -> i1 {
  %b = "arith.cmpi"(%a, %a) <{predicate = 10 : i64}> : (i32, i32) -> i1
  func.return %b : i1
}""")


def test_compiling_a_built_module_with_a_bad_predicate_is_a_cortex_error_not_a_key_error():
    block = Block(arg_types=[f32])
    compare = arith.CmpfOp(block.args[0], block.args[0], "olt")
    compare.properties["predicate"] = IntegerAttr(-1, i64)
    block.add_ops([compare, func.ReturnOp(compare.result)])
    module = ModuleOp([func.FuncOp("main", ([f32], [i1]), Region(block))])
    with pytest.raises(CortexError, match="predicate -1"):
        cortex.compile(module, entry="main", mode=None)


UNREACHABLE = """func.func @f(%a: f32) -> f32 {
  func.return %a : f32
^bb1:
  %b = arith.addf %a, %a : f32
  func.return %b : f32
}"""


def test_an_unreachable_block_may_use_the_entry_arguments():
    module = parse(UNREACHABLE)  # mlir-opt accepts it: no dominance is checked where the entry cannot reach
    assert cortex.reference(module, entry="f", mode=None)(1.5)[0] == 1.5


@pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
def test_mlir_opt_agrees_on_the_unreachable_block_and_the_predicates(tmp_path):
    for text, ok in [(UNREACHABLE, True), (cmpf_text(-1), False), (cmpf_text(15), True)]:
        path = tmp_path / "in.mlir"
        path.write_text(text)
        done = subprocess.run([str(MLIR_BIN / "mlir-opt"), str(path)], capture_output=True, text=True, timeout=60)
        assert (done.returncode == 0) == ok, done.stderr


def test_a_value_from_a_block_that_does_not_dominate_is_named_as_such():
    with pytest.raises(InvalidIRError, match=r"operand #0 \(%c\) does not dominate this use"):
        parse("""func.func @f(%a: f32) -> f32 {
  %y = arith.addf %c, %a : f32
  func.return %y : f32
^bb1:
  %c = arith.addf %a, %a : f32
  func.return %c : f32
}""")
