"""Time per source op of a running program: the timers generated code enters, and the report.

A profiled NumPy executable wraps the statements of each cortex op in
`with _p_<op>:` (a `Section` of the module's `Profiler`); the plain one has
no hooks at all. `ConcurrentSection` replaces them when several threads run
one loaded module (the frame-parallel engine's per-stage table).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping


class Section:
    """One source op's timer: `with section:` adds the elapsed wall-clock time and the CPU time of the
    thread that ran it (`time.thread_time`: the library threads OpenCV or BLAS start are not in it)."""

    __slots__ = ("label", "seconds", "cpu_seconds", "count", "_start", "_cpu")

    def __init__(self, label: str):
        self.label, self.seconds, self.cpu_seconds, self.count, self._start, self._cpu = label, 0.0, 0.0, 0, 0.0, 0.0

    def __enter__(self) -> None:
        self._start, self._cpu = time.perf_counter(), time.thread_time()

    def __exit__(self, *exc: object) -> None:
        self.seconds += time.perf_counter() - self._start
        self.cpu_seconds += time.thread_time() - self._cpu
        self.count += 1


class ConcurrentSection:
    """A section several threads may be inside at once: wall-clock and thread CPU time per stage."""

    __slots__ = ("_local", "_lock", "count", "cpu_seconds", "label", "seconds")

    def __init__(self, label: str):
        self.label, self.seconds, self.cpu_seconds, self.count = label, 0.0, 0.0, 0
        self._local, self._lock = threading.local(), threading.Lock()

    def __enter__(self) -> None:
        self._local.start = (time.perf_counter(), time.thread_time())

    def __exit__(self, *exc: object) -> None:
        wall, cpu = self._local.start
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        with self._lock:
            self.seconds += wall
            self.cpu_seconds += cpu
            self.count += 1


class Profiler:
    """The timers of one profiled module (one per source op label)."""

    def __init__(self) -> None:
        self.sections: dict[str, Section] = {}

    def section(self, label: str) -> Section:
        return self.sections.setdefault(label, Section(label))

    def reset(self) -> None:
        for s in self.sections.values():
            s.seconds, s.cpu_seconds, s.count = 0.0, 0.0, 0


def split_fused(seconds: Mapping[str, float]) -> dict[str, float]:
    """Time of a fused section ("a+b+c", see cortex-fuse-linalg-elementwise) shared equally by its source ops."""
    out: dict[str, float] = {}
    for label, value in seconds.items():
        names = label.split("+")
        for name in names:
            out[name] = out.get(name, 0.0) + value / len(names)
    return out


PROFILING_OFF = (
    "profiling is off: set compiled.profiling = True (or cortex.load(path, profile=True)) before running frames"
)


class Profile(dict):
    """Seconds spent per source op (cortex.origin) over `frames` profiled calls, wall-clock; `cpu`: the same
    ops' thread CPU seconds (see `Section`), where the timers took them.

    Empty with a `note` saying how to turn profiling on when it was off.
    """

    def __init__(self, seconds: Mapping[str, float], frames: int, note: str | None = None,
                 cpu: Mapping[str, float] | None = None):
        super().__init__(seconds)
        self.frames = frames
        self.note = note
        self.cpu = dict(cpu or {})

    def per_frame_ms(self) -> dict[str, float]:
        return {k: 1000.0 * v / max(self.frames, 1) for k, v in self.items()}

    def table(self) -> str:
        if self.note and not self:
            return self.note
        rows = sorted(self.per_frame_ms().items(), key=lambda kv: -kv[1])
        width = max([len(k) for k, _ in rows] + [5])
        lines = [f"{'op':<{width}}  ms/frame   ({self.frames} frames)"]
        lines += [f"{k:<{width}}  {v:8.3f}" for k, v in rows]
        lines.append(f"{'total':<{width}}  {sum(v for _, v in rows):8.3f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


__all__ = ["PROFILING_OFF", "ConcurrentSection", "Profile", "Profiler", "Section", "split_fused"]
