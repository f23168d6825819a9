"""scf and func: Python control flow and calls.

`scf.if` becomes a Python `if` whose branches assign the results, `scf.for`
a `for ... in range(...)` carrying its iteration values in variables.
A `func.call` to a function of the module is a Python call (functions
return tuples); a call to a declaration tagged `cortex.extern` goes through
the extern table bound at module load. cortex's ui8 data travels as i8 in
lowered IR; an extern gets it back as uint8 (a zero-copy view) and its i8
results are viewed back, so the OpenCV kernels see the types they were
written for.
"""

from __future__ import annotations

import ast

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType

from cortex.backends.numpy import syntax
from cortex.backends.numpy.codegen import (
    FunctionEmitter,
    Term,
    dt,
    np_dtype,
    op_error,
    static_shape,
    translates,
)


def _assign(fe: FunctionEmitter, names: list[str], values) -> None:
    exprs = [fe.expr(v) for v in values]
    if len(names) == 1:
        fe.statement(syntax.assign(names[0], exprs[0]))
    elif names:
        fe.statement(syntax.assign(names, syntax.tuple_(*exprs)))


def _yield_to(fe: FunctionEmitter, names: list[str], values) -> None:
    """The terminator of a branch or loop body: assign the carried names."""
    _assign(fe, names, values)
    fe.defines(*names)


@translates(scf.IfOp)
def translate_if(fe: FunctionEmitter, op: scf.IfOp) -> None:
    names = [fe.name(r) for r in op.output]
    on_yield = lambda y: _yield_to(fe, names, y.operands)  # noqa: E731
    fe.nested(syntax.if_header(fe.expr(op.cond)), op.true_region.block, on_yield)
    if op.false_region.blocks:
        fe.nested("else:", op.false_region.block, on_yield)
    for r, name in zip(op.output, names):
        fe.bind(r, Term(syntax.name(name), np_dtype(r.type), static_shape(r.type)))
    fe.defines(*names)


@translates(scf.ForOp)
def translate_for(fe: FunctionEmitter, op: scf.ForOp) -> None:
    names = [fe.name(r) for r in op.res]
    _assign(fe, names, op.iter_args)
    block = op.body.block
    iv = fe.name(block.args[0], "i")
    fe.bind(block.args[0], Term(syntax.name(iv), "int64"))
    for arg, name in zip(block.args[1:], names):
        fe.bind(arg, Term(syntax.name(name), np_dtype(arg.type), static_shape(arg.type)))
    header = syntax.for_header(iv, syntax.call("range", fe.expr(op.lb), fe.expr(op.ub), fe.expr(op.step)))
    fe.nested(header, block, lambda y: _yield_to(fe, names, y.operands))
    for r, name in zip(op.res, names):
        fe.bind(r, Term(syntax.name(name), np_dtype(r.type), static_shape(r.type)))
    fe.defines(*names)


@translates(func.ReturnOp)
def translate_return(fe: FunctionEmitter, op: func.ReturnOp) -> None:
    fe.statement(syntax.returns(*(fe.expr(v) for v in op.arguments)))
    fe.impure()


def _extern_arg(value, expr: ast.expr) -> ast.expr:
    if isinstance(value.type, TensorType) and np_dtype(value.type) == "int8":
        return syntax.method(expr, "view", "np.uint8")
    return expr


@translates(func.CallOp)
def translate_call(fe: FunctionEmitter, op: func.CallOp) -> None:
    callee = fe.module.lookup(op.callee.root_reference.data)
    if callee is None:
        raise op_error(op, f"calls @{op.callee.root_reference.data}, which the module does not define")
    fe.impure()  # an extern may have effects; the lowered IR was already DCE'd at cortex level
    results = list(op.res)
    if callee.is_declaration:
        target = fe.module.extern(callee)
        call = syntax.call(target, *(_extern_arg(v, fe.expr(v)) for v in op.arguments))
        names = [fe.name(r) for r in results]
        if len(results) == 1:
            fe.statement(syntax.assign(names[0], call))
        elif results:
            fe.statement(syntax.assign(names, call))
        else:
            fe.statement(syntax.evaluate(call))
        for r, name in zip(results, names):
            dtype = np_dtype(r.type)
            if isinstance(r.type, TensorType) and dtype == "int8":
                fe.statement(syntax.assign(name, syntax.method(name, "view", "np.int8")))
            elif not isinstance(r.type, TensorType):
                fe.statement(syntax.assign(name, syntax.call(dt(dtype), name)))
            fe.defined(r, name, owned=False)
        return
    call = syntax.call(fe.module.function_name(callee), *(fe.expr(v) for v in op.arguments))
    names = [fe.name(r) for r in results]
    fe.statement(syntax.assign(names, call) if names else syntax.evaluate(call))
    for r, name in zip(results, names):
        fe.defined(r, name, owned=False)
