"""Contractions (MatMul, Gemm) and inference batch normalization."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.frontends.onnx.context import NodeContext, shape, ssa_name, unidirectional
from cortex.frontends.onnx.graph import Importer
from cortex.frontends.onnx.table import converts


@converts("MatMul", maps_to="`cortex.matmul` (and `cortex.reshape` for 1-D operands)", limits="rank ≥ 1 operands")
def matmul(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """ONNX MatMul; a 1-D operand is promoted (K → 1×K or K×1) and the unit dimension removed after."""
    a, b = im.value(inputs[0], ctx, "input A"), im.value(inputs[1], ctx, "input B")
    sa, sb = shape(a), shape(b)
    if not sa or not sb:
        raise ctx.error("MatMul operands must have rank >= 1")
    a2 = im.reshape(ctx, a, (1, *sa)) if len(sa) == 1 else a
    b2 = im.reshape(ctx, b, (*sb, 1)) if len(sb) == 1 else b
    y = im.build(ctx, ops.MatmulOp, a2, b2)
    out = list(shape(y))
    if len(sb) == 1:
        out.pop(-1)
    if len(sa) == 1:
        out.pop(-2 if len(sb) != 1 else -1)
    return [im.reshape(ctx, y, out)]


@converts("Gemm", maps_to="`cortex.linear` (a constant B), else `cortex.matmul`, `cortex.mul`, `cortex.add`",
          limits="alpha, beta, transA, transB; C broadcasts unidirectionally")
def gemm(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    """alpha·A'·B' + beta·C. A constant B becomes the weight of one `cortex.linear` (transposed
    and scaled at import time); a bias that is a vector of N (or broadcasts to one) its bias."""
    alpha, beta = float(ctx.get("alpha", 1.0)), float(ctx.get("beta", 1.0))
    trans_a, trans_b = int(ctx.get("transA", 0)), int(ctx.get("transB", 0))
    if "broadcast" in ctx.attrs:  # opset < 7: bias broadcasting was opt-in; semantics are the same when shapes agree
        ctx.get("broadcast")
    a = im.value(inputs[0], ctx, "input A")
    if len(shape(a)) != 2:
        raise ctx.error(f"Gemm input A must be 2-D, got shape {shape(a)}")
    if trans_a:
        a = im.build(ctx, ops.TransposeOp, a, [1, 0])
    bias_name = inputs[2] if len(inputs) > 2 and inputs[2] else None
    if inputs[1] in im.known and inputs[1] not in im.values:
        b_array = im.known[inputs[1]]
        if b_array.dtype != np.float32 or b_array.ndim != 2:
            raise ctx.error(f"Gemm input B must be a 2-D float32 tensor, got {b_array.dtype} {b_array.shape}")
        weight = b_array if trans_b else b_array.T  # N×K
        if alpha != 1.0:
            weight = weight * np.float32(alpha)
        n = weight.shape[0]
        bias_vector = None
        if bias_name is not None and bias_name in im.known and bias_name not in im.values:
            c = im.known[bias_name]
            if c.dtype == np.float32 and c.ndim <= 2 and all(d == 1 for d in c.shape[:-1]) and c.shape[-1:] in ((), (1,), (n,)):
                bias_vector = np.broadcast_to(c.reshape(-1) * np.float32(beta) if beta != 1.0 else c.reshape(-1), (n,))
        w = im.constant(weight)
        w.name_hint = ssa_name(inputs[1])
        bias = im.constant(bias_vector) if bias_vector is not None else None
        if bias is not None and bias_name is not None:
            bias.name_hint = ssa_name(bias_name)
        y = im.build(ctx, ops.LinearOp, a, w, bias)
        if bias_name is None or bias_vector is not None:
            return [y]
    else:
        b_value = im.value(inputs[1], ctx, "input B")
        if len(shape(b_value)) != 2:
            raise ctx.error(f"Gemm input B must be 2-D, got shape {shape(b_value)}")
        if trans_b:
            b_value = im.build(ctx, ops.TransposeOp, b_value, [1, 0])
        y = im.build(ctx, ops.MatmulOp, a, b_value)
        if alpha != 1.0:
            y = im.build(ctx, ops.MulOp, y, im.constant(np.float32(alpha)))
        if bias_name is None:
            return [y]
    c_value = im.value(bias_name, ctx, "input C")
    if not unidirectional(shape(c_value), shape(y)):
        raise ctx.error(f"input C of shape {list(shape(c_value))} does not broadcast to the product's {list(shape(y))}")
    if beta != 1.0:
        c_value = im.build(ctx, ops.MulOp, c_value, im.constant(np.float32(beta)))
    return [im.build(ctx, ops.AddOp, y, c_value)]


@converts("BatchNormalization", maps_to="`cortex.batch_norm`",
          limits="inference only (training_mode = 0, spatial = 1)")
def batch_norm(im: Importer, ctx: NodeContext, inputs: list[str]) -> list[SSAValue]:
    ctx.require("training_mode", (0,), 0, "training mode (batch statistics) is not supported; export the model in eval mode")
    ctx.require("spatial", (1,), 1, "only spatial batch normalization (per channel) is supported")
    ctx.get("momentum")  # only used in training
    if "is_test" in ctx.attrs:
        ctx.require("is_test", (1,), 1, "only inference (is_test = 1) is supported")
    if "consumed_inputs" in ctx.attrs:
        ctx.get("consumed_inputs")
    epsilon = float(ctx.get("epsilon", 1e-5))
    names = ("X", "scale", "B", "mean", "var")
    operands = [im.value(inputs[i], ctx, f"input {names[i]}") for i in range(5)]
    return [im.build(ctx, ops.BatchNormOp, *operands, epsilon=epsilon)]
