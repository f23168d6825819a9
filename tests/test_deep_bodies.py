"""Fused elementwise bodies of any depth compile.

A fused linalg body is evaluated operand-first; that was a recursion per op,
so a 400-op chain (from ONNX or .mlir) raised RecursionError in
`backends/numpy/bodies` while 250 worked. The evaluation now keeps its own
stack. The 5,000-op body is built directly as lowered IR (parsing and
lowering 5,000 cortex ops would make a slow unit test); a 450-op cortex
chain goes the whole way through `cortex.compile`.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, TensorType, f32
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Region
from xdsl.ir.affine import AffineMap
from xdsl.rewriter import InsertPoint

import cortex
from cortex.backends.numpy.emitter import emit, load

SHAPE = (4, 8)


def chain_reference(x: np.ndarray, y: np.ndarray, depth: int) -> np.ndarray:
    """What the chain computes, step by step in float32 (add, mul, sub in turn, each with y)."""
    v = x.copy()
    for i in range(depth):
        v = (v + y, v * y, v - y)[i % 3].astype(np.float32)
    return v


def deep_generic(depth: int) -> ModuleOp:
    """@main(x, y) = one linalg.generic whose body is a chain of `depth` arith ops."""
    t = TensorType(f32, SHAPE)
    body = Block(arg_types=[f32, f32, f32])
    b = Builder(InsertPoint.at_end(body))
    v = body.args[0]
    kinds = (arith.AddfOp, arith.MulfOp, arith.SubfOp)
    for i in range(depth):
        v = b.insert(kinds[i % 3](v, body.args[1])).result
    b.insert(YieldOp(v))
    entry = Block(arg_types=[t, t])
    fb = Builder(InsertPoint.at_end(entry))
    empty = fb.insert(tensor.EmptyOp([], t))
    identity = AffineMapAttr(AffineMap.identity(2))
    generic = fb.insert(
        GenericOp(
            [entry.args[0], entry.args[1]], [empty.tensor], Region(body), [identity] * 3,
            [IteratorTypeAttr.parallel()] * 2, [t],
        )
    )
    fb.insert(func.ReturnOp(generic.res[0]))
    return ModuleOp([func.FuncOp("main", ([t, t], [t]), Region(entry))])


def test_a_5000_op_fused_body_compiles_and_computes_the_chain():
    depth = 5000
    module = deep_generic(depth)
    module.verify()
    namespace = load(emit(module), "<deep>")
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    y = rng.uniform(0.5, 1.0, SHAPE).astype(np.float32)
    (got,) = namespace["main"](x, y)
    np.testing.assert_array_equal(got, chain_reference(x, y, depth))


@pytest.mark.slow
def test_a_450_op_cortex_chain_compiles_end_to_end():
    depth = 450
    kinds = ("cortex.add", "cortex.mul", "cortex.sub")
    t = "tensor<4x8xf32>"
    lines = [f"func.func @main(%x: {t}, %y: {t}) -> {t} {{"]
    previous = "%x"
    for i in range(depth):
        lines.append(f"  %v{i} = {kinds[i % 3]} {previous}, %y : ({t}, {t}) -> {t}")
        previous = f"%v{i}"
    lines.append(f"  func.return {previous} : {t}\n}}")
    compiled = cortex.compile(cortex.parse("\n".join(lines)), entry="main", mode=None)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, SHAPE).astype(np.float32)
    y = rng.uniform(0.5, 1.0, SHAPE).astype(np.float32)
    (got,) = compiled(x, y)
    np.testing.assert_allclose(got, chain_reference(x, y, depth), rtol=1e-5, atol=1e-6)
