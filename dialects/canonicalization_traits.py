"""The trait through which xDSL's `canonicalize` finds cortex patterns.

Patterns live in `cortex.dialects.canonicalization`, as a table from op
class to patterns rooted at that op; the table is read lazily, when
canonicalize first asks, so the op classes can be defined first.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait


@dataclass(frozen=True)
class CortexCanonicalization(HasCanonicalizationPatternsTrait):
    def get_patterns(self, op: type[Operation]) -> tuple[RewritePattern, ...]:
        from cortex.dialects.canonicalization import patterns_for

        return patterns_for(op)

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return ()
