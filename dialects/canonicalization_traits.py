"""The trait through which xDSL's `canonicalize` finds the cortex patterns.

Every cortex op that canonicalises carries `CortexCanonicalization`. When
`canonicalize` first asks it for an op class's patterns, the trait imports
the pattern table (`cortex.dialects.canonicalization.patterns_for`: folding
through the kernels, algebra, the quantisation rewrites) inside the method,
as xDSL's own `arith` traits import `transforms/canonicalization_patterns`:
the patterns name the op classes that carry this trait, so the table can only
be read once both are loaded. Nothing is registered when a module is
imported, and there is no table to fill: what the trait answers depends on
no import order.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait


@dataclass(frozen=True)
class CortexCanonicalization(HasCanonicalizationPatternsTrait):
    """Canonicalisation patterns rooted at the op's class, read from `cortex.dialects.canonicalization`."""

    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from cortex.dialects.canonicalization import patterns_for  # deferred: the patterns name the ops

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()  # the patterns depend on the op class: `get_patterns`


__all__ = ["CortexCanonicalization"]
