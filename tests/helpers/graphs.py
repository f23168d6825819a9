"""One-function tensor graphs built with the op classes, run through the reference interpreter and
the compiled backend (with the linalg rewrites the ONNX backend compiles with)."""

from __future__ import annotations

import numpy as np
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.ir import Block, Region

import cortex

REWRITES = "cortex-conv-im2col,cortex-unroll-pooling,cortex-fold-constant-layouts"


def one_function(arg_shapes, build) -> ModuleOp:
    """@main(args) -> build(*args), built with the op classes (their shape rules give the types)."""
    block = Block(arg_types=[TensorType(f32, list(s)) for s in arg_shapes])
    with ImplicitBuilder(block):
        result = build(*block.args)
        func.ReturnOp(result)
    return ModuleOp([func.FuncOp("main", ([a.type for a in block.args], [result.type]), Region(block))])


def both(module: ModuleOp, *inputs: np.ndarray):
    want = cortex.reference(module, entry="main", mode=None)(*inputs)
    got = cortex.compile(module, entry="main", mode=None, post_passes=REWRITES)(*inputs)
    return got, want
