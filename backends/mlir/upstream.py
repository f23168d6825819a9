"""Cross-checking lowered modules with upstream MLIR: `mlir-opt` and `mlir-runner`.

`verify_with_mlir_opt(module)` has upstream MLIR parse and verify a lowered
module. `run_with_mlir(module, entry, inputs)` executes a function of a
lowered module natively: it adds a `main` that builds the inputs as
constants, calls `entry` and prints every result with the runner library's
`printMemrefI32`/`printMemrefI64` on the float bits (a bitcast, so the
printed values are exact), lowers to the LLVM dialect with `LLVM_PIPELINE` below and parses what `mlir-runner` prints.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    AnyFloat,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    UnrankedTensorType,
    i32,
    i64,
)
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from cortex.dialects import abi
from cortex.ir import function_named, to_text
from cortex.lowering.builders import PARALLEL, affine_map, dense_attr

MLIR_BIN = Path(os.environ.get("CORTEX_MLIR_BIN", "/usr/lib/llvm-22/bin"))
MLIR_LIB = MLIR_BIN.parent / "lib"
RUNNER_LIBS = ("libmlir_runner_utils.so", "libmlir_c_runner_utils.so")

LLVM_PIPELINE = (
    "--one-shot-bufferize=bufferize-function-boundaries",
    "--convert-linalg-to-loops",
    "--convert-scf-to-cf",
    "--expand-strided-metadata",
    "--lower-affine",
    "--finalize-memref-to-llvm",
    "--convert-math-to-llvm",
    "--convert-math-to-libm",
    "--convert-func-to-llvm",
    "--convert-arith-to-llvm",
    "--convert-cf-to-llvm",
    "--reconcile-unrealized-casts",
)
"""mlir-opt flags from tensors to the LLVM dialect (math ops without an LLVM intrinsic call libm)."""

MAIN = "cortex_mlir_main"


class MlirToolError(Exception):
    """mlir-opt or mlir-runner rejected the module: the tool's own diagnostic."""


def runner_libs() -> list[Path]:
    found = []
    for name in RUNNER_LIBS:
        candidates = sorted(MLIR_LIB.glob(name + "*"), key=lambda p: len(p.name))
        if candidates:
            found.append(candidates[0])
    return found


def mlir_opt_available() -> bool:
    return (MLIR_BIN / "mlir-opt").exists()


def mlir_runner_available() -> bool:
    return mlir_opt_available() and (MLIR_BIN / "mlir-runner").exists() and len(runner_libs()) == len(RUNNER_LIBS)


