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

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr
from xdsl.ir import Operation

from cortex.backends.numpy_codegen import (
    FunctionEmitter,
    Term,
    bit_width,
    dt,
    literal,
    np_dtype,
    op_error,
    paren,
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

Custom = Callable[[Operation, Sequence[Term], bool], str]
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


def elementwise(op: Operation, args: Sequence[Term], out: str | None = None) -> str:
    """The expression computing `op` from `args`; with `out`, the in-place ufunc call."""
    array = any(a.is_array for a in args)
    dtype = np_dtype(op.results[0].type)
    uf = ufunc_of(op)
    if uf is not None:
        exprs = [a.code for a in args]
        if out is not None:
            return f"{uf.fn}({', '.join(exprs)}, out={out})"
        if uf.infix and len(exprs) == 2:
            return f"{paren(exprs[0])} {uf.infix} {paren(exprs[1])}"
        if uf.infix and len(exprs) == 1:
            return f"{uf.infix}{paren(exprs[0])}"
        call = f"{uf.fn}({', '.join(exprs)})"
        if not array and dtype in ("float32", "float16"):
            return f"{dt(dtype)}({call})"  # keep scalars in the declared width
        return call
    fn = CUSTOM.get(type(op))
    if fn is None:
        raise op_error(op, "has no NumPy translation")
    return fn(op, args, array)


# ---- comparisons and select

_CMPF = {  # predicate -> (array form, scalar form)
    0: ("", "False"),
    1: ("{a} == {b}", "{a} == {b}"),
    2: ("{a} > {b}", "{a} > {b}"),
    3: ("{a} >= {b}", "{a} >= {b}"),
    4: ("{a} < {b}", "{a} < {b}"),
    5: ("{a} <= {b}", "{a} <= {b}"),
    6: ("({a} < {b}) | ({a} > {b})", "({a} < {b} or {a} > {b})"),
    7: ("~(np.isnan({a}) | np.isnan({b}))", "not (np.isnan({a}) or np.isnan({b}))"),
    8: ("~(({a} < {b}) | ({a} > {b}))", "not ({a} < {b} or {a} > {b})"),
    9: ("~({a} <= {b})", "not ({a} <= {b})"),
    10: ("~({a} < {b})", "not ({a} < {b})"),
    11: ("~({a} >= {b})", "not ({a} >= {b})"),
    12: ("~({a} > {b})", "not ({a} > {b})"),
    13: ("{a} != {b}", "{a} != {b}"),
    14: ("np.isnan({a}) | np.isnan({b})", "(np.isnan({a}) or np.isnan({b}))"),
    15: ("", "True"),
}

_CMPI = ["==", "!=", "<", "<=", ">", ">=", "<", "<=", ">", ">="]  # eq ne slt sle sgt sge ult ule ugt uge


def _operands(args: Sequence[Term]) -> list[str]:
    return [paren(a.code) for a in args]


@custom(arith.CmpfOp)
def _cmpf(op: arith.CmpfOp, args, array):
    a, b = _operands(args)
    predicate = op.predicate.value.data
    array_form, scalar_form = _CMPF[predicate]
    if not array:
        return scalar_form.format(a=a, b=b)
    if predicate in (0, 15):  # always false / always true
        return f"np.full(np.broadcast_shapes(np.shape({a}), np.shape({b})), {scalar_form})"
    return array_form.format(a=a, b=b)


@custom(arith.CmpiOp)
def _cmpi(op: arith.CmpiOp, args, array):
    a, b = _operands(args)
    predicate = op.predicate.value.data
    if predicate >= 6:  # unsigned
        bits = bit_width(op.lhs.type)
        a, b = f"_rt.u({args[0].code}, {bits})", f"_rt.u({args[1].code}, {bits})"
    return f"{a} {_CMPI[predicate]} {b}"


@custom(arith.SelectOp)
def _select(op: arith.SelectOp, args, array):
    c, a, b = args
    if not array:
        return f"{paren(a.code)} if {c.code} else {paren(b.code)}"
    expr = f"np.where({c.code}, {a.code}, {b.code})"
    dtype = np_dtype(op.result.type)
    if not (a.is_array and a.dtype == dtype) and not (b.is_array and b.dtype == dtype):
        expr += f".astype({dt(dtype)})"
    return expr


# ---- integer ops NumPy spells differently


def _unsigned_binary(template: str) -> Custom:
    def fn(op, args, array):
        bits = bit_width(op.results[0].type)
        a, b = (f"_rt.u({t.code}, {bits})" for t in args)
        return f"_rt.s({template.format(a=a, b=b)}, {bits})"

    return fn


CUSTOM[arith.DivUIOp] = _unsigned_binary("{a} // {b}")
CUSTOM[arith.RemUIOp] = _unsigned_binary("{a} % {b}")
CUSTOM[arith.CeilDivUIOp] = _unsigned_binary("_rt.ceildiv({a}, {b})")
CUSTOM[arith.MaxUIOp] = _unsigned_binary("np.maximum({a}, {b})")
CUSTOM[arith.MinUIOp] = _unsigned_binary("np.minimum({a}, {b})")
CUSTOM[arith.ShRUIOp] = _unsigned_binary("{a} >> {b}")


def _call(template: str) -> Custom:
    """An op NumPy spells as one call: `template` with the operands' expressions as {0}, {1}, ..."""

    def fn(op, args, array):
        return template.format(*(t.code for t in args))

    return fn


CUSTOM[arith.DivSIOp] = _call("_rt.divsi({0}, {1})")
CUSTOM[arith.CeilDivSIOp] = _call("_rt.ceildiv({0}, {1})")
CUSTOM[math.RsqrtOp] = _call("1.0 / np.sqrt({0})")
CUSTOM[math.RoundOp] = _call("_rt.round_half_away({0})")
CUSTOM[math.ErfOp] = _call("_rt.erf({0})")


@custom(math.FmaOp)
def _fma(op, args, array):
    a, b, c = _operands(args)
    return f"{a} * {b} + {c}"


# ---- casts


def _cast_to(op: Operation, args: Sequence[Term], array: bool, source: str | None = None) -> str:
    """`x.astype(T)` for arrays, `T(x)` / `int(x)` / `float(x)` for scalars."""
    (x,) = args
    expr = source or x.code
    dtype = np_dtype(op.results[0].type)
    if array:
        return f"{paren(expr)}.astype({dt(dtype)})"
    if dtype in ("float32", "float16"):
        return f"{dt(dtype)}({expr})"
    if dtype == "float64":
        return f"float({expr})"
    if dtype == "bool":
        return f"bool({expr})"
    return f"int({expr})"


@custom(arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.FPToSIOp, arith.IndexCastOp)
def _plain_cast(op, args, array):
    return _cast_to(op, args, array)


@custom(arith.UIToFPOp)
def _uitofp(op, args, array):
    (x,) = args
    bits = bit_width(op.input.type)
    if bits == 1:
        return _cast_to(op, args, array)
    source = f"{paren(x.code)}.view(np.uint{bits})" if x.is_array else f"_rt.u({x.code}, {bits})"
    return _cast_to(op, args, array, source)


@custom(arith.FPToUIOp)
def _fptoui(op, args, array):
    (x,) = args
    bits = bit_width(op.result.type)
    if not array:
        return f"_rt.s(int({x.code}), {bits})"
    return f"{paren(x.code)}.astype(np.uint{bits}).view(np.int{bits})"


@custom(arith.ExtUIOp)
def _extui(op, args, array):
    (x,) = args
    bits = bit_width(op.input.type)
    if bits == 1:
        return _cast_to(op, args, array)
    source = f"{paren(x.code)}.view(np.uint{bits})" if x.is_array else f"_rt.u({x.code}, {bits})"
    return _cast_to(op, args, array, source)


@custom(arith.ExtSIOp)
def _extsi(op, args, array):
    (x,) = args
    if bit_width(op.input.type) == 1:  # i1 true sign-extends to -1
        return f"-{paren(_cast_to(op, args, array))}"
    return _cast_to(op, args, array)


@custom(arith.TruncIOp)
def _trunci(op, args, array):
    (x,) = args
    bits = bit_width(op.result.type)
    if bits == 1:
        return f"({paren(x.code)} & 1).astype(bool)" if array else f"bool({paren(x.code)} & 1)"
    if array:
        return f"{paren(x.code)}.astype(np.int{bits})"  # NumPy integer casts wrap
    return f"_rt.s({x.code}, {bits})"


@custom(arith.BitcastOp)
def _bitcast(op, args, array):
    (x,) = args
    dtype = dt(np_dtype(op.result.type))
    if array:
        return f"{paren(x.code)}.view({dtype})"
    return f"np.array({x.code}, {dt(np_dtype(op.input.type))}).view({dtype})[()]"


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
                out = term.code
                break
    fe.define(result, elementwise(op, args, out), owned=shape is not None)


@translates(arith.ConstantOp)
def translate_constant(fe: FunctionEmitter, op: arith.ConstantOp) -> None:
    """Scalars become literals; dense tensors are hoisted to module level, built once."""
    value, result = op.value, op.result
    dtype = np_dtype(result.type)
    if isinstance(value, DenseIntOrFPElementsAttr):
        name = fe.module.constant(value, result.name_hint, fe.origin(op))
        fe.bind(result, Term(name, dtype, static_shape(result.type)))
    elif isinstance(value, (IntegerAttr, FloatAttr)):
        fe.bind(result, Term(literal(value.value.data, dtype), dtype))
    else:
        raise op_error(op, f"with value {value} has no NumPy translation")
