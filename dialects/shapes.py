"""Shape rules of the cortex ops, written once.

Every rule takes operand shapes (tuples of ints, ``DYNAMIC`` for ``?``) and
returns the result shape, or raises ``ShapeError`` naming the broken rule.
The op verifiers check declared result types against these rules, and
shape inference replaces dynamic result dimensions with what they return,
so the two can never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.utils.exceptions import VerifyException

DYNAMIC = DYNAMIC_INDEX

Shape = tuple[int, ...]


class ShapeError(VerifyException):
    """Operand shapes that no result shape can satisfy."""


def fmt(shape: Sequence[int]) -> str:
    """`4x?x8`, as MLIR writes a shape."""
    return "x".join("?" if d == DYNAMIC else str(d) for d in shape) or "scalar"


def dims_agree(a: int, b: int) -> bool:
    return a == DYNAMIC or b == DYNAMIC or a == b


def shapes_agree(a: Sequence[int], b: Sequence[int]) -> bool:
    """Same rank, and equal wherever both are static."""
    return len(a) == len(b) and all(dims_agree(x, y) for x, y in zip(a, b))


def refine(declared: Sequence[int], inferred: Sequence[int]) -> Shape:
    """The declared shape with its dynamic dimensions filled from `inferred`."""
    return tuple(i if d == DYNAMIC else d for d, i in zip(declared, inferred))


def broadcast(a: Sequence[int], b: Sequence[int]) -> Shape:
    """NumPy/ONNX multidirectional broadcasting."""
    rank = max(len(a), len(b))
    a = (1,) * (rank - len(a)) + tuple(a)
    b = (1,) * (rank - len(b)) + tuple(b)
    out = []
    for x, y in zip(a, b):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x == DYNAMIC:
            out.append(y)
        elif y == DYNAMIC or x == y:
            out.append(x)
        else:
            raise ShapeError(f"shapes {fmt(a)} and {fmt(b)} do not broadcast")
    return tuple(out)


def matmul(a: Sequence[int], b: Sequence[int]) -> Shape:
    """ONNX MatMul for rank >= 2: batch dimensions broadcast, K must agree."""
    if len(a) < 2 or len(b) < 2:
        raise ShapeError(f"matmul operands must have rank >= 2, got {fmt(a)} and {fmt(b)}")
    if not dims_agree(a[-1], b[-2]):
        raise ShapeError(
            f"matmul contraction mismatch: {fmt(a)} has K={a[-1]}, {fmt(b)} has K={b[-2]}"
        )
    batch = broadcast(a[:-2], b[:-2])
    return (*batch, a[-2], b[-1])


def linear(x: Sequence[int], w: Sequence[int], bias: Sequence[int] | None) -> Shape:
    """x·Wᵀ + b with W of shape N×K."""
    if len(x) < 1 or len(w) != 2:
        raise ShapeError(f"linear expects x of rank >= 1 and a 2-D weight, got {fmt(x)} and {fmt(w)}")
    if not dims_agree(x[-1], w[1]):
        raise ShapeError(f"linear: x has {x[-1]} features but the weight expects {w[1]}")
    if bias is not None and (len(bias) != 1 or not dims_agree(bias[0], w[0])):
        raise ShapeError(f"linear: bias must have shape {w[0]}, got {fmt(bias)}")
    return (*x[:-1], w[0])


def per_channel(x: Sequence[int], params: Sequence[Sequence[int]], what: str) -> Shape:
    """batch_norm: rank >= 2 input (N×C×...), every parameter a vector of C."""
    if len(x) < 2:
        raise ShapeError(f"{what} expects an input of rank >= 2 (N x C x ...), got {fmt(x)}")
    for p in params:
        if len(p) != 1 or not dims_agree(p[0], x[1]):
            raise ShapeError(f"{what}: every parameter must have shape {fmt(x[1:2])}, got {fmt(p)}")
    return tuple(x)


def window_out(size: int, kernel: int, stride: int, pad_lo: int, pad_hi: int, dilation: int) -> int:
    if size == DYNAMIC:
        return DYNAMIC
    span = dilation * (kernel - 1) + 1
    if size + pad_lo + pad_hi < span:
        raise ShapeError(f"window of extent {span} does not fit in a padded input of {size + pad_lo + pad_hi}")
    return (size + pad_lo + pad_hi - span) // stride + 1


def check_window_params(strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]) -> None:
    if len(strides) != 2 or any(s <= 0 for s in strides):
        raise ShapeError(f"strides must be two positive integers, got {list(strides)}")
    if len(pads) != 4 or any(p < 0 for p in pads):
        raise ShapeError(f"pads must be four non-negative integers (top, left, bottom, right), got {list(pads)}")
    if len(dilations) != 2 or any(d <= 0 for d in dilations):
        raise ShapeError(f"dilations must be two positive integers, got {list(dilations)}")


def conv2d(
    x: Sequence[int],
    w: Sequence[int],
    bias: Sequence[int] | None,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    group: int = 1,
) -> Shape:
    """NCHW input, OIHW weight (I = C / group), ONNX pads (top, left, bottom, right)."""
    if len(x) != 4 or len(w) != 4:
        raise ShapeError(f"conv2d expects a 4-D input (NCHW) and a 4-D weight (OIHW), got {fmt(x)} and {fmt(w)}")
    check_window_params(strides, pads, dilations)
    if group < 1 or w[0] % group:
        raise ShapeError(f"conv2d: group {group} must be positive and divide the {w[0]} output channels")
    if not dims_agree(x[1], w[1] * group if x[1] != DYNAMIC else DYNAMIC):
        raise ShapeError(f"conv2d: input has {x[1]} channels but the weight expects {w[1]} × group {group}")
    if bias is not None and (len(bias) != 1 or not dims_agree(bias[0], w[0])):
        raise ShapeError(f"conv2d: bias must have shape {w[0]}, got {fmt(bias)}")
    oh = window_out(x[2], w[2], strides[0], pads[0], pads[2], dilations[0])
    ow = window_out(x[3], w[3], strides[1], pads[1], pads[3], dilations[1])
    return (x[0], w[0], oh, ow)


def pool2d(
    x: Sequence[int], kernel: Sequence[int], strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int] = (1, 1)
) -> Shape:
    if len(x) != 4:
        raise ShapeError(f"pooling expects a 4-D input (NCHW), got {fmt(x)}")
    if len(kernel) != 2 or any(k <= 0 for k in kernel):
        raise ShapeError(f"kernel_shape must be two positive integers, got {list(kernel)}")
    check_window_params(strides, pads, dilations)
    oh = window_out(x[2], kernel[0], strides[0], pads[0], pads[2], dilations[0])
    ow = window_out(x[3], kernel[1], strides[1], pads[1], pads[3], dilations[1])
    return (x[0], x[1], oh, ow)


def transpose(x: Sequence[int], perm: Sequence[int]) -> Shape:
    if sorted(perm) != list(range(len(x))):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {len(x)} dimensions of {fmt(x)}")
    return tuple(x[p] for p in perm)


def normalise_axis(axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank


def reduce(x: Sequence[int], axes: Sequence[int], keepdims: bool) -> Shape:
    """ONNX reduce: empty axes means every axis."""
    norm = [normalise_axis(a, len(x)) for a in axes] or list(range(len(x)))
    if len(set(norm)) != len(norm):
        raise ShapeError(f"axes {list(axes)} name a dimension twice")
    if keepdims:
        return tuple(1 if i in norm else d for i, d in enumerate(x))
    return tuple(d for i, d in enumerate(x) if i not in norm)


def concat(shapes_in: Sequence[Sequence[int]], axis: int) -> Shape:
    """ONNX Concat: equal ranks, equal sizes but along `axis`, whose sizes add up."""
    if not shapes_in:
        raise ShapeError("concat needs at least one operand")
    rank = len(shapes_in[0])
    if any(len(s) != rank for s in shapes_in):
        raise ShapeError(f"concat operands must share one rank, got {', '.join(fmt(s) for s in shapes_in)}")
    axis = normalise_axis(axis, rank)
    out = list(shapes_in[0])
    for s in shapes_in[1:]:
        for i, (a, b) in enumerate(zip(out, s)):
            if i != axis and not dims_agree(a, b):
                raise ShapeError(f"concat operands differ in dimension {i}: {', '.join(fmt(s) for s in shapes_in)}")
            if i != axis and a == DYNAMIC:
                out[i] = b
    sizes = [s[axis] for s in shapes_in]
    out[axis] = DYNAMIC if DYNAMIC in sizes else sum(sizes)
    return tuple(out)


def pad(x: Sequence[int], pads: Sequence[int]) -> Shape:
    """ONNX Pad: `pads` = (begin of each axis..., end of each axis...), non-negative."""
    if len(pads) != 2 * len(x) or any(p < 0 for p in pads):
        raise ShapeError(f"pads must be {2 * len(x)} non-negative integers for {fmt(x)}, got {list(pads)}")
    return tuple(d if d == DYNAMIC else d + lo + hi for d, lo, hi in zip(x, pads[: len(x)], pads[len(x):]))


def slice_(x: Sequence[int], starts: Sequence[int], sizes: Sequence[int], steps: Sequence[int]) -> Shape:
    """A strided box of `x`: per axis, `sizes` elements from `starts`, `steps` apart (all given, in range);
    a `?` size (start 0, step 1) keeps the whole dimension."""
    if not len(starts) == len(sizes) == len(steps) == len(x):
        raise ShapeError(f"starts, sizes and steps must each have {len(x)} entries for {fmt(x)}")
    out = list(sizes)
    for i, (d, start, size, step) in enumerate(zip(x, starts, sizes, steps)):
        if size == DYNAMIC and start == 0 and step == 1:
            out[i] = d  # the whole dimension, whatever its size (known only at run time when written)
            continue
        if step < 1 or start < 0 or size < 0:
            raise ShapeError(f"slice: starts and sizes must be >= 0 and steps >= 1, got {list(starts)}, {list(sizes)}, {list(steps)}")
        if d != DYNAMIC and size and start + (size - 1) * step >= d:
            raise ShapeError(f"slice of {size} from {start} every {step} leaves a dimension of {d} ({fmt(x)})")
    return tuple(out)


def num_elements(shape: Sequence[int]) -> int | None:
    if any(d == DYNAMIC for d in shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


MAX_TENSOR_ELEMENTS = 1 << 40
"""The most elements a tensor type may have (its static dimensions' product): 1 TiB even of bytes,
more than any machine runs, and far below where sizes in bytes stop fitting an int64 (a
9.2e18-element dimension used to reach the lowering and NumPy as an internal error)."""

MAX_CONSTANT_ELEMENTS = 1 << 24
"""The most elements a `dense<...>` literal may have (16 Mi: 64 MiB of f32). The parser stores every
element, a splat included, so `dense<1.0> : tensor<100000x100000xf32>` -- 143 bytes of text -- would
expand to 40 GB; it is refused before expansion."""


def check_element_count(shape: Sequence[int], limit: int = MAX_TENSOR_ELEMENTS, what: str = "a tensor") -> None:
    """A ShapeError when the static dimensions of `shape` hold more than `limit` elements."""
    n = 1
    for d in shape:
        if d != DYNAMIC:
            n *= d
    if n > limit:
        dims = "x".join("?" if d == DYNAMIC else str(d) for d in shape)
        raise ShapeError(f"{what} ({dims}) has {n} elements, more than the supported {limit}")


MAX_IMAGE_SIDE = 8192
"""The largest frame side the pipeline accepts (8K video is 7680×4320): a larger
frame would need gigabytes of constants in lowering, and is almost surely a typo."""


def check_image_side(name: str, size: int) -> None:
    """An image height or width must be positive and at most MAX_IMAGE_SIDE (or dynamic)."""
    if size == DYNAMIC:
        return
    if size <= 0:
        raise ShapeError(f"image {name}={size} must be positive")
    if size > MAX_IMAGE_SIDE:
        raise ShapeError(f"image {name}={size} exceeds the largest supported side, {MAX_IMAGE_SIDE}")


def block_grid(h: int, w: int, block: int) -> Shape:
    """The score-map shape of an H×W image cut into block×block cells."""
    if block <= 0:
        raise ShapeError(f"block must be positive, got {block}")
    for name, size in (("H", h), ("W", w)):
        check_image_side(name, size)
        if size != DYNAMIC and size % block:
            raise ShapeError(
                f"image {name}={size} is not a multiple of block={block} "
                "(a frame of any size: give the entry a tensor<?x?x3xui8> frame, or pad it with cortex.pad_frame)"
            )
    return tuple(DYNAMIC if d == DYNAMIC else d // block for d in (h, w))


def padded_to_block(h: int, w: int, block: int) -> Shape:
    """H and W rounded up to the next multiples of `block` (`?` stays `?`): the size `cortex.pad_frame`
    pads a frame to, so the score grid has one cell per started block. The one home of that rule."""
    if block <= 0:
        raise ShapeError(f"block must be positive, got {block}")
    for name, size in (("H", h), ("W", w)):
        check_image_side(name, size)
    return tuple(DYNAMIC if d == DYNAMIC else -(-d // block) * block for d in (h, w))
