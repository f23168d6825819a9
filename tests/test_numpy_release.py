"""Large arrays are released (`del`) where they die in generated code (backends/numpy/release.py).

Before this, the decomposed scene change was twice the OpenCV kernel's CPU because every
intermediate stayed alive until the function returned (~19 full-size images at the peak), so each call
took fresh, zero-filled pages from the OS. These tests pin where `del`s go (and where they must not:
a name read later, inside a branch or loop, a parameter, a result), that the code still computes the
same values, and that the decomposed scene change's peak memory is a few images, not all of them.
"""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

import cortex
from cortex.backends.numpy.codegen import RELEASE_BYTES
from cortex.backends.numpy.emitter import emit, load
from cortex.examples import SCENE_ONLY
from cortex.ir import parse_module

N = 256  # 256×256 float32: 256 KiB, above RELEASE_BYTES
assert N * N * 4 >= RELEASE_BYTES

T = f"tensor<{N}x{N}xf32>"
PROGRAM = f"""
func.func @f(%x: {T}, %t: f32, %small: tensor<4xf32>) -> ({T}, {T}, tensor<4xf32>) {{
  %a = arith.mulf %x, %x : {T}
  %q = arith.addf %x, %x : {T}
  %b = arith.addf %a, %x : {T}
  %c0 = arith.constant 0 : index
  %first = tensor.extract %x[%c0, %c0] : {T}
  %big = arith.cmpf ogt, %first, %t : f32
  %r = scf.if %big -> ({T}) {{
    %d = arith.addf %b, %b : {T}
    %e = arith.mulf %d, %x : {T}
    scf.yield %e : {T}
  }} else {{
    %n = arith.negf %b : {T}
    scf.yield %n : {T}
  }}
  %lo = arith.constant 0 : index
  %hi = arith.constant 3 : index
  %one = arith.constant 1 : index
  %loop = scf.for %i = %lo to %hi step %one iter_args(%acc = %r) -> ({T}) {{
    %w = arith.mulf %acc, %q : {T}
    %z = arith.subf %w, %x : {T}
    scf.yield %z : {T}
  }}
  %s = arith.subf %loop, %x : {T}
  %k = arith.mulf %small, %small : tensor<4xf32>
  %k2 = arith.addf %k, %small : tensor<4xf32>
  func.return %s, %q, %k2 : {T}, {T}, tensor<4xf32>
}}
"""


def expected(x, t, small):
    b = x * x + x
    q = x + x
    r = (b + b) * x if x[0, 0] > t else -b
    for _ in range(3):
        r = r * q - x
    return r - x, q, small * small + small


def lines_of(source: str) -> list[str]:
    body = source.split("def f(", 1)[1].splitlines()[2:]
    return [line.split("  # ")[0] for line in body if line.strip()]


def deleted(line: str) -> set[str]:
    m = re.fullmatch(r"\s*del (.*)", line)
    return {n.strip() for n in m.group(1).split(",")} if m else set()


def index_of(lines: list[str], pattern: str) -> int:
    found = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    assert found, f"no line matches {pattern!r}"
    return found[0]


@pytest.mark.parametrize("profile", [False, True])
@pytest.mark.parametrize("threshold", [-10.0, 10.0])
def test_released_code_computes_the_same_values(threshold, profile):
    emitted = emit(parse_module(PROGRAM), profile)
    f = load(emitted, "<test>")["f"]
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (N, N)).astype(np.float32)
    small = rng.uniform(-2, 2, 4).astype(np.float32)
    got = f(x, np.float32(threshold), small)
    for g, e in zip(got, expected(x, np.float32(threshold), small)):
        np.testing.assert_array_equal(g, e)  # the same ufuncs in the same order: exact
    assert "del " in emitted.source


def test_dels_go_after_the_last_read_and_never_inside_a_branch_or_loop_that_reads_an_outer_name():
    lines = lines_of(emit(parse_module(PROGRAM)).source)
    dels = {i: deleted(line) for i, line in enumerate(lines) if deleted(line)}
    every = [n for names in dels.values() for n in names]
    assert len(every) == len(set(every)), "a name released twice"
    gone = set(every)
    # parameters, results, the if's and the loop's carried names, scalars and small arrays stay
    assert not gone & {"x", "t", "small", "s", "q", "r", "loop", "acc", "first", "big", "k", "k2", "i"}
    # b is read in both branches: released after the if, at the if's indentation, not inside
    if_at = index_of(lines, r"^\s*if ")
    b_at = next(i for i, names in dels.items() if "b" in names)
    assert b_at > if_at and not lines[b_at].startswith("        ")
    assert all(not re.search(r"\bb\b", line) for line in lines[b_at + 1 :])
    # d dies inside the then-branch, right after e is computed from it
    d_at = next(i for i, names in dels.items() if "d" in names)
    assert lines[d_at].startswith("        ") and d_at < index_of(lines, r"^\s*else:")
    # w dies inside the loop body; q, read by every iteration, is never released in it
    for_at = index_of(lines, r"^\s*for ")
    w_at = next(i for i, names in dels.items() if "w" in names)
    assert w_at > for_at and lines[w_at].startswith("        ")
    # every released name is read nowhere after its del
    for i, names in dels.items():
        for n in names:
            assert all(not re.search(rf"\b{n}\b", line) for line in lines[i + 1 :] if not deleted(line)), n


def test_nothing_is_released_in_small_programs():
    small = PROGRAM.replace(f"{N}x{N}", "4x4")
    assert "del " not in emit(parse_module(small)).source




def test_the_decomposed_scene_change_holds_a_few_images_at_once_and_its_bits():
    """Before the release step its peak was ~19 float64 images (every intermediate alive until the
    return); now ~7.5. NumPy reports its buffers to tracemalloc, so the peak is measured, not timed."""
    h, w = 128, 160  # float64 160 KiB: above RELEASE_BYTES
    text = SCENE_ONLY.format(h=h, w=w)
    compiled = cortex.compile(cortex.parse(text), entry="scene", mode=None, passes="cortex-decompose-scene-change")
    kernel = cortex.compile(cortex.parse(text), entry="scene", mode=None)  # the OpenCV-backed op
    assert "del " in compiled.source
    rng = np.random.default_rng(5)
    frames = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(3)]
    for i, frame in enumerate(frames):
        if i == len(frames) - 1:
            tracemalloc.start()
            base = tracemalloc.get_traced_memory()[0]
        (score,) = compiled(frame)
        if i == len(frames) - 1:
            peak = tracemalloc.get_traced_memory()[1] - base
            tracemalloc.stop()
        assert score == kernel(frame)[0]  # the decomposition's bits are the kernel's
    assert peak < 10 * h * w * 8, f"peak {peak / (h * w * 8):.1f} float64 images"
