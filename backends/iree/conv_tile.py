"""The register tile of IREE's CPU convolutions, set for the CPU's vector width.

IREE 3.13's llvm-cpu code picks, for a channels-last 2-D convolution (by then a
`linalg.generic` with four parallel and three reduction loops: n, oh, ow, oc, kh, kw, ic),
a vector tile of 8 output columns × 16 output channels (`vector_common_parallel = [1, 1, 8,
16, 0, 0, 0]`) on AVX-512 too, where 16 channels are one register: 8 accumulators of the 32.
With 32 channels (two registers a column, 16 accumulators) the convolutions ran faster
(`CHANNELS_PER_TILE`; the figures: benchmarks/README.md, "Figures behind the compiler's choices").

IREE 3.13 ignores a `compilation_info` attribute on the convolution Cortex hands over, and a
tuning spec does not reach it; what works is a compile in two phases: up to the executables'
configurations (`--compile-to=executable-configurations`), the tile edited in each convolution's
dispatch (`retile`: the root's `lowering_config` and those of the ops fused into it, whose tiles
follow the root's), then on from there (`--compile-from=executable-configurations`).
`cortex.backends.iree.compiler` does this where `CHANNELS_PER_TILE` has the CPU's vector ISA and
the IREE version is one it was measured on, and falls back to one phase (IREE's own tile) when a
phase fails. A dispatch whose channel count (its `distribution` tile) is not a multiple of the new
tile keeps IREE's.
"""

from __future__ import annotations

import re

CHANNELS_PER_TILE: dict[str, int] = {"avx512f": 32}
"""Output channels of a convolution's register tile, by the CPU feature that decides the vector width
(AVX-512: 32 = two registers). AVX2 CPUs compile convolutions as im2col + matmul
(`cortex.backends.iree.compiler.IM2COL_FLAGS`) and keep IREE's tile: no entry."""

TILED_SINCE = (3, 13)
"""The first IREE version the two-phase mechanism and the table were measured on."""

CONV_ITERATORS = 'iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]'
ROOT = re.compile(r"distribution = \[0, \d+, \d+, (\d+), 0, 0, 0\], vector_common_parallel = \[1, 1, (\d+), 16, 0, 0, 0\]")
EXECUTABLE = re.compile(r"(?=^\s*hal\.executable private )", re.M)


def channels_per_tile(features: frozenset[str]) -> int | None:
    """The convolution tile's output channels for a CPU with `features`, None to keep IREE's choice."""
    return next((channels for feature, channels in CHANNELS_PER_TILE.items() if feature in features), None)


def retile(configured: str, channels: int) -> tuple[str, int]:
    """`configured` (IREE's executable-configurations output) with every channels-last convolution's vector
    tile widened from 16 to `channels` output channels where its dispatch's channel tile is a multiple of
    it; and how many dispatches were changed."""
    pieces = EXECUTABLE.split(configured)
    changed = 0
    for i, piece in enumerate(pieces):
        root = next((m for line in piece.splitlines() if CONV_ITERATORS in line and (m := ROOT.search(line))), None)
        if root is None or int(root.group(1)) % channels:
            continue
        columns = root.group(2)
        piece = piece.replace(f"vector_common_parallel = [1, 1, {columns}, 16, 0, 0, 0]",
                              f"vector_common_parallel = [1, 1, {columns}, {channels}, 0, 0, 0]")
        pieces[i] = piece.replace(f"vector_common_parallel = [1, 1, {columns}, 16]>",
                                  f"vector_common_parallel = [1, 1, {columns}, {channels}]>")
        changed += 1
    return "".join(pieces), changed


__all__ = ["CHANNELS_PER_TILE", "TILED_SINCE", "channels_per_tile", "retile"]
