"""Canonicalisation patterns of the cortex dialect, as a table op → patterns.

Filled in by the graph-passes work (issue 3); see `patterns_for`.
"""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern


def patterns_for(op: type[Operation]) -> tuple[RewritePattern, ...]:
    """The canonicalisation patterns rooted at ops of class `op`."""
    return ()
