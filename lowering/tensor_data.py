"""Lowering of the data-movement tensor ops (concat, pad, slice) to the tensor dialect.

`cortex.concat` is a chain of `tensor.insert_slice` into one `tensor.empty`, `cortex.pad` an
`insert_slice` into a filled tensor (what `LinalgBuilder.pad` builds), `cortex.slice` one strided
`tensor.extract_slice`. Semantics are the reference kernels' (`cortex.semantics.tensor_kernels`).
"""

from __future__ import annotations

from xdsl.dialects import tensor
from xdsl.ir import SSAValue

from cortex.dialects import tensor_ops as ops
from cortex.dialects.shapes import normalise_axis
from cortex.lowering.base import CortexLowering, lowers
from cortex.lowering.builders import LinalgBuilder, element_of, shape_of


@lowers(ops.ConcatOp)
class LowerConcat(CortexLowering[ops.ConcatOp]):
    """Each operand inserted at its offset along `axis` into one `tensor.empty` of the result."""

    def lower(self, op: ops.ConcatOp, b: LinalgBuilder) -> list[SSAValue]:
        out = shape_of(op.result)
        axis = normalise_axis(op.axis.value.data, len(out))
        dest = b.empty(out, element_of(op.result))
        offset = 0
        for value in op.inputs:
            part = shape_of(value)
            offsets = [offset if i == axis else 0 for i in range(len(out))]
            dest = b.add(tensor.InsertSliceOp.from_static_parameters(value, dest, offsets, list(part))).result
            offset += part[axis]
        return [dest]


@lowers(ops.PadOp)
class LowerPad(CortexLowering[ops.PadOp]):
    def lower(self, op: ops.PadOp, b: LinalgBuilder) -> list[SSAValue]:
        pads = list(op.pads.get_values())
        rank = len(pads) // 2
        return [b.pad(op.x, pads[:rank], pads[rank:], op.value.value.data)]


@lowers(ops.SliceOp)
class LowerSlice(CortexLowering[ops.SliceOp]):
    def lower(self, op: ops.SliceOp, b: LinalgBuilder) -> list[SSAValue]:
        starts, steps = list(op.starts.get_values()), list(op.steps.get_values())
        sizes = list(shape_of(op.result))
        if sizes == list(shape_of(op.x)) and not any(starts) and all(st == 1 for st in steps):
            return [op.x]
        return [b.add(tensor.ExtractSliceOp.from_static_parameters(op.x, starts, sizes, steps)).result]


__all__ = ["LowerConcat", "LowerPad", "LowerSlice"]
