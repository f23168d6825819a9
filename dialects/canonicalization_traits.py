"""The trait through which xDSL's `canonicalize` finds cortex patterns, and the table it reads.

Patterns live in `cortex.dialects.canonicalization` (every cortex op:
folding through the kernels, algebra) and
`cortex.dialects.quant_canonicalization` (the quantisation rewrites), each
a function from op class to the patterns rooted at that op. The op modules
need the trait before those functions can exist (the patterns name the op
classes), so the trait reads a table the pattern modules fill
(`register_patterns`, called by `cortex.dialects.cortex` when the dialect is
assembled): the trait never imports the patterns, and no module imports
one that imports it back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait

PatternSource = Callable[[type[Operation]], tuple[RewritePattern, ...]]

_SOURCES: list[PatternSource] = []


def register_patterns(source: PatternSource) -> None:
    """Add a source of canonicalisation patterns (asked after those registered before it); once per source."""
    if source not in _SOURCES:
        _SOURCES.append(source)


@dataclass(frozen=True)
class CortexCanonicalization(HasCanonicalizationPatternsTrait):
    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        return tuple(p for source in _SOURCES for p in source(op))

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()


__all__ = ["CortexCanonicalization", "PatternSource", "register_patterns"]
