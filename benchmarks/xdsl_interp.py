"""Running lowered (linalg/arith/math/tensor) Cortex IR on xDSL's own interpreter.

The baseline of benchmark (b): the same IR the NumPy backend compiles,
executed by `xdsl.interpreter.Interpreter` with xDSL's implementations.
xDSL 0.74 lacks a few that the lowering emits; each is
filled here by a small implementation in xDSL's own style, scalar by scalar:
dense `arith.constant`, `linalg.fill` on tensors, `arith.negf/divf`,
`math.tanh/absf/erf/powf`; and `math.exp`, whose xDSL version raises
OverflowError where IEEE float (and the compiled code) gives inf.
"""

from __future__ import annotations

import math as pymath

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, f32
from xdsl.dialects.linalg.ops import FillOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters import register_implementations
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.builtin import xtype_for_el_type
from xdsl.interpreters.math import MathFunctions
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr

from cortex.ir import make_context


def to_shaped(array: np.ndarray) -> ShapedArray:
    array = np.asarray(array, dtype=np.float32)
    return ShapedArray(TypedPtr.new(array.ravel().tolist(), xtype=f32), list(array.shape))


def to_numpy(value: ShapedArray) -> np.ndarray:
    return np.array(value.data, dtype=np.float32).reshape(value.shape)


@register_impls
class DenseConstants(ArithFunctions):
    """`arith.constant dense<...>` as a ShapedArray (xDSL only does scalars)."""

    @impl(arith.ConstantOp)
    def run_constant(self, interpreter: Interpreter, op: arith.ConstantOp, args):
        value = op.value
        if not isinstance(value, DenseIntOrFPElementsAttr):
            return super().run_constant(interpreter, op, args).values
        shape, values = list(value.get_shape()), list(value.get_values())
        if len(values) == 1:  # a splat
            values *= int(np.prod(shape))
        xtype = xtype_for_el_type(value.get_element_type(), interpreter.index_bitwidth)
        return (ShapedArray(TypedPtr.new(values, xtype=xtype), shape),)


@register_impls
class MissingScalarOps(InterpreterFunctions):
    """The scalar float ops the lowering emits inside linalg bodies that xDSL 0.74 lacks."""

    @impl(arith.NegfOp)
    def run_negf(self, interpreter: Interpreter, op: arith.NegfOp, args):
        return (-args[0],)

    @impl(arith.DivfOp)
    def run_divf(self, interpreter: Interpreter, op: arith.DivfOp, args):
        lhs, rhs = args
        if rhs == 0.0:  # IEEE division, as the compiled code does
            return (pymath.copysign(pymath.inf, lhs) if lhs else pymath.nan,)
        return (lhs / rhs,)

    @impl(math.ExpOp)
    def run_exp(self, interpreter: Interpreter, op: math.ExpOp, args):
        try:
            return (pymath.exp(args[0]),)
        except OverflowError:
            return (pymath.inf,)

    @impl(math.TanhOp)
    def run_tanh(self, interpreter: Interpreter, op: math.TanhOp, args):
        return (pymath.tanh(args[0]),)

    @impl(math.AbsFOp)
    def run_absf(self, interpreter: Interpreter, op: math.AbsFOp, args):
        return (abs(args[0]),)

    @impl(math.ErfOp)
    def run_erf(self, interpreter: Interpreter, op: math.ErfOp, args):
        return (pymath.erf(args[0]),)

    @impl(math.PowFOp)
    def run_powf(self, interpreter: Interpreter, op: math.PowFOp, args):
        return (pymath.pow(args[0], args[1]),)


@register_impls
class TensorFill(InterpreterFunctions):
    """`linalg.fill` of a scalar into a tensor (xDSL's asserts on scalars and non-zero outs)."""

    @impl(FillOp)
    def run_fill(self, interpreter: Interpreter, op: FillOp, args):
        value, out = args
        if isinstance(value, ShapedArray):
            value = value.data_ptr[0]
        result = out.copy()
        for i in range(result.size):
            result.data_ptr[i] = value
        return (result,) if op.results else ()


def make_interpreter(module: ModuleOp) -> Interpreter:
    """A fresh interpreter (xDSL keeps scopes pushed after an error, so one per run)."""
    interpreter = Interpreter(module)
    register_implementations(interpreter, make_context())
    interpreter.register_implementations(MathFunctions())
    interpreter.register_implementations(MissingScalarOps(), override=True)
    interpreter.register_implementations(DenseConstants(), override=True)
    interpreter.register_implementations(TensorFill(), override=True)
    return interpreter


class InterpretedFunction:
    """`entry` of a lowered module, called through one interpreter (set up once, like a compile)."""

    def __init__(self, module: ModuleOp, entry: str):
        self.interpreter = make_interpreter(module)
        self.entry = entry

    def __call__(self, *inputs: np.ndarray) -> list[np.ndarray]:
        results = self.interpreter.call_op(self.entry, tuple(to_shaped(a) for a in inputs))
        return [to_numpy(r) for r in results]
