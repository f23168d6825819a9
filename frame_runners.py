"""Frame runners: an object that runs a pipeline frame by frame and times its stages.

`make_runner(backend, module, entry, mode, passes, weights)` gives a runner — `CompiledRun` (a backend,
"numpy" or "iree": `cortex.compile` with its profile on) or, for `backend=None`, `InterpretedRun` (the
reference interpreter, no backend: the eager interpreter with its op timer; its name is "reference") —
called as `runner(frame)` and read as `runner.stage_times(reset=)`, a `StageTimes`
(per-stage seconds summed over frames, the table cortex-run prints). The compiled backends compile with
`cortex.compile`'s own steps (`CompileOptions`: the mode's weights baked in, canonicalize and dce), or with
the tool's `--passes` instead of that specialisation; `UNSPECIALISED` is what the mode's dead-node
elimination is priced against.

`cortex-run` and `benchmarks/run_benchmarks.py` run these; they are library code (above the driver, which
`CompiledRun` calls) so that a tool only parses arguments and prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from cortex.backends.backend import BACKENDS
from cortex.deprecation import renamed_attributes, warn_renamed
from cortex.dialects import op_kind
from cortex.driver import compile_loaded, run_passes
from cortex.errors import CortexError
from cortex.options import CompileOptions, compile_pipeline_text


def stage_name(name: str) -> str:
    """`cortex.saliency_dft` → `saliency_dft`; other names unchanged."""
    return name.removeprefix("cortex.")


@dataclass
class StageTime:
    """One stage's time in a `StageTimes` table: seconds (and CPU seconds) summed over the frames that ran."""

    name: str
    kind: str
    seconds: float = 0.0
    calls: int | None = 0
    """Executions counted, or None when the timer only reports totals (NumPy profile)."""
    cpu_seconds: float | None = None
    """CPU time of the threads that ran the stage (`time.thread_time` around it), or None where the timer
    took none (the reference interpreter). Under frame-parallel load the wall-clock includes the waits for a
    core and for the GIL; this is the work itself (without the helper threads of OpenCV or BLAS, which the
    frame-parallel engines hold at one per worker)."""


@dataclass
class StageTimes:
    """Seconds spent per stage, summed over the frames that ran."""

    stages: dict[str, StageTime] = field(default_factory=dict)

    def add(self, name: str, kind: str, seconds: float, calls: int | None = 1, cpu_seconds: float | None = None) -> None:
        stage = self.stages.get(name)
        if stage is None:
            stage = self.stages[name] = StageTime(name, kind, cpu_seconds=None if cpu_seconds is None else 0.0)
        stage.seconds += seconds
        stage.calls = None if calls is None or stage.calls is None else stage.calls + calls
        if cpu_seconds is not None and stage.cpu_seconds is not None:
            stage.cpu_seconds += cpu_seconds

    @property
    def has_cpu(self) -> bool:
        """Whether the timers took each stage's thread CPU time too."""
        return bool(self.stages) and all(s.cpu_seconds is not None for s in self.stages.values())

    def ms_per_frame(self, frames: int) -> dict[str, float]:
        return {s.name: 1e3 * s.seconds / max(frames, 1) for s in self.stages.values()}

    def table(self, frames: int, frame_seconds: float | None = None, title: str = "per-stage time") -> str:
        """Rows in first-run order; the share is of the whole measured frame time when given.

        A "runs" column appears when the timer counted executions (the
        reference interpreter does; the compiled profile keeps totals only).
        """
        rows = list(self.stages.values())
        staged = sum(s.seconds for s in rows)
        total = frame_seconds if frame_seconds and frame_seconds >= staged else staged
        width = max([len("stage")] + [len(s.name) for s in rows])
        counted = any(s.calls is not None for s in rows)
        cpu = self.has_cpu

        def line(name: str, kind: str, runs: str, seconds: float, cpu_seconds: float | None = None) -> str:
            runs_cell = f"  {runs:>5}" if counted else ""
            cpu_cell = "" if not cpu else f"  {'':>19}" if cpu_seconds is None else f"  {1e3 * cpu_seconds / max(frames, 1):>19.3f}"
            return (f"  {name:<{width}}  {kind:<10}{runs_cell}  {1e3 * seconds / max(frames, 1):>9.3f}{cpu_cell}"
                    f"  {_share(seconds, total):>6}")

        lines = [f"{title} ({frames} frame{'s' if frames != 1 else ''})"]
        lines.append(f"  {'stage':<{width}}  {'kind':<10}" + (f"  {'runs':>5}" if counted else "")
                     + f"  {'ms/frame':>9}" + (f"  {'thread CPU ms/frame':>19}" if cpu else "") + f"  {'share':>6}")
        for s in rows:
            lines.append(line(s.name, s.kind, "-" if s.calls is None else str(s.calls), s.seconds, s.cpu_seconds))
        by_kind: dict[str, list[float]] = {}
        for s in rows:
            sums = by_kind.setdefault(s.kind, [0.0, 0.0])
            sums[0] += s.seconds
            sums[1] += s.cpu_seconds or 0.0
        for kind, (seconds, cpu_seconds) in by_kind.items():
            lines.append(line("all " + kind, "", "", seconds, cpu_seconds if cpu else None))
        if total > staged:
            lines.append(line("(between stages)", "", "", total - staged))
        lines.append(line("frame", "", "", total))
        if cpu:
            lines.append(CPU_NOTE)
        return "\n".join(lines)


CPU_NOTE = ("  (ms/frame: wall-clock, which includes waiting for a core when frames run in parallel; CPU: the thread "
            "CPU time of the stage's own work, time.thread_time, without OpenCV's or BLAS's helper threads)")