def _tool(name: str, args: Sequence[str], text: str, timeout: float = 300) -> str:
    proc = subprocess.run(
        [str(MLIR_BIN / name), *args], input=text, capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        raise MlirToolError(f"{name} failed ({proc.returncode}): {proc.stderr.strip()[:4000]}")
    return proc.stdout


def mlir_opt(text: str, *args: str) -> str:
    """`mlir-opt [args]` on `text`; returns its output, raises MlirToolError with its diagnostic."""
    return _tool("mlir-opt", args, text)


def verify_with_mlir_opt(module: ModuleOp, generic: bool = True) -> str:
    """Upstream MLIR parses and verifies the printed module; returns its canonical print."""
    return mlir_opt(to_text(module, generic=generic))


# ---------------------------------------------------------------- running a function


def _constant(value: np.ndarray | float, t: Attribute) -> SSAValue:
    if isinstance(t, TensorType):
        return arith.ConstantOp(dense_attr(np.asarray(value).reshape(t.get_shape()), t.element_type)).result
    if not isinstance(t, AnyFloat):
        raise TypeError(f"no constant of type {t}")
    return arith.ConstantOp(FloatAttr(float(value), t)).result


_BITS: dict[type, tuple[IntegerType, str, str]] = {
    Float32Type: (i32, "printMemrefI32", "<f4"),
    Float64Type: (i64, "printMemrefI64", "<f8"),
}


def _print_bits(value: SSAValue, printers: dict[str, func.FuncOp]) -> None:
    """Print `value` (a float tensor or scalar) as the integers holding its bits."""
    t = value.type
    if not isinstance(t, TensorType):
        value = tensor.FromElementsOp(value, result_type=TensorType(t, [])).result
        t = value.type
    int_type, printer, _ = _BITS[type(t.element_type)]
    shape = t.get_shape()
    rank = len(shape)
    body = Block(arg_types=[t.element_type, int_type])
    with ImplicitBuilder(body) as (x, _out):
        YieldOp(arith.BitcastOp(x, int_type).result)
    init = tensor.EmptyOp([], TensorType(int_type, shape)).tensor
    identity = affine_map(rank, range(rank))
    bits = GenericOp([value], [init], Region(body), [identity, identity], [PARALLEL] * rank, [init.type]).res[0]
    # casting to an unranked tensor is MLIR's tensor.cast; xDSL's signature names only ranked results
    func.CallOp(printer, [tensor.CastOp(bits, UnrankedTensorType(int_type)).dest], [])  # type: ignore[arg-type]


def reachable(module: ModuleOp, entry: str) -> set[str]:
    """The functions `entry` calls, directly or not (itself included)."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    if entry not in functions:
        raise ValueError(f"no function @{entry} in the module")
    seen, todo = set(), [entry]
    while todo:
        name = todo.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        todo.extend(op.callee.string_value() for op in functions[name].walk() if isinstance(op, func.CallOp))
    return seen


def with_main(module: ModuleOp, entry: str, inputs: Sequence[np.ndarray | float]) -> ModuleOp:
    """`entry` and what it calls, with a `main` that applies it to constant `inputs` and prints every result."""
    program = module.clone()
    keep = reachable(program, entry)
    for op in list(program.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data not in keep:
            op.detach()
            op.erase()
    fn = function_named(program, entry, defined=False)
    assert fn is not None  # reachable() found it
    if fn.is_declaration:
        raise ValueError(f"@{entry} is a declaration")
    fn.sym_visibility = None  # callable from main (a private piece, e.g. from cortex-partition)
    arg_types, res_types = fn.function_type.inputs.data, fn.function_type.outputs.data
    if len(inputs) != len(arg_types):
        raise ValueError(f"@{entry} takes {len(arg_types)} arguments, got {len(inputs)} inputs")
    for t in res_types:
        element = t.element_type if isinstance(t, TensorType) else t
        if type(element) not in _BITS:
            raise ValueError(f"cannot print a result of type {t} (f32 and f64 only)")
    printers: dict[str, func.FuncOp] = {}
    with ImplicitBuilder(program.body):
        for int_type, name, _ in _BITS.values():
            printers[name] = func.FuncOp.external(name, [UnrankedTensorType(int_type)], [])
        main = func.FuncOp(MAIN, ([], []))
    with ImplicitBuilder(main.body):
        args = [_constant(value, t) for value, t in zip(inputs, arg_types)]
        call = func.CallOp(entry, args, list(res_types))
        for result in call.res:
            _print_bits(result, printers)
        func.ReturnOp()
    return program


_HEADER = re.compile(r"Unranked Memref base@ = 0x[0-9a-fA-F]+ rank = (\d+) offset = \d+ sizes = \[([^\]]*)\] strides = \[[^\]]*\] data =")


def parse_printed(stdout: str, dtypes: Sequence[str]) -> list[np.ndarray]:
    """The arrays printed by printMemrefI32/I64, reinterpreted as the float dtypes given."""
    headers = list(_HEADER.finditer(stdout))
    arrays = []
    for i, (match, dtype) in enumerate(zip(headers, dtypes)):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(stdout)
        shape = tuple(int(d) for d in match.group(2).split(",") if d.strip())
        ints = np.array([int(x) for x in re.findall(r"-?\d+", stdout[match.end() : end])], dtype=dtype.replace("f", "i"))
        arrays.append(ints.view(dtype).reshape(shape))
    if len(arrays) != len(dtypes):
        raise MlirToolError(f"expected {len(dtypes)} printed results, found {len(arrays)}:\n{stdout[:2000]}")
    return arrays


def run_with_mlir(module: ModuleOp, entry: str, inputs: Sequence[np.ndarray | float]) -> list[np.ndarray]:
    """Compile `entry` of a lowered module with mlir-opt, run it with mlir-runner; its results as arrays."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    for name in reachable(module, entry):
        if abi.PROPS in functions[name].attributes:
            raise ValueError(f"@{entry} calls @{name}, an OpenCV extern: mlir-runner cannot run it")
    program = with_main(module, entry, inputs)
    fn = function_named(program, entry, defined=False)
    assert fn is not None
    dtypes = []
    for t in fn.function_type.outputs.data:
        element = t.element_type if isinstance(t, TensorType) else t
        dtypes.append(_BITS[type(element)][2])
    return parse_printed(run_on_llvm(program, MAIN), dtypes)


def run_on_llvm(program: ModuleOp, main: str, *runner_args: str, timeout: float = 300) -> str:
    """What `@main` of `program` prints: lowered to LLVM by mlir-opt (`LLVM_PIPELINE`), run by mlir-runner
    with the runtime libraries and `runner_args` (e.g. "-O3")."""
    llvm = mlir_opt(to_text(program, generic=True), *LLVM_PIPELINE)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(llvm)
        path = f.name
    try:
        libs = [f"-shared-libs={lib}" for lib in runner_libs()]
        return _tool("mlir-runner", [path, "-e", main, "-entry-point-result=void", *runner_args, *libs], "", timeout)
    finally:
        os.unlink(path)


__all__ = [
    "LLVM_PIPELINE",
    "MlirToolError",
    "mlir_opt",
    "mlir_opt_available",
    "mlir_runner_available",
    "run_on_llvm",
    "run_with_mlir",
    "verify_with_mlir_opt",
    "with_main",
]
