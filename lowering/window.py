"""Lowering of the window ops (`cortex.window_push`, `cortex.window_median`).

push: `tensor.extract_slice` of window[1:], `tensor.insert_slice` into a
fresh tensor, `tensor.insert` of the new value at N−1.

median (lower median of the positive entries, 0 when none), without a sort:
rank[i] = #{ j : x_j > 0 and (x_j < x_i or (x_j = x_i and j < i)) } is one
(parallel i, reduction j) `linalg.generic`; with k positive entries the
median is the positive x_i whose rank r satisfies 0 ≤ (k−1) − 2r < 2, picked
by a reduction that adds it to zeros. Exact in float32 (counts are small
integers, and one x is added to 0). O(N²) compares for an N-entry window.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import SSAValue

from cortex.dialects.window import WindowMedianOp, WindowPushOp
from cortex.lowering import builders as s
from cortex.lowering.base import CortexLowering, lowers
from cortex.lowering.builders import (
    PARALLEL,
    REDUCTION,
    LinalgBuilder,
    affine_map,
    shape_of,
)


@lowers(WindowPushOp)
class LowerWindowPush(CortexLowering[WindowPushOp]):
    """window[1:] ++ [value] with tensor slices."""

    def lower(self, op: WindowPushOp, b: LinalgBuilder) -> list[SSAValue]:
        (n,) = shape_of(op.window)
        shifted = b.empty((n,))
        if n > 1:
            tail = b.add(tensor.ExtractSliceOp.from_static_parameters(op.window, [1], [n - 1], [1])).result
            shifted = b.add(tensor.InsertSliceOp.from_static_parameters(tail, shifted, [0], [n - 1], [1])).result
        last = b.add(arith.ConstantOp(IntegerAttr(n - 1, IndexType()))).result
        return [b.add(tensor.InsertOp(op.value, shifted, [last])).result]


@lowers(WindowMedianOp)
class LowerWindowMedian(CortexLowering[WindowMedianOp]):
    """Ranks by a pairwise-compare reduction, then the entry of the middle rank."""

    def lower(self, op: WindowMedianOp, b: LinalgBuilder) -> list[SSAValue]:
        x = op.window
        (n,) = shape_of(x)
        position = b.constant(np.arange(n, dtype=np.float32))
        one, zero = 1.0, 0.0

        def before(xj: SSAValue, j: SSAValue, xi: SSAValue, i: SSAValue, acc: SSAValue) -> SSAValue:
            # x_j positive and ordered before x_i (ties broken by position) counts 1.
            tie = s.select(s.cmpf(j, i, "olt"), s.const(one), s.const(zero))
            earlier = s.select(s.cmpf(xj, xi, "olt"), s.const(one), s.select(s.cmpf(xj, xi, "oeq"), tie, s.const(zero)))
            return s.addf(acc, s.select(s.cmpf(xj, s.const(zero), "ogt"), earlier, s.const(zero)))

        by_j, by_i = affine_map(2, [1]), affine_map(2, [0])
        rank = b.generic([x, position, x, position], b.full((n,), zero), [by_j, by_j, by_i, by_i, by_i],
                         [PARALLEL, REDUCTION], before)
        count = b.reduce(b.elementwise(lambda v: s.select(s.cmpf(v, s.const(zero), "ogt"), s.const(one), s.const(zero)), x),
                         [0], "add")

        def pick(xi: SSAValue, r: SSAValue, k: SSAValue, acc: SSAValue) -> SSAValue:
            gap = s.subf(s.subf(k, s.const(one)), s.mulf(s.const(2.0), r))  # (k−1) − 2r
            middle = arith.AndIOp(s.cmpf(gap, s.const(zero), "oge"), s.cmpf(gap, s.const(2.0), "olt")).result
            chosen = arith.AndIOp(s.cmpf(xi, s.const(zero), "ogt"), middle).result
            return s.addf(acc, s.select(chosen, xi, s.const(zero)))

        median = b.generic([x, rank, count], b.full((), zero), [affine_map(1, [0]), affine_map(1, [0]), affine_map(1, []),
                                                                affine_map(1, [])], [REDUCTION], pick)
        return [b.add(tensor.ExtractOp(median, [], s.element_of(median))).result]


__all__ = ["LowerWindowMedian", "LowerWindowPush"]
