"""ONNX → cortex dialect: `from_onnx(model) -> ModuleOp` with one `func.func @main`.

The function's arguments are the graph inputs that are not initializers (in
order), its results the graph outputs; float32 initializers become
`cortex.constant`. Each supported ONNX operator maps to cortex ops that
have its exact semantics, sometimes several (Gemm with alpha/beta, 1-D
MatMul through reshapes, ceil-mode pooling as extra padding,
count_include_pad as a constant rescale, 1-D conv/pool through a unit
height). Integer tensors read as shapes and axes are read at import time:
they must be constants (an initializer, a Constant node, or a value given in
`constant_inputs`). Only the operators with `typed_inputs` in the table (Cast,
Where, the comparisons, Not/And/Or/Xor) take run-time data of other element
types (float16/64, bool, signed integers).

Anything the dialect cannot express — an operator, an attribute value, a
non-float32 tensor — is one CortexError naming the
node, its operator and the attribute, never a silently different graph.

The package: `graph` walks the graph, `context` is the node being imported,
`table` is the operator table (`OPERATORS`, the one list of what is
supported), and one module per family of operators registers its converters.
"""

from __future__ import annotations

from cortex.frontends.onnx import (  # noqa: F401 - they fill the table
    activations,
    contractions,
    elementwise,
    layout,
    logic,
    normalization,
    shaping,
    upsampling,
    windows,
)
from cortex.frontends.onnx.context import ENTRY, f32_constant
from cortex.frontends.onnx.graph import Importer, from_onnx
from cortex.frontends.onnx.table import OPERATORS
from cortex.frontends.onnx.windows import ceil_extra, same_pads
from cortex.frontends.onnx_checks import OnnxImportError, load_model

SUPPORTED_OPS = OPERATORS
"""The ONNX operators the importer maps (its keys), each with its table row."""

__all__ = [
    "ENTRY", "OPERATORS", "SUPPORTED_OPS", "Importer", "OnnxImportError", "ceil_extra", "f32_constant", "from_onnx",
    "load_model", "same_pads",
]
