"""What a compiled program runs as native code, and why the rest stays on the NumPy host code.

A backend that compiles parts of a lowered module natively (IREE: `cortex-outline-segments` and its cost rule)
records, in its executable's meta, every run of extern-free ops the rule weighed (`RunChoice`: the source ops
it came from, its work and boundary figures, whether it went native) and the rule's thresholds (`COST_RULE`).
`native_lines` puts that in words for `cortex-run`'s summary and report and for `compiled.native()`; a program
whose executables recorded nothing (the NumPy backend) has no such lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cortex.runtime.program import Program

CHOICES = "native"
"""Executable meta key: the runs the cost rule weighed, each `RunChoice.as_meta()`."""
COST_RULE = "cost_rule"
"""Executable meta key: {"min_work": ..., "min_intensity": ...}, the thresholds the runs were weighed against."""


@dataclass(frozen=True)
class RunChoice:
    """One run of extern-free ops the cost rule weighed: its source ops ("saliency+motion"), its work
    (Σ iteration space × body ops of its linalg ops), the elements crossing its boundary, and whether it
    went native (a run that passes the rule but cannot cross, e.g. a dynamically shaped value, stays)."""

    stages: str
    work: int
    boundary: int
    native: bool

    @property
    def intensity(self) -> float:
        return self.work / max(self.boundary, 1)

    def why(self, min_work: float, min_intensity: float) -> str:
        """The figures against the rule, in words."""
        figures = f"work {self.work:,}, {self.intensity:.1f} per boundary element"
        if self.native:
            return figures
        short = [f"work < {min_work:,.0f}"] if self.work < min_work else []
        if self.intensity < min_intensity:
            short.append(f"< {min_intensity:g} per boundary element")
        return f"{figures} ({'; '.join(short) or 'passes the rule, but its boundary cannot cross'})"

    def as_meta(self) -> dict[str, Any]:
        return {"stages": self.stages, "work": self.work, "boundary": self.boundary, "native": self.native}

    @classmethod
    def of_meta(cls, meta: dict[str, Any]) -> RunChoice:
        return cls(str(meta["stages"]), int(meta["work"]), int(meta["boundary"]), bool(meta["native"]))


def choices_of(meta: dict[str, Any]) -> tuple[list[RunChoice], dict[str, float]] | None:
    """(the runs, the rule's thresholds) an executable's meta records, or None when it records none."""
    runs = meta.get(CHOICES)
    rule = meta.get(COST_RULE)
    if not isinstance(runs, list) or not isinstance(rule, dict):
        return None
    return [RunChoice.of_meta(r) for r in runs], {k: float(v) for k, v in rule.items()}


def weighed(program: Program) -> tuple[list[RunChoice], dict[str, float]] | None:
    """The runs the backend weighed for the code a call runs: the frame split's when a call runs the split's
    parts (`BackendTraits.calls_split`), else the entry's; None when its executable recorded none."""
    exe = program.executables.get("split" if program.backend.calls_split else "entry")
    return choices_of(exe.meta) if exe is not None else None


def native_lines(program: Program, backend: str = "IREE") -> list[str]:
    """What runs natively, a headline and one line per weighed run (`weighed`); [] when the program's backend
    records no such choice."""
    found = weighed(program)
    if found is None:
        return []
    runs, rule = found
    min_work, min_intensity = rule.get("min_work", 0.0), rule.get("min_intensity", 0.0)
    native = [r for r in runs if r.native]
    rule_text = f"work >= {min_work:,.0f} and >= {min_intensity:g} per boundary element"
    if not native:
        head = (f"{backend} runs nothing natively: no run of extern-free ops passes the cost rule ({rule_text}); "
                f"all {len(runs)} run(s) stay on the NumPy host code")
    else:
        head = (f"{backend} runs {len(native)} of {len(runs)} run(s) of extern-free ops natively "
                f"(cost rule: {rule_text}); the rest stay on NumPy")
    rows = [f"  {'native' if r.native else 'NumPy':<6}  {r.stages}: {r.why(min_work, min_intensity)}" for r in runs]
    return [head, *rows]


def runs_nothing_natively(program: Program) -> bool:
    """Whether the program's backend weighed runs for native code and took none."""
    found = weighed(program)
    return found is not None and not any(r.native for r in found[0])


__all__ = ["CHOICES", "COST_RULE", "RunChoice", "choices_of", "native_lines", "runs_nothing_natively", "weighed"]
