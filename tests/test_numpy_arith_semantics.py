"""arith/math ops whose MLIR meaning differs from the obvious NumPy call, through the NumPy backend.

Mutation testing found three emitter choices no test pinned down:
- `arith.maxnumf`/`minnumf` ignore a NaN operand (`np.fmax`), while
  `arith.maximumf`/`minimumf` propagate it (`np.maximum`);
- `arith.remsi` is C's remainder, with the dividend's sign (`np.fmod`), not
  Python's floored `%` (`np.remainder`);
- `math.round` rounds halfway cases away from zero, not to even (`np.round`).
Each runs in a `linalg.generic` body (whole-array form) and as a scalar op,
against values written out by hand from the MLIR definitions, and, where
`mlir-runner` is installed, against upstream MLIR too (its f32 results).
"""

from __future__ import annotations

import numpy as np
import pytest

from cortex.backends.mlir.upstream import mlir_runner_available, run_with_mlir
from cortex.driver import compile_lowered
from cortex.ir import parse_module
from cortex.runtime.pipeline import LoadedProgram

NAN = np.float32(np.nan)
A = np.array([NAN, 1.0, -2.0, NAN, 2.5, -0.5], np.float32)
B = np.array([1.0, NAN, -3.0, NAN, -2.5, 0.5], np.float32)
X = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], np.float32)
I = np.array([-7, 7, -7, 7, 6, -6], np.int32)
J = np.array([3, -3, -3, 3, 4, 4], np.int32)

EXPECTED = {
    "maxnumf": np.array([1.0, 1.0, -2.0, NAN, 2.5, 0.5], np.float32),
    "minnumf": np.array([1.0, 1.0, -3.0, NAN, -2.5, -0.5], np.float32),
    "maximumf": np.array([NAN, NAN, -2.0, NAN, 2.5, 0.5], np.float32),
    "round": np.array([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0], np.float32),
    "remsi": np.array([-1, 1, -1, 1, 2, -2], np.int32),
}

F, IT = "tensor<6xf32>", "tensor<6xi32>"
BINARY_F = """  %NAME = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%a, %b : {F}, {F}) outs(%e : {F}) {{
  ^bb0(%p: f32, %q: f32, %o: f32):
    %0 = arith.NAME %p, %q : f32
    linalg.yield %0 : f32
  }} -> {F}
"""
ROUND = f"""  %round = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%x : {F}) outs(%e : {F}) {{
  ^bb0(%v: f32, %o: f32):
    %3 = math.round %v : f32
    linalg.yield %3 : f32
  }} -> {F}
"""
REMSI = f"""  %ei = tensor.empty() : {IT}
  %remsi = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%i, %j : {IT}, {IT}) outs(%ei : {IT}) {{
  ^bb0(%s: i32, %t: i32, %o: i32):
    %4 = arith.remsi %s, %t : i32
    linalg.yield %4 : i32
  }} -> {IT}
"""


def arrays_module(integers: bool = True) -> str:
    """@arrays: one linalg.generic per op (mlir-runner prints f32 results only: `integers=False`)."""
    args = f"%a: {F}, %b: {F}, %x: {F}" + (f", %i: {IT}, %j: {IT}" if integers else "")
    results = ["%maxnumf", "%minnumf", "%maximumf", "%round"] + (["%remsi"] if integers else [])
    types = ", ".join([F] * 4 + ([IT] if integers else []))
    return (
        "#id = affine_map<(d0) -> (d0)>\n"
        f"func.func @arrays({args}) -> ({types}) {{\n  %e = tensor.empty() : {F}\n"
        + "".join(BINARY_F.replace("NAME", name).format(F=F) for name in ("maxnumf", "minnumf", "maximumf"))
        + ROUND
        + (REMSI if integers else "")
        + f"  func.return {', '.join(results)} : {types}\n}}\n"
    )


SCALARS = """
func.func @scalars(%p: f32, %q: f32, %v: f32, %s: i32, %t: i32) -> (f32, f32, f32, f32, i32) {
  %0 = arith.maxnumf %p, %q : f32
  %1 = arith.minnumf %p, %q : f32
  %2 = arith.maximumf %p, %q : f32
  %3 = math.round %v : f32
  %4 = arith.remsi %s, %t : i32
  func.return %0, %1, %2, %3, %4 : f32, f32, f32, f32, i32
}
"""

NAMES = ["maxnumf", "minnumf", "maximumf", "round", "remsi"]


def compiled(text: str, entry: str) -> LoadedProgram:
    return compile_lowered(parse_module(text), entry)


def assert_named(results, index=slice(None)) -> None:
    for name, got in zip(NAMES, results):
        np.testing.assert_array_equal(np.asarray(got), EXPECTED[name][index], err_msg=name)


def test_whole_array_forms():
    assert_named(compiled(arrays_module(), "arrays")(A, B, X, I, J))


@pytest.mark.parametrize("k", range(6))
def test_scalar_forms(k):
    run = compiled(SCALARS, "scalars")
    assert_named(run(A[k], B[k], X[k], I[k], J[k]), k)


@pytest.mark.skipif(not mlir_runner_available(), reason="mlir-runner (mlir-22-tools) not installed")
def test_upstream_agrees():
    """The expectations are MLIR's: mlir-runner computes the same (NaN payloads aside)."""
    results = run_with_mlir(parse_module(arrays_module(integers=False)), "arrays", [A, B, X])
    assert_named(results)


SITOFP_I1 = """
#id = affine_map<(d0) -> (d0)>
func.func @arrays(%c: tensor<2xi1>) -> tensor<2xf32> {
  %e = tensor.empty() : tensor<2xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%c : tensor<2xi1>) outs(%e : tensor<2xf32>) {
  ^bb0(%v: i1, %o: f32):
    %0 = arith.sitofp %v : i1 to f32
    linalg.yield %0 : f32
  } -> tensor<2xf32>
  func.return %r : tensor<2xf32>
}
func.func @scalars(%x: f32) -> (f32, f32, f32, f32) {
  %t = arith.cmpf oeq, %x, %x : f32
  %f = arith.cmpf une, %x, %x : f32
  %0 = arith.sitofp %t : i1 to f32
  %1 = arith.uitofp %t : i1 to f32
  %2 = arith.sitofp %f : i1 to f32
  %3 = arith.uitofp %f : i1 to f32
  func.return %0, %1, %2, %3 : f32, f32, f32, f32
}
"""


def test_sitofp_reads_an_i1_as_signed():
    """`arith.sitofp` of an i1 true is -1.0 (the bit is the sign), `uitofp`'s 1.0; false is +0.0 in both."""
    (result,) = compiled(SITOFP_I1, "arrays")(np.array([True, False]))
    got = np.asarray(result)
    np.testing.assert_array_equal(got, np.array([-1.0, 0.0], np.float32))
    assert not np.signbit(got[1])
    results = [float(v) for v in compiled(SITOFP_I1, "scalars")(np.float32(2.0))]  # true, true, false, false
    assert results == [-1.0, 1.0, 0.0, 0.0] and not any(np.signbit(results[2:]))
