"""Every verifier rule, run by pytest through the Python API (not only by lit's FileCheck).

The cases live once, in `lit/dialect/*_invalid.mlir` (one `// -----` chunk
per rule, with its `// expected-error@+N {{...}}`). Here each chunk is
parsed and verified with `cortex.parse`, and the first diagnostic must be
the expected message at the expected line, so dropping or loosening a rule
fails pytest as well as lit (mutation testing found two rules that only lit
noticed: conv2d's channel rule and duplicate reduce axes).

A rule that only rejects is half a test: the boundary cases below also check
that the valid neighbour of a rejected op verifies.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.utils.exceptions import DiagnosticException, ParseError

import cortex
from cortex.errors import CortexError

LIT_DIALECT = Path(cortex.__file__).resolve().parent / "lit" / "dialect"
INVALID_FILES = sorted(LIT_DIALECT.glob("*_invalid.mlir"))
EXPECTED = re.compile(r"//\s*expected-error@\+(\d+)\s*\{\{(.*)\}\}")


def chunks(path: Path):
    """(case id, chunk text, expected line within the chunk (1-based), expected message)."""
    for chunk in path.read_text().split("// -----"):
        lines = chunk.split("\n")
        for n, line in enumerate(lines):
            if m := EXPECTED.search(line):
                name = re.search(r"func\.func @(\w+)", chunk)
                yield (f"{path.stem}:{name.group(1) if name else n}", chunk, n + 1 + int(m.group(1)), m.group(2))
                break


CASES = [case for path in INVALID_FILES for case in chunks(path)]


def test_every_invalid_file_has_cases():
    assert {p.stem for p in INVALID_FILES} >= {"tensor_invalid", "vision_invalid", "state_invalid"}
    assert len(CASES) >= 100


@pytest.mark.parametrize(("chunk", "line", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_verifier_rejects_with_located_message(chunk, line, message):
    with pytest.raises((DiagnosticException, ParseError, CortexError)) as info:
        cortex.parse(chunk)
    text = str(info.value)
    assert message in text
    assert re.match(rf"<string>:{line}:\d+", text), f"expected the error at line {line}, got:\n{text}"


# ---------------------------------------------------------------- boundaries of the rules lit alone covered


def verify(body: str, args: str) -> None:
    cortex.parse(f"func.func @f({args}) {{\n  {body}\n  func.return\n}}\n")


CONV_ARGS = "%x: tensor<1x3x8x8xf32>, %w: tensor<4x{c}x3x3xf32>"


def test_conv2d_channels_must_match_the_weight():
    verify("%r = cortex.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>", CONV_ARGS.format(c=3))
    for c in (1, 2, 4):
        with pytest.raises((DiagnosticException, CortexError), match=f"input has 3 channels but the weight expects {c}"):
            verify(
                f"%r = cortex.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x{c}x3x3xf32>) -> tensor<1x4x6x6xf32>",
                CONV_ARGS.format(c=c),
            )


@pytest.mark.parametrize(
    ("axes", "result", "ok"),
    [
        ("0, 1", "1x1", True),
        ("1, 0", "1x1", True),
        ("-1, 0", "1x1", True),
        ("1, -1", "2x1", False),
        ("0, -2", "1x3", False),
        ("1, 1", "2x1", False),
    ],
)
def test_reduce_axes_name_each_dimension_once(axes, result, ok):
    body = f"%r = cortex.reduce_sum %x {{axes = array<i64: {axes}>}} : tensor<2x3xf32> -> tensor<{result}xf32>"
    if ok:
        verify(body, "%x: tensor<2x3xf32>")
    else:
        with pytest.raises((DiagnosticException, CortexError), match="name a dimension twice"):
            verify(body, "%x: tensor<2x3xf32>")
