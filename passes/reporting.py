"""The one channel through which a pass hands back more than IR.

A pass whose result includes facts for its caller (what `cortex-temporal-reuse` carried, ...) defines
`apply_reporting(ctx, module)`: it does what `apply` does to the module and returns its reports instead of
printing them. `apply_pass` runs any pass that way, so a driver collects every pass's reports without
knowing which passes have some.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass


@runtime_checkable
class ReportingPass(Protocol):
    """A pass with reports: `apply_reporting` transforms the module as `apply` does and returns them."""

    def apply_reporting(self, ctx: Context, op: ModuleOp) -> Sequence[object]: ...


def apply_pass(p: ModulePass, ctx: Context, op: ModuleOp) -> list[object]:
    """Run `p` on `op`; its reports when it has some (`ReportingPass`), else []."""
    if isinstance(p, ReportingPass):
        return list(p.apply_reporting(ctx, op))
    p.apply(ctx, op)
    return []


__all__ = ["ReportingPass", "apply_pass"]
