"""The folding size limit is inclusive: a result of exactly MAX_FOLDED_ELEMENTS elements folds.

Mutation testing found the boundary untested (`<=` → `<` passed). Checked
at the real limit (1 Mi elements, 1024×1024) and one row past it, and
with a small patched limit (so the boundary is checked on cheap tensors
too); a folded result must equal what the reference interpreter computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import cortex
from cortex.dialects import folding
from cortex.dialects.tensor_ops import AddOp, ConstantOp

TEXT = """
func.func @main() -> tensor<SHAPExf32> {
  %a = cortex.constant dense<1.5> : tensor<SHAPExf32>
  %b = cortex.constant dense<-0.25> : tensor<SHAPExf32>
  %c = cortex.add %a, %b : (tensor<SHAPExf32>, tensor<SHAPExf32>) -> tensor<SHAPExf32>
  func.return %c : tensor<SHAPExf32>
}
"""


def folds(shape: tuple[int, ...]) -> bool:
    """Whether canonicalize folds the add of two constants of `shape` (checked against the reference)."""
    text = TEXT.replace("SHAPE", "x".join(map(str, shape)))
    module = cortex.run_passes(cortex.parse(text), "canonicalize")
    adds = [op for op in module.walk() if isinstance(op, AddOp)]
    if not adds:
        (got,) = cortex.reference(module, entry="main", mode=None)()
        assert got.shape == shape
        np.testing.assert_array_equal(got, np.full(shape, 1.25, np.float32))
        assert any(isinstance(op, ConstantOp) for op in module.walk())
    return not adds


def test_the_limit_is_one_mebi_element():
    assert folding.MAX_FOLDED_ELEMENTS == 1 << 20


def test_real_limit_is_inclusive():
    assert folds((1024, 1024))
    assert not folds((1025, 1024))


@pytest.mark.parametrize(("limit", "shape", "expected"), [(6, (2, 3), True), (6, (7,), False), (5, (2, 3), False), (7, (2, 3), True)])
def test_patched_limit_is_inclusive(monkeypatch, limit, shape, expected):
    monkeypatch.setattr(folding, "MAX_FOLDED_ELEMENTS", limit)
    assert folds(shape) is expected
