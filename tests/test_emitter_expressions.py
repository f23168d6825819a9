"""Random arith expression trees: the emitted NumPy code computes what the ops mean.

The emitter builds expressions as syntax trees, so composing operands can
never change their meaning (precedence, signs of constants, conditional
expressions inside operators). Each tree is written as lowered IR (one
function, scalar or elementwise on tensors), emitted, run, and compared
with the same tree evaluated op by op in NumPy here.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cortex.backends.numpy.emitter import emit, load
from cortex.ir import parse_module

FLOAT_BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minnumf": np.fmin,
}
INT_BINARY = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
}
ARGS = ("a", "b", "c")


def leaves(kind: str):
    constant = st.floats(-4, 4, allow_nan=False).map(lambda v: round(v, 2)) if kind == "f" else st.integers(-9, 9)
    return st.one_of(st.sampled_from(ARGS).map(lambda a: ("arg", a)), constant.map(lambda v: ("const", v)))


def trees(kind: str, shaped: bool):
    """Expression trees; compare-and-select only on scalars (xDSL's arith.cmp* yield a plain i1)."""
    binary = sorted(FLOAT_BINARY if kind == "f" else INT_BINARY)

    def extend(children):
        ops = [st.tuples(st.sampled_from(binary), children, children)]
        if not shaped:
            ops.append(st.tuples(st.just("select"), st.sampled_from(["<", ">="]), children, children, children, children))
        if kind == "f":
            ops.append(st.tuples(st.just("arith.negf"), children))
        return st.one_of(*ops)

    return st.recursive(leaves(kind), extend, max_leaves=10)


class Writer:
    """The tree as lowered IR (SSA lines), and its value computed with NumPy."""

    def __init__(self, kind: str, type_: str, values: dict[str, object]):
        self.kind, self.type, self.values = kind, type_, values
        self.lines: list[str] = []
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def constant(self, value) -> str:
        name = self.fresh()
        scalar = "f64" if self.kind == "f" else "i64"
        text = repr(float(value)) if self.kind == "f" else str(value)
        if self.type == scalar:
            self.lines.append(f"{name} = arith.constant {text} : {scalar}")
        else:
            self.lines.append(f"{name} = arith.constant dense<{text}> : {self.type}")
        return name

    def write(self, tree) -> tuple[str, object]:
        tag = tree[0]
        dtype = np.float64 if self.kind == "f" else np.int64
        if tag == "arg":
            return f"%{tree[1]}", self.values[tree[1]]
        if tag == "const":
            shape = np.shape(self.values["a"])
            return self.constant(tree[1]), (np.full(shape, tree[1], dtype) if shape else dtype(tree[1]))
        if tag == "arith.negf":
            x, vx = self.write(tree[1])
            name = self.fresh()
            self.lines.append(f"{name} = arith.negf {x} : {self.type}")
            return name, np.negative(vx)
        if tag == "select":
            _, relation, p, q, t, f = tree
            (p, vp), (q, vq), (t, vt), (f, vf) = (self.write(x) for x in (p, q, t, f))
            cond, name = self.fresh(), self.fresh()
            i1 = "i1" if self.type in ("f64", "i64") else self.type.replace("f64", "i1").replace("i64", "i1")
            t_ = self.type
            if self.kind == "f":  # cmpf olt = 4, oge = 3; cmpi slt = 2, sge = 5 (generic form: tensor results)
                predicate, check = {"<": (4, np.less), ">=": (3, np.greater_equal)}[relation]
                props = f"<{{predicate = {predicate} : i64, fastmath = #arith.fastmath<none>}}>"
                self.lines.append(f'{cond} = "arith.cmpf"({p}, {q}) {props} : ({t_}, {t_}) -> {i1}')
            else:
                predicate, check = {"<": (2, np.less), ">=": (5, np.greater_equal)}[relation]
                self.lines.append(f'{cond} = "arith.cmpi"({p}, {q}) <{{predicate = {predicate} : i64}}> : ({t_}, {t_}) -> {i1}')
            t_ = self.type
            self.lines.append(f'{name} = "arith.select"({cond}, {t}, {f}) : ({i1}, {t_}, {t_}) -> {t_}')
            return name, np.where(check(vp, vq), vt, vf)[()].astype(dtype)
        x, vx = self.write(tree[1])
        y, vy = self.write(tree[2])
        name = self.fresh()
        self.lines.append(f"{name} = {tag} {x}, {y} : {self.type}")
        fn = (FLOAT_BINARY if self.kind == "f" else INT_BINARY)[tag]
        return name, fn(vx, vy)


def constant_only(tree) -> bool:
    return tree[0] == "const" or (tree[0] != "arg" and all(constant_only(t) for t in tree[1:] if isinstance(t, tuple)))


def check(tree, kind: str, shape: tuple[int, ...], data) -> str:
    dtype = np.float64 if kind == "f" else np.int64
    scalar = "f64" if kind == "f" else "i64"
    type_ = f"tensor<{'x'.join(map(str, shape))}x{scalar}>" if shape else scalar
    if kind == "f":
        elements = st.floats(-8, 8, allow_nan=False, width=64)
    else:
        elements = st.integers(-50, 50)
    values = {}
    for a in ARGS:
        if shape:
            values[a] = np.array(data.draw(st.lists(elements, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))), dtype).reshape(shape)
        else:
            values[a] = dtype(data.draw(elements))
    with np.errstate(all="ignore"):
        w = Writer(kind, type_, {a: (v.copy() if shape else v) for a, v in values.items()})
        result, expected = w.write(tree)
        params = ", ".join(f"%{a}: {type_}" for a in ARGS)
        body = "\n  ".join(w.lines)
        src = f"func.func @f({params}) -> {type_} {{\n  {body}\n  func.return {result} : {type_}\n}}"
        emitted = emit(parse_module(src))
        (got,) = load(emitted, "<test>")["f"](*values.values())
    np.testing.assert_array_equal(np.asarray(got), np.asarray(expected), err_msg=emitted.source)
    return emitted.source


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(tree=trees("f", False), data=st.data())
def test_float_scalar_expression_trees_compute_their_meaning(tree, data):
    check(tree, "f", (), data)


@SETTINGS
@given(tree=trees("f", True), data=st.data())
def test_float_elementwise_expression_trees_compute_their_meaning(tree, data):
    check(tree, "f", (2, 3), data)


@SETTINGS
@given(tree=trees("i", False), data=st.data())
def test_integer_scalar_expression_trees_compute_their_meaning(tree, data):
    check(tree, "i", (), data)


@SETTINGS
@given(tree=trees("i", True), data=st.data())
def test_integer_elementwise_expression_trees_compute_their_meaning(tree, data):
    check(tree, "i", (4,), data)


def test_negative_constants_keep_their_sign_under_operators():
    """`-2 - x` and `x - -1.5`: constants with a sign are operands like any other (one statement per op)."""
    tree = ("arith.subf", ("const", -2.0), ("arith.negf", ("arith.subf", ("arg", "a"), ("const", -1.5))))

    class Fixed:
        def draw(self, strategy):
            return 3.0

    source = check(tree, "f", (), Fixed())
    assert " = a - -1.5  # f: arith.subf" in source and " = -2.0 - v" in source
