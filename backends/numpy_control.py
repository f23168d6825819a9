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

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import TensorType

from cortex.backends.numpy_codegen import (
    FunctionEmitter,
    Term,
    dt,
    np_dtype,
    op_error,
    paren,
    static_shape,
    translates,
)


def _assign(fe: FunctionEmitter, names: list[str], values) -> None:
    exprs = [fe.expr(v) for v in values]
    if len(names) == 1:
        fe.line(f"{names[0]} = {exprs[0]}")
    elif names:
        fe.line(f"{', '.join(names)} = {', '.join(exprs)}")


def _yield_to(fe: FunctionEmitter, names: list[str], values) -> None:
    """The terminator of a branch or loop body: assign the carried names."""
    _assign(fe, names, values)
    fe.defines(*names)


@translates(scf.IfOp)
def translate_if(fe: FunctionEmitter, op: scf.IfOp) -> None:
    names = [fe.name(r) for r in op.output]
    on_yield = lambda y: _yield_to(fe, names, y.operands)  # noqa: E731
    fe.nested(f"if {fe.expr(op.cond)}:", op.true_region.block, on_yield)
    if op.false_region.blocks:
        fe.nested("else:", op.false_region.block, on_yield)
    for r, name in zip(op.output, names):
        fe.bind(r, Term(name, np_dtype(r.type), static_shape(r.type)))
    fe.defines(*names)


@translates(scf.ForOp)
def translate_for(fe: FunctionEmitter, op: scf.ForOp) -> None:
    names = [fe.name(r) for r in op.res]
    _assign(fe, names, op.iter_args)
    block = op.body.block
    iv = fe.name(block.args[0], "i")
    fe.bind(block.args[0], Term(iv, "int64"))
    for arg, name in zip(block.args[1:], names):
        fe.bind(arg, Term(name, np_dtype(arg.type), static_shape(arg.type)))
    header = f"for {iv} in range({fe.expr(op.lb)}, {fe.expr(op.ub)}, {fe.expr(op.step)}):"
    fe.nested(header, block, lambda y: _yield_to(fe, names, y.operands))
    for r, name in zip(op.res, names):
        fe.bind(r, Term(name, np_dtype(r.type), static_shape(r.type)))
    fe.defines(*names)


@translates(func.ReturnOp)
def translate_return(fe: FunctionEmitter, op: func.ReturnOp) -> None:
    exprs = [fe.expr(v) for v in op.arguments]
    fe.line(f"return ({', '.join(exprs)}{',' if len(exprs) == 1 else ''})")
    fe.impure()


def _extern_arg(value, expr: str) -> str:
    if isinstance(value.type, TensorType) and np_dtype(value.type) == "int8":
        return f"{paren(expr)}.view(np.uint8)"
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
        args = ", ".join(_extern_arg(v, fe.expr(v)) for v in op.arguments)
        call = f"{target}({args})"
        names = [fe.name(r) for r in results]
        if len(results) == 1:
            fe.line(f"{names[0]} = {call}")
        elif results:
            fe.line(f"{', '.join(names)} = {call}")
        else:
            fe.line(call)
        for r, name in zip(results, names):
            dtype = np_dtype(r.type)
            if isinstance(r.type, TensorType) and dtype == "int8":
                fe.line(f"{name} = {name}.view(np.int8)")
            elif not isinstance(r.type, TensorType):
                fe.line(f"{name} = {dt(dtype)}({name})")
            fe.defined(r, name, owned=False)
        return
    args = ", ".join(fe.expr(v) for v in op.arguments)
    call = f"{fe.module.function_name(callee)}({args})"
    names = [fe.name(r) for r in results]
    if names:
        fe.line(f"{', '.join(names)}{',' if len(names) == 1 else ''} = {call}")
    else:
        fe.line(call)
    for r, name in zip(results, names):
        fe.defined(r, name, owned=False)

