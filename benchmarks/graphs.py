"""Random tensor graphs in the cortex dialect, for compile-time and backend benchmarks.

`random_tensor_graph(n_ops)` builds one `func.func` whose body is a random
DAG of exactly `n_ops` cortex ops: elementwise unary/binary ops and matmuls
on square `size×size` f32 tensors (so every op type-checks against every
other), drawn with a fixed seed. Every op result is used, so DCE has nothing
to delete and the compile-time figures measure passes walking the whole
graph; a small fraction of ops repeat an earlier op on the same operands,
which gives CSE real work.
"""

from __future__ import annotations

import random

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Operation, SSAValue

from cortex.dialects import tensor_ops as t
from cortex.dialects.base import tensor

UNARY = (t.NegOp, t.ExpOp, t.ReluOp, t.TanhOp, t.SigmoidOp, t.AbsOp)
BINARY = (t.AddOp, t.SubOp, t.MulOp)
WINDOW = 16
"""Operands are drawn from the last WINDOW values, like a real layered graph."""


def _constant(size: int, rng: np.random.Generator) -> t.ConstantOp:
    values = rng.standard_normal((size, size)).astype(np.float32) / size
    return t.ConstantOp(DenseIntOrFPElementsAttr.from_list(tensor((size, size)), values.ravel().tolist()))


def random_tensor_graph(
    n_ops: int, seed: int = 0, size: int = 16, n_inputs: int = 4, matmul_share: float = 0.1, duplicate_share: float = 0.03
) -> ModuleOp:
    """A module `@graph(%in0..) -> (...)` of `n_ops` cortex ops forming a random DAG."""
    if n_ops < 2:
        raise ValueError("a random graph needs at least 2 ops")
    rng = random.Random(seed)
    np_rng = np.random.default_rng(seed)
    ty = tensor((size, size))
    module = ModuleOp([])
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("graph", ([ty] * n_inputs, []))
    values: list[SSAValue] = list(fn.args)
    unused: set[SSAValue] = set(values)
    history: list[Operation] = []
    count = 0

    def take() -> SSAValue:
        """The oldest unused value of the window if any (keeps every op live), else a random one."""
        window = values[-WINDOW:]
        pending = [v for v in window if v in unused]
        value = pending[0] if pending else rng.choice(window)
        unused.discard(value)
        return value

    with ImplicitBuilder(fn.body):
        for _ in range(2):
            op = _constant(size, np_rng)
            values.append(op.result)
            unused.add(op.result)
            count += 1
        # Leave room for the adds that join the leftover sinks at the end.
        while count < n_ops - len(unused) // 2 - 1:
            roll = rng.random()
            if history and roll < duplicate_share:
                proto = rng.choice(history[-WINDOW:])
                op = type(proto)(*proto.operands)
            elif roll < duplicate_share + matmul_share:
                op = t.MatmulOp(take(), take())
            elif roll < 0.55:
                op = rng.choice(BINARY)(take(), take())
            else:
                op = rng.choice(UNARY)(take())
            history.append(op)
            values.append(op.result)
            unused.add(op.result)
            count += 1
        sinks = [v for v in values if v in unused]
        while count < n_ops - 1 and len(sinks) > 1:
            a, b = sinks.pop(), sinks.pop()
            sinks.insert(0, t.AddOp(a, b).result)
            count += 1
        while count < n_ops:
            sinks = [t.NegOp(sinks.pop()).result] + sinks
            count += 1
        func.ReturnOp(*sinks)
    fn.function_type = func.FunctionType.from_lists([ty] * n_inputs, [ty] * len(sinks))
    return module


def count_ops(module: ModuleOp, prefix: str = "cortex.") -> int:
    return sum(1 for op in module.walk() if op.name.startswith(prefix))
