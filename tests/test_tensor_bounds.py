"""Tensor sizes are bounded where they are read: a dense literal before it is expanded, a tensor type at its op.

xDSL stores every element of a `dense<...>` literal, a splat included, so 143
bytes of `dense<1.0> : tensor<100000x100000xf32>` used to take minutes and
gigabytes before an "internal error: MemoryError"; and a 9.2e18-element
dimension reached the lowering and NumPy ("broadcast dimensions too large").
"""

from __future__ import annotations

import pytest

import cortex
from cortex.dialects import shapes
from cortex.errors import CortexError
from cortex.ir import InvalidIRError, parse


def constant(shape: str, literal: str = "1.0") -> str:
    return (
        f"func.func @f() -> tensor<{shape}xf32> {{\n"
        f"  %c = cortex.constant dense<{literal}> : tensor<{shape}xf32>\n"
        f"  func.return %c : tensor<{shape}xf32>\n}}\n"
    )


def elementwise(shape: str) -> str:
    return (
        f"func.func @f(%x: tensor<{shape}xf32>) -> tensor<{shape}xf32> {{\n"
        f"  %y = cortex.exp %x : tensor<{shape}xf32> -> tensor<{shape}xf32>\n"
        f"  func.return %y : tensor<{shape}xf32>\n}}\n"
    )


@pytest.mark.parametrize("shape", ["5000x5000", "100000x100000", "4294967296x4294967296"])
def test_a_splat_above_the_limit_is_refused_before_expansion(shape):
    with pytest.raises(InvalidIRError) as e:
        parse(constant(shape))
    assert str(e.value).startswith("<string>:2:37: error: a dense literal")
    assert f"more than the supported {shapes.MAX_CONSTANT_ELEMENTS}" in str(e.value)


def test_the_limit_is_inclusive(monkeypatch):
    monkeypatch.setattr(shapes, "MAX_CONSTANT_ELEMENTS", 64)
    parse(constant("8x8"))
    with pytest.raises(InvalidIRError, match="a dense literal \\(8x9\\) has 72 elements, more than the supported 64"):
        parse(constant("8x9"))


@pytest.mark.parametrize("shape", ["9200000000000000000", "4294967296x4294967296", "3x9200000000000000000"])
def test_a_huge_dimension_is_a_located_error(shape):
    with pytest.raises(InvalidIRError, match=r"^<string>:2:8: error: 'cortex.exp' op operand #0 \(" + shape
                       + r"\) has \d+ elements, more than the supported 1099511627776$"):
        parse(elementwise(shape))


def test_a_huge_dimension_never_reaches_compile():
    with pytest.raises(CortexError, match="more than the supported"):
        cortex.compile(elementwise("3x9200000000000000000"), entry="f", mode=None)


def test_a_dynamic_dimension_does_not_count():
    parse(elementwise("?x1024"))
