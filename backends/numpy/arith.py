"""arith and math ops as NumPy expressions, on scalars or whole arrays.

The same table serves an op standing alone in a function (a scalar compare,
an elementwise op on tensors) and an op inside a `linalg.generic` body, where
every operand is a whole array aligned to the iteration space. An op is
translated in *array* form when any operand is an array: ufuncs, `np.where`,
`.astype`/`.view` casts; otherwise in *scalar* form (Python operators, `if`
expressions). Where MLIR's integer semantics differ from NumPy's operators
(unsigned views, division rounding toward zero) the code calls `_rt` helpers.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.ir import Operation

from cortex.backends.numpy import syntax
from cortex.backends.numpy.codegen import (
    FunctionEmitter,
    Term,
    bit_width,
    dt,
    literal_expr,
    np_dtype,
    op_error,
    static_shape,
    translates,
)


@dataclass(frozen=True)
class Ufunc:
    fn: str  # the NumPy ufunc
    infix: str | None = None  # its Python operator (binary), or prefix (unary)


UFUNCS: dict[type[Operation], Ufunc] = {
    arith.AddfOp: Ufunc("np.add", "+"),
    arith.AddiOp: Ufunc("np.add", "+"),
    arith.SubfOp: Ufunc("np.subtract", "-"),
    arith.SubiOp: Ufunc("np.subtract", "-"),
    arith.MulfOp: Ufunc("np.multiply", "*"),
    arith.MuliOp: Ufunc("np.multiply", "*"),
    arith.DivfOp: Ufunc("np.divide", "/"),
    arith.FloorDivSIOp: Ufunc("np.floor_divide", "//"),
    arith.RemSIOp: Ufunc("np.fmod"),  # C remainder: the sign of the dividend
    arith.MaximumfOp: Ufunc("np.maximum"),  # NaN-propagating, like maximumf
    arith.MinimumfOp: Ufunc("np.minimum"),
    arith.MaxnumfOp: Ufunc("np.fmax"),  # NaN-ignoring, like maxnumf
    arith.MinnumfOp: Ufunc("np.fmin"),
    arith.MaxSIOp: Ufunc("np.maximum"),
    arith.MinSIOp: Ufunc("np.minimum"),
    arith.AndIOp: Ufunc("np.bitwise_and", "&"),
    arith.OrIOp: Ufunc("np.bitwise_or", "|"),
    arith.XOrIOp: Ufunc("np.bitwise_xor", "^"),
    arith.ShLIOp: Ufunc("np.left_shift", "<<"),
    arith.ShRSIOp: Ufunc("np.right_shift", ">>"),
    arith.NegfOp: Ufunc("np.negative", "-"),
    math.AbsFOp: Ufunc("np.abs"),
    math.AbsIOp: Ufunc("np.abs"),
    math.ExpOp: Ufunc("np.exp"),
    math.Exp2Op: Ufunc("np.exp2"),
    math.ExpM1Op: Ufunc("np.expm1"),
    math.LogOp: Ufunc("np.log"),
    math.Log2Op: Ufunc("np.log2"),
    math.Log10Op: Ufunc("np.log10"),
    math.Log1pOp: Ufunc("np.log1p"),
    math.SqrtOp: Ufunc("np.sqrt"),
    math.CbrtOp: Ufunc("np.cbrt"),
    math.TanhOp: Ufunc("np.tanh"),
    math.SinOp: Ufunc("np.sin"),
    math.CosOp: Ufunc("np.cos"),
    math.TanOp: Ufunc("np.tan"),
    math.AsinOp: Ufunc("np.arcsin"),
    math.AcosOp: Ufunc("np.arccos"),
    math.AtanOp: Ufunc("np.arctan"),
    math.SinhOp: Ufunc("np.sinh"),
    math.CoshOp: Ufunc("np.cosh"),
    math.AsinhOp: Ufunc("np.arcsinh"),
    math.AcoshOp: Ufunc("np.arccosh"),
    math.AtanhOp: Ufunc("np.arctanh"),
    math.FloorOp: Ufunc("np.floor"),
    math.CeilOp: Ufunc("np.ceil"),
    math.TruncOp: Ufunc("np.trunc"),
    math.RoundEvenOp: Ufunc("np.rint"),
    math.PowFOp: Ufunc("np.power", "**"),
    math.FPowIOp: Ufunc("np.power", "**"),
    math.IPowIOp: Ufunc("np.power", "**"),
    math.Atan2Op: Ufunc("np.arctan2"),
    math.CopySignOp: Ufunc("np.copysign"),
}

# i1 arithmetic is arithmetic modulo 2.
BOOL_UFUNCS: dict[type[Operation], Ufunc] = {
    arith.AddiOp: Ufunc("np.bitwise_xor", "^"),
    arith.SubiOp: Ufunc("np.bitwise_xor", "^"),
    arith.MuliOp: Ufunc("np.bitwise_and", "&"),
}

Custom = Callable[[Operation, Sequence[Term], bool], ast.expr]
CUSTOM: dict[type[Operation], Custom] = {}


def custom(*op_types: type[Operation]):
    def register(fn: Custom) -> Custom:
        for t in op_types:
            CUSTOM[t] = fn
        return fn

    return register


def ufunc_of(op: Operation) -> Ufunc | None:
    if np_dtype(op.results[0].type) == "bool" and type(op) in BOOL_UFUNCS:
        return BOOL_UFUNCS[type(op)]
    return UFUNCS.get(type(op))


def is_elementwise(op: Operation) -> bool:
    return type(op) in UFUNCS or type(op) in CUSTOM


def in_place_capable(op: Operation) -> bool:
    """Whether the op's array form can write into an operand's buffer (`out=`)."""
    return ufunc_of(op) is not None


def elementwise(op: Operation, args: Sequence[Term], out: ast.expr | None = None) -> ast.expr:
    """The expression computing `op` from `args`; with `out`, the in-place ufunc call."""
    array = any(a.is_array for a in args)
    dtype = np_dtype(op.results[0].type)
    uf = ufunc_of(op)
    if uf is not None:
        exprs = [a.expr for a in args]
        if out is not None:
            return syntax.call(uf.fn, *exprs, out=out)
        # A scalar float division stays NumPy's: a Python float divisor (a literal a select picked) would
        # raise ZeroDivisionError where IEEE gives ±inf or NaN.
        if uf.infix and len(exprs) == 2 and not (uf.infix == "/" and not array):
            return syntax.binop(exprs[0], uf.infix, exprs[1])
        if uf.infix and len(exprs) == 1:
            return syntax.unary(uf.infix, exprs[0])
        call = syntax.call(uf.fn, *exprs)
        if not array and dtype in ("float32", "float16"):
            return syntax.call(dt(dtype), call)  # keep scalars in the declared width
        return call
    fn = CUSTOM.get(type(op))
    if fn is None:
        raise op_error(op, "has no NumPy translation")
    return fn(op, args, array)


# ---- comparisons and select

Relation = Callable[[ast.expr, ast.expr, bool], ast.expr]


def _relation(symbol: str) -> Relation:
    return lambda a, b, array: syntax.compare(a, symbol, b)


def _either(x: Relation, y: Relation) -> Relation:
    """x or y: `|` on arrays, `or` on scalars."""
    return lambda a, b, array: syntax.binop(x(a, b, array), "|", y(a, b, array)) if array else syntax.either(x(a, b, array), y(a, b, array))


def _negated(x: Relation) -> Relation:
    """not x: `~` on arrays, `not` on scalars."""
    return lambda a, b, array: syntax.unary("~" if array else "not", x(a, b, array))


def _isnan(which: int) -> Relation:
    return lambda a, b, array: syntax.call("np.isnan", (a, b)[which])


_ONE = _either(_relation("<"), _relation(">"))  # ordered and not equal
_UNORDERED = _either(_isnan(0), _isnan(1))
_CMPF: dict[int, Relation] = {  # predicate -> form; 0 and 15 are the constants False and True
    1: _relation("=="),
    2: _relation(">"),
    3: _relation(">="),
    4: _relation("<"),
    5: _relation("<="),
    6: _ONE,
    7: _negated(_UNORDERED),
    8: _negated(_ONE),
    9: _negated(_relation("<=")),
    10: _negated(_relation("<")),
    11: _negated(_relation(">=")),
    12: _negated(_relation(">")),
    13: _relation("!="),
    14: _UNORDERED,
}

_CMPI = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]  # eq ne slt sle sgt sge ult ule ugt uge


@custom(arith.CmpfOp)
def _cmpf(op: arith.CmpfOp, args, array):
    a, b = (t.expr for t in args)
    predicate = op.predicate.value.data
    if predicate in (0, 15):  # always false / always true
        value = syntax.expr(predicate == 15)
        if not array:
            return value
        shape = syntax.call("np.broadcast_shapes", syntax.call("np.shape", a), syntax.call("np.shape", b))
        return syntax.call("np.full", shape, value)
    return _CMPF[predicate](a, b, array)


def _unsigned(x: ast.expr, bits: int) -> ast.Call:
    return syntax.call("_rt.u", x, bits)


@custom(arith.CmpiOp)
def _cmpi(op: arith.CmpiOp, args, array):
    a, b = (t.expr for t in args)
    predicate = op.predicate.value.data
    if predicate >= 6:  # unsigned
        bits = bit_width(op.lhs.type)
        a, b = _unsigned(a, bits), _unsigned(b, bits)
    return syntax.compare(a, _CMPI[predicate], b)


@custom(arith.SelectOp)
def _select(op: arith.SelectOp, args, array):
    c, a, b = args
    if not array:
        return syntax.if_else(a.expr, c.expr, b.expr)
    expr: ast.expr = syntax.call("np.where", c.expr, a.expr, b.expr)
    dtype = np_dtype(op.result.type)
    if not (a.is_array and a.dtype == dtype) and not (b.is_array and b.dtype == dtype):
        expr = syntax.method(expr, "astype", dt(dtype))
    return expr


# ---- integer ops NumPy spells differently

Binary = Callable[[ast.expr, ast.expr], ast.expr]


def _unsigned_binary(form: Binary) -> Custom:
    """`form` on the operands viewed as unsigned, the result viewed back as signless."""

    def fn(op, args, array):
        bits = bit_width(op.results[0].type)
        a, b = (_unsigned(t.expr, bits) for t in args)
        return syntax.call("_rt.s", form(a, b), bits)

    return fn


CUSTOM[arith.DivUIOp] = _unsigned_binary(lambda a, b: syntax.binop(a, "//", b))
CUSTOM[arith.RemUIOp] = _unsigned_binary(lambda a, b: syntax.binop(a, "%", b))
CUSTOM[arith.CeilDivUIOp] = _unsigned_binary(lambda a, b: syntax.call("_rt.ceildiv", a, b))
CUSTOM[arith.MaxUIOp] = _unsigned_binary(lambda a, b: syntax.call("np.maximum", a, b))
CUSTOM[arith.MinUIOp] = _unsigned_binary(lambda a, b: syntax.call("np.minimum", a, b))
CUSTOM[arith.ShRUIOp] = _unsigned_binary(lambda a, b: syntax.binop(a, ">>", b))


def _call(fn: str) -> Custom:
    """An op NumPy spells as one call of `fn` on the operands."""
    return lambda op, args, array: syntax.call(fn, *(t.expr for t in args))


CUSTOM[arith.DivSIOp] = _call("_rt.divsi")
CUSTOM[arith.CeilDivSIOp] = _call("_rt.ceildiv")
CUSTOM[math.RsqrtOp] = lambda op, args, array: syntax.binop(1.0, "/", syntax.call("np.sqrt", args[0].expr))
CUSTOM[math.RoundOp] = _call("_rt.round_half_away")
CUSTOM[math.ErfOp] = _call("_rt.erf")


@custom(math.FmaOp)
def _fma(op, args, array):
    a, b, c = (t.expr for t in args)
    return syntax.binop(syntax.binop(a, "*", b), "+", c)


# ---- casts


def _cast_to(op: Operation, args: Sequence[Term], array: bool, source: ast.expr | None = None) -> ast.expr:
    """`x.astype(T)` for arrays, `T(x)` / `int(x)` / `float(x)` for scalars."""
    (x,) = args
    expr = source or x.expr
    dtype = np_dtype(op.results[0].type)
    if array:
        return syntax.method(expr, "astype", dt(dtype))
    if dtype in ("float32", "float16"):
        return syntax.call(dt(dtype), expr)
    if dtype == "float64":
        return syntax.call("float", expr)
    if dtype == "bool":
        return syntax.call("bool", expr)
    return syntax.call("int", expr)


@custom(arith.ExtFOp, arith.TruncFOp, arith.FPToSIOp, arith.IndexCastOp)
def _plain_cast(op, args, array):
    return _cast_to(op, args, array)


@custom(arith.SIToFPOp)
def _sitofp(op, args, array):
    if bit_width(op.input.type) == 1:  # i1 read as signed: true is -1.0 (false +0.0: 0 - x, not -x)
        return syntax.binop(0, "-", _cast_to(op, args, array))
    return _cast_to(op, args, array)


def _as_unsigned(x: Term, bits: int) -> ast.expr:
    """A view of an array as unsigned, or a scalar reduced modulo 2**bits."""
    return syntax.method(x.expr, "view", f"np.uint{bits}") if x.is_array else _unsigned(x.expr, bits)


@custom(arith.UIToFPOp, arith.ExtUIOp)
def _from_unsigned(op, args, array):
    """uitofp and extui read their operand as unsigned (i1 has no sign to drop: true is 1 either way)."""
    (x,) = args
    bits = bit_width(op.input.type)
    if bits == 1:
        return _cast_to(op, args, array)
    return _cast_to(op, args, array, _as_unsigned(x, bits))


@custom(arith.FPToUIOp)
def _fptoui(op, args, array):
    (x,) = args
    bits = bit_width(op.result.type)
    if not array:
        return syntax.call("_rt.s", syntax.call("int", x.expr), bits)
    return syntax.method(syntax.method(x.expr, "astype", f"np.uint{bits}"), "view", f"np.int{bits}")


@custom(arith.ExtSIOp)
def _extsi(op, args, array):
    if bit_width(op.input.type) == 1:  # i1 true sign-extends to -1
        return syntax.unary("-", _cast_to(op, args, array))
    return _cast_to(op, args, array)


@custom(arith.TruncIOp)
def _trunci(op, args, array):
    (x,) = args
    bits = bit_width(op.result.type)
    if bits == 1:
        low = syntax.binop(x.expr, "&", 1)
        return syntax.method(low, "astype", "bool") if array else syntax.call("bool", low)
    if array:
        return syntax.method(x.expr, "astype", f"np.int{bits}")  # NumPy integer casts wrap
    return syntax.call("_rt.s", x.expr, bits)


@custom(arith.BitcastOp)
def _bitcast(op, args, array):
    (x,) = args
    dtype = dt(np_dtype(op.result.type))
    if array:
        return syntax.method(x.expr, "view", dtype)
    boxed = syntax.call("np.array", x.expr, dt(np_dtype(op.input.type)))
    return syntax.index(syntax.method(boxed, "view", dtype), [])


# ---- standalone ops


ELEMENTWISE_OPS = tuple(UFUNCS) + tuple(CUSTOM)


@translates(*ELEMENTWISE_OPS)
def translate_elementwise(fe: FunctionEmitter, op: Operation) -> None:
    """An arith/math op outside any linalg body: on scalars, or elementwise on tensors."""
    args = [fe.term(v) for v in op.operands]
    result = op.results[0]
    shape, dtype = static_shape(result.type), np_dtype(result.type)
    out = None
    if shape is not None and in_place_capable(op):
        for value, term in zip(op.operands, args):
            if fe.reusable(value, op) and term.shape == shape and term.dtype == dtype and list(op.operands).count(value) == 1:
                out = term.expr
                break
        if out is None and all(a.dtype == dtype for a in args):  # the ufunc computes in the result's dtype: exact
            out = fe.buffer(dtype, shape)
    fe.define(result, elementwise(op, args, out), owned=shape is not None)


@translates(arith.ConstantOp)
def translate_constant(fe: FunctionEmitter, op: arith.ConstantOp) -> None:
    """Scalars become literals; dense tensors are hoisted to module level, built once."""
    value, result = op.value, op.result
    dtype = np_dtype(result.type)
    if isinstance(value, DenseIntOrFPElementsAttr):
        name = fe.module.constant(value, result.name_hint, fe.origin(op))
        fe.bind(result, Term(syntax.name(name), dtype, static_shape(result.type)))
    elif isinstance(value, (IntegerAttr, FloatAttr)):
        fe.bind(result, Term(literal_expr(value.value.data, dtype), dtype))
    else:
        raise op_error(op, f"with value {value} has no NumPy translation")
