"""`cortex-dce{mode=power_save}`: dead_node_elimination of zero-weight stages, as ordinary rewrites.

No stage is marked dead by hand: the result falls
out of three reusable steps: canonicalize, mode specialisation (weights
become constants), canonicalize again (score_fusion drops its zero-weight
terms, so their maps lose their only use), then xDSL's liveness-based DCE
(`region_dce`). State writes (`cortex.update_state`, MemoryWriteEffect) are
never removed; pure ops whose results are unused always are.

The pass reports what it removed and the time that saves, to
stderr:

    [dead_node_elimination] removed: ['saliency_dft', 'motion_map']
    [dead_node_elimination] saved: ~4.5ms

"Removed" means cortex ops of the input that were erased as dead; ops that
were *replaced* (a weight by its constant, center_crop folded to a
constant, score_fusion rebuilt with fewer terms) are not removed. The time
is the sum of the removed ops' `cortex.profile_ms` attributes (set by
`cortex-profile`); an op without one counts 0 and the report says so.
`eliminate_dead_nodes` returns the same report as data, without printing.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.transforms.dead_code_elimination import region_dce

from cortex.passes.canonicalize import canonicalize
from cortex.passes.profile import profile_ms
from cortex.passes.specialize_mode import specialization_weights, specialize_mode

REPORT_PREFIX = "[dead_node_elimination]"


@dataclass(frozen=True)
class RemovedOp:
    """One removed stage: its name (`saliency_dft`) and its profiled time, if known."""

    name: str
    profile_ms: float | None


@dataclass
class DceReport:
    removed: list[RemovedOp] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [r.name for r in self.removed]

    @property
    def saved_ms(self) -> float:
        return sum(r.profile_ms or 0.0 for r in self.removed)

    @property
    def unprofiled(self) -> list[str]:
        return [r.name for r in self.removed if r.profile_ms is None]

    def lines(self) -> list[str]:
        """The `[dead_node_elimination]` report lines (nothing when nothing was removed)."""
        if not self.removed:
            return []
        saved = f"~{self.saved_ms:.1f}ms"
        if len(self.unprofiled) == len(self.removed):
            saved += " (no profile data)"
        elif self.unprofiled:
            saved += f" (no profile data for {', '.join(self.unprofiled)})"
        return [f"{REPORT_PREFIX} removed: {self.names}", f"{REPORT_PREFIX} saved: {saved}"]


def stage_name(op: Operation) -> str:
    return op.name.removeprefix("cortex.")


def eliminate_dead_nodes(
    module: ModuleOp, mode: str | None = None, table: str | None = None, ctx: Context | None = None
) -> DceReport:
    """canonicalize, specialize `mode` (if given), canonicalize, dce; in place.

    Returns the cortex ops removed as dead, in program order.
    """
    if mode is not None:
        specialization_weights(mode, table)  # fail before touching the module
    before: Sequence[Operation] = list(module.walk())
    replaced: set[Operation] = set()

    def on_replace(op: Operation, _new: Sequence[SSAValue | None]) -> None:
        replaced.add(op)

    listener = PatternRewriterListener(operation_replacement_handler=[on_replace])
    canonicalize(module, ctx, listener=listener)
    if mode is not None:
        specialize_mode(module, mode, table, listener=listener)
        canonicalize(module, ctx, listener=listener)
    region_dce(module.body, listener)

    alive = set(module.walk())
    return DceReport(
        [
            RemovedOp(stage_name(op), profile_ms(op))
            for op in before
            if op.name.startswith("cortex.") and op not in alive and op not in replaced
        ]
    )


@dataclass(frozen=True)
class CortexDCEPass(ModulePass):
    """Removes the stages a mode weighs at zero (canonicalize, specialise the mode's weights, canonicalize, DCE) and reports them."""

    name = "cortex-dce"

    mode: str | None = None
    table: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for line in eliminate_dead_nodes(op, self.mode, self.table, ctx).lines():
            print(line, file=sys.stderr)