def _share(part: float, total: float) -> str:
    return f"{100.0 * part / total:5.1f}%" if total > 0 else "     -"


def stage_table(module: ModuleOp) -> dict[str, tuple[str, str]]:
    """Origin label → (stage, kind) for every cortex op: by result name (`saliency`) and op name."""
    table: dict[str, tuple[str, str]] = {}
    for op in module.walk():
        if op.name.startswith("cortex."):
            entry = (stage_name(op.name), op_kind(op))
            table[op.name] = entry
            if op.results and op.results[0].name_hint:
                table.setdefault(op.results[0].name_hint, entry)
    return table


REFERENCE = "reference"
"""The reference interpreter's name as a runner (`cortex-run --runner reference`): no backend."""


class InterpretedRun:
    """The eager reference interpreter; per-stage times from its `op_timer` hook."""

    name = REFERENCE

    def __init__(self, module: ModuleOp, entry: str, mode: str, passes: str | None, weights=None, modes=None):
        from cortex.driver import reference
        from cortex.interpreter.reference import ReferenceRunner

        if passes:
            module = run_passes(module.clone(), passes)
        self.times = StageTimes()
        self.runner: Any = (ReferenceRunner(module, entry=entry, mode=mode, weights=weights, op_timer=self._on_op)
                            if modes is None else reference(module, entry, weights=weights, op_timer=self._on_op, modes=modes))

    def _on_op(self, op: Operation, seconds: float) -> None:
        self.times.add(stage_name(op.name), op_kind(op), seconds)

    def __call__(self, frame: np.ndarray, mode: str | None = None) -> tuple:
        return self.runner(frame) if mode is None else self.runner(frame, mode=mode)

    def stage_times(self, reset: bool = False) -> StageTimes:
        """Seconds per stage since the start (or the last reset)."""
        times = self.times
        if reset:
            self.times = StageTimes()
        return times


class CompiledRun:
    """The compiled NumPy backend (or IREE's, `backend="iree"`), profiled per source op (`LoadedProgram.profile()`)."""

    name = "numpy"

    def __init__(self, module: ModuleOp, options: CompileOptions):
        self.name = options.backend
        self.labels = stage_table(module)
        assert options.entry is not None
        self.labels[options.entry] = ("(glue)", "compilable")  # ops with no cortex origin: the gate, returns
        self.compiled = compile_loaded(module, options)
        self.compiled.profiling = True

    def __call__(self, frame: np.ndarray, mode: str | None = None) -> tuple:
        return self.compiled(frame) if mode is None else self.compiled(frame, mode=mode)

    def stage_times(self, reset: bool = False) -> StageTimes:
        """Seconds per stage since the start (or the last reset)."""
        times = StageTimes()
        profile = self.compiled.profile(reset=reset)
        for label, seconds in profile.items():
            stage, kind = self.labels.get(label, (f"({label})", "compilable"))
            times.add(stage, kind, seconds, calls=None, cpu_seconds=profile.cpu.get(label))
        return times


UNSPECIALISED: dict[str | None, str] = {**{name: "canonicalize,dce" for name in BACKENDS}, None: ""}
"""Passes that keep every stage, per backend (None: the reference interpreter): what the mode's DCE is priced against."""


def make_runner(backend: str | None, module: ModuleOp, entry: str, mode: str, passes: str | None, weights=None,
                post_passes: str | None = "default", device: str = "cpu", modes: Sequence[str] | None = None):
    """A runner: a backend ("numpy", "iree") compiles with `cortex.compile`'s steps for the mode (`passes`,
    when given, instead of its specialisation); `backend=None`, the reference interpreter, runs `passes` (if
    any), then interprets. `modes`: one program for those modes (`CompileOptions.modes`), the runner called
    as `runner(frame, mode=...)`."""
    if backend is None:
        return InterpretedRun(module, entry, mode, passes, weights, modes)
    if backend not in BACKENDS:
        raise CortexError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)}; None: the reference interpreter)")
    return CompiledRun(module, run_options(backend, entry, mode, passes, weights, post_passes, device, modes))


def make_backend(backend: str, *args: Any, **kwargs: Any) -> Any:
    """Deprecated: `make_runner`, which names the reference interpreter None (it is no backend)."""
    warn_renamed("cortex.frame_runners.make_backend", "make_runner (backend None: the reference interpreter)")
    return make_runner(None if backend == REFERENCE else backend, *args, **kwargs)


def run_options(backend: str, entry: str, mode: str, passes: str | None, weights=None,
                post_passes: str | None = "default", device: str = "cpu",
                modes: Sequence[str] | None = None) -> CompileOptions:
    """The compile options of a backend's runner (`make_runner`)."""
    return CompileOptions(entry=entry, mode=mode, weights=weights, passes=passes, post_passes=post_passes,
                          specialize=passes is None, backend=backend, device=device,
                          modes=None if modes is None else tuple(modes))


def run_pipeline_text(backend: str | None, entry: str, mode: str, passes: str | None, weights=None,
                      post_passes: str | None = "default", device: str = "cpu") -> str:
    """The passes `make_runner` runs for these arguments, as one `cortex-opt -p` pipeline: the compile's
    (`compile_pipeline_text`) for a backend, `passes` for the reference interpreter (None)."""
    if backend is not None:
        return compile_pipeline_text(run_options(backend, entry, mode, passes, weights, post_passes, device))
    return passes or ""


if not TYPE_CHECKING:  # the former name, for one release (`StageTime`; type checkers see only the new one)
    __getattr__ = renamed_attributes(__name__, {"Stage": "StageTime"})
