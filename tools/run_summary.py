"""cortex-run's summary: how fast the run went, measured the way a user sizing a job needs it.

Three clocks, each labelled where it is printed:

- end to end: from the process's start (the interpreter's own start time,
  read from the OS, so imports count) to the moment every output is
  written and closed (the overlay video renamed into place). This is what
  `frames ÷ the process's wall-clock` gives, to within the summary's own
  printing.
- frame loop: from the first frame's decode to the last frame's outputs
  written; the progress bar shows this rate (it starts with the loop and
  averages over it).
- pipeline: the time inside the compiled pipeline (sequential: the calls
  alone; frame-parallel: the run's wall-clock minus writing outputs).

The same facts go to `--summary-json FILE` (`RunSummary.to_json`), with
the thread counts that ran (`library_threads`) and the per-stage times.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # an annotation only: importing the runners loads the compiler, which cortex-run --help must not
    from cortex.frame_runners import StageTimes

_IMPORTED = time.perf_counter()


def process_start() -> float:
    """When this program started, on the `time.perf_counter` clock: the process's start, less the time it
    spent blocked before now.

    Linux: the process's start time in clock ticks since boot (/proc/self/stat, field 22) against the
    system's uptime gives its age; that counts from the fork, so a shell that slept and then exec'd
    cortex-run (`sh -c 'sleep 5; cortex-run'`) would add its sleep. /proc/self/schedstat gives the
    time the process ran and waited for a core; the rest of its age it was blocked (the shell waiting
    for `sleep`, or a read from a cold disk during the imports), and that is not start-up. Elsewhere,
    or if /proc cannot be read: when this module was imported (later than the true start by the
    imports before it).
    """
    try:
        with open("/proc/self/stat") as f:
            stat = f.read()
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        ticks = int(stat.rsplit(")", 1)[1].split()[19])  # fields after "(comm)"; starttime is field 22
        age = uptime - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return _IMPORTED
    try:
        with open("/proc/self/schedstat") as f:  # ns on a CPU, ns waiting on a run queue, timeslices
            running, waiting = (int(v) for v in f.read().split()[:2])
        age = min(age, (running + waiting) / 1e9)
    except (OSError, ValueError):
        pass
    now = time.perf_counter()
    return min(now - max(age, 0.0), _IMPORTED)


def library_threads() -> dict[str, Any]:
    """Threads OpenCV and the BLAS libraries are set to use now (call while the frames run).

    {"opencv": n, "blas": n or None, "blas_library": "openblas" or None}.
    """
    import cv2

    info: dict[str, Any] = {"opencv": int(cv2.getNumThreads()), "blas": None, "blas_library": None}
    try:
        from threadpoolctl import threadpool_info

        blas = [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]
    except Exception:  # noqa: BLE001 - a report, never a failure of the run
        blas = []
    if blas:
        info["blas"] = max(int(lib.get("num_threads") or 0) for lib in blas)
        info["blas_library"] = ", ".join(sorted({str(lib.get("internal_api")) for lib in blas}))
    return info


def rate(frames: int, seconds: float) -> float | None:
    return frames / seconds if frames and seconds > 0 else None


def _fps(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


@dataclass
class RunClock:
    """Moments of one run on the perf_counter clock, from `origin`: the process's start for the first video
    of cortex-run as a program, else when this run began."""

    origin: float
    since: str = "process start"  # what `origin` is, for the summary's words
    compile_start: float = 0.0
    compile_end: float = 0.0
    loop_start: float = 0.0
    loop_end: float = 0.0
    outputs_closed: float = 0.0
    pipeline_seconds: float = 0.0

    @property
    def end_to_end(self) -> float:
        return self.outputs_closed - self.origin


def finished_status(warnings: list[str]) -> str:
    """The status of a run that wrote every output: `done` when the whole clip decoded and the source said
    nothing, `done-with-warnings` when it warned (the statuses of a batch's manifest: `tools.manifest`)."""
    return "done-with-warnings" if warnings else "done"


@dataclass
class RunSummary:
    """What one run of cortex-run reports at its end, as text and as JSON."""

    video: str
    size: tuple[int, int]
    padded: tuple[int, int]
    frames: int
    mode: str
    backend: str
    clock: RunClock
    engine: str = "sequential"
    parallel: bool = False
    workers: int = 1
    skipped: int | None = None
    blur_threshold: str | None = None
    threads: dict[str, Any] = field(default_factory=dict)
    stages: StageTimes | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    memory: str = ""
    """What glibc does with freed memory (`cortex.runtime.memory_policy`), in words."""
    native: list[str] = field(default_factory=list)
    """What the backend compiled to native code and why the rest stays on NumPy (`compiled.native()`; IREE only)."""
    warnings: list[str] = field(default_factory=list)
    """What the video source warned of (a truncated file, frames that failed to decode): see `status`."""
    live: Any = None
    """A live source's counts and latencies (`cortex.tools.live_run.LiveStats`), or None."""
    frames_per_mode: dict[str, int] = field(default_factory=dict)
    """Frames run in each mode (one entry unless the run switched modes: `--mode-schedule`, `--mode auto`)."""
    ms_per_mode: dict[str, float] = field(default_factory=dict)
    """The pipeline's ms per frame in each mode, when the run measured it frame by frame."""

    def per_mode_text(self) -> str:
        """`balanced 40 (31.20 ms/frame), power_save 20 (12.05 ms/frame)`."""
        return ", ".join(f"{m} {n}" + (f" ({self.ms_per_mode[m]:.2f} ms/frame)" if m in self.ms_per_mode else "")
                         for m, n in self.frames_per_mode.items())

    def rates(self) -> dict[str, float | None]:
        c = self.clock
        return {
            "end_to_end": rate(self.frames, c.end_to_end),
            "frame_loop": rate(self.frames, c.loop_end - c.loop_start),
            "pipeline": rate(self.frames, c.pipeline_seconds),
        }

    def threads_line(self) -> str:
        t = self.threads
        if not t:
            return "threads: not sampled"
        blas = "BLAS not loaded" if t.get("blas") is None else f"BLAS {t['blas']} ({t.get('blas_library')})"
        workers = f"{self.workers} frame worker{'s' if self.workers != 1 else ''}" if self.parallel else "1 frame at a time"
        return f"threads: {workers}; each with OpenCV {t.get('opencv')}, {blas}"

    def text(self) -> str:
        """The throughput lines: three labelled rates, then the threads."""
        c, r = self.clock, self.rates()
        loop = c.loop_end - c.loop_start
        startup = c.compile_start - c.origin
        rest = c.loop_start - c.compile_end
        finish = c.outputs_closed - c.loop_end
        pipeline_how = (
            "wall-clock of the frame-parallel run, output writing excluded" if self.parallel
            else "inside the pipeline: decode and output writing excluded"
        )
        n = max(self.frames, 1)
        lines = [
            f"throughput ({self.frames} frame{'s' if self.frames != 1 else ''}):",
            f"  end to end  {_fps(r['end_to_end']):>7} frames/s  {c.end_to_end:.2f} s from {c.since} to every output "
            f"written: start-up {startup:.2f} s, compile {c.compile_end - c.compile_start:.2f} s"
            + (f", other set-up {rest:.2f} s" if rest >= 0.005 else "")
            + f", frames {loop:.2f} s, closing outputs {finish:.2f} s",
            f"  frame loop  {_fps(r['frame_loop']):>7} frames/s  {1e3 * loop / n:.2f} ms/frame: decode -> pipeline -> "
            "outputs written (the progress bar's rate)",
            f"  pipeline    {_fps(r['pipeline']):>7} frames/s  {1e3 * c.pipeline_seconds / n:.2f} ms/frame: {pipeline_how}",
            f"  {self.threads_line()}",
        ] + ([f"  {self.memory}"] if self.memory else [])
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        """The summary as plain JSON values (`--summary-json`)."""
        c = self.clock
        data: dict[str, Any] = {
            "video": self.video,
            "size": list(self.size),
            "padded_size": list(self.padded),
            "frames": self.frames,
            "mode": self.mode,
            "frames_per_mode": dict(self.frames_per_mode),
            "ms_per_frame_per_mode": dict(self.ms_per_mode),
            "backend": self.backend,
            "engine": self.engine,
            "workers": self.workers,
            "skipped_by_blur_gate": self.skipped,
            "blur_threshold": self.blur_threshold,
            "frames_per_second": self.rates(),
            "seconds": {
                "end_to_end": c.end_to_end,
                "startup": c.compile_start - c.origin,
            "since": c.since,
                "compile": c.compile_end - c.compile_start,
                "frame_loop": c.loop_end - c.loop_start,
                "closing_outputs": c.outputs_closed - c.loop_end,
                "pipeline": c.pipeline_seconds,
            },
            "threads": dict(self.threads),
            "memory": self.memory,
            "outputs": dict(self.outputs),
            "native": list(self.native),
            "status": finished_status(self.warnings),
            "warnings": list(self.warnings),
        }
        if self.live is not None:
            data["live"] = self.live.to_json()
        if self.stages is not None:
            data["stages_ms_per_frame"] = {
                name: {"kind": s.kind, "ms_per_frame": 1e3 * s.seconds / max(self.frames, 1),
                       "cpu_ms_per_frame": None if s.cpu_seconds is None else 1e3 * s.cpu_seconds / max(self.frames, 1)}
                for name, s in self.stages.stages.items()
            }
        return data


__all__ = ["RunClock", "RunSummary", "library_threads", "process_start", "rate"]
