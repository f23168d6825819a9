"""A sliding window of recent scalars, and its median: what an adaptive threshold is made of.

`cortex.window_push` drops the window's oldest value and appends a new one;
`cortex.window_median` is the lower median of its positive entries. Kept in
a `cortex.state`, the window carries the recent history of a per-frame
scalar (the L2 pipeline's sharpness), so a threshold relative to it (the
`auto` blur gate: fraction · running median) is ordinary compilable IR that
the passes see, check and lower like any other stage. Semantics live in the
reference kernels (`cortex.semantics.window_kernels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    BaseAttr,
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from cortex.dialects.base import CortexOp, f32_scalar
from cortex.dialects.canonicalization_traits import CortexCanonicalization
from cortex.dialects.shapes import DYNAMIC
from cortex.dialects.traits import Compilable


def window_length(value: SSAValue) -> int:
    """N of a `tensor<Nxf32>` window (static, N ≥ 1), or a VerifyException."""
    t = value.type
    if not (isinstance(t, TensorType) and isinstance(t.element_type, Float32Type) and t.get_num_dims() == 1):
        raise VerifyException(f"the window must be a tensor<Nxf32>, got {t}")
    (n,) = t.get_shape()
    if n == DYNAMIC or n < 1:
        raise VerifyException(f"the window must have a static length >= 1, got {t}")
    return n


@irdl_op_definition
class WindowPushOp(CortexOp):
    """window[1:] followed by value: the oldest entry drops out."""

    name = "cortex.window_push"
    T: ClassVar = VarConstraint("T", BaseAttr(TensorType))
    window = operand_def(T)
    value = operand_def(f32)
    result = result_def(T)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    assembly_format = "$window `,` $value attr-dict `:` type($window)"

    def __init__(self, window: SSAValue, value: SSAValue):
        super().__init__(operands=[window, value], result_types=[window.type])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        window_length(self.window)
        f32_scalar(self.value, "the pushed value")
        return [self.window.type]


@irdl_op_definition
class WindowMedianOp(CortexOp):
    """Lower median of the window's positive entries (0 when none is): zeros are empty slots."""

    name = "cortex.window_median"
    window = operand_def(TensorType)
    result = result_def(f32)
    traits = traits_def(Pure(), Compilable(), CortexCanonicalization())
    assembly_format = "$window attr-dict `:` type($window)"

    def __init__(self, window: SSAValue):
        super().__init__(operands=[window], result_types=[f32])

    def infer_result_types(self) -> Sequence[Attribute | None]:
        window_length(self.window)
        return [f32]


WINDOW_OPS: list[type[IRDLOperation]] = [WindowPushOp, WindowMedianOp]
