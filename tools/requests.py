"""cortex-run's request types: which mode each frame runs in.

Three ways, each a `ModePicker` (`mode_for(index)` before a frame, `observe(mode, seconds)` after it):

- `--mode NAME`: every frame in that mode (`FixedMode`);
- `--mode-schedule FILE`: change points, one per line, as JSON lines `{"frame": 120, "mode": "power_save"}`
  or CSV `120,power_save` (a `frame,mode` header allowed); frames before the first point run in the first
  compiled mode (`Schedule`). The whole file is checked before any frame runs: a line that does not
  parse, an unknown mode or frames not in increasing order is an error naming the file and the line;
- `--mode auto --target-fps F`: a `Governor` picks per frame the richest mode whose expected time holds
  the target rate.

The governor's expected time of a mode: the compiled program's profile gives each source op's time
(seconds per frame, from the frames that ran it) and each variant's ops (`ModeSwitch.stage_labels`), so
a mode not yet run is priced by the ops it keeps; the measured wall time of each frame corrects that
(an exponential average of measured/profiled: the current mode's own, and over every frame for the
others, so a machine that got busier or quieter moves every mode's price).
Hysteresis: it steps down at once when the current mode's expected time exceeds the frame budget,
and up only to a mode expected within `headroom` of the budget, after `hold` frames in the current
mode — so it does not flap between two modes either side of the budget. A mode's first frame
(`warmup`) is not counted: it pays one-off set-up (buffers allocated, caches cold). It is a pure object: tests
feed it synthetic times.
"""

from __future__ import annotations

import collections
import csv
import io
import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cortex.errors import CortexError


class FixedMode:
    """Every frame in one mode."""

    def __init__(self, mode: str):
        self.mode = mode

    def mode_for(self, index: int) -> str:
        return self.mode

    def observe(self, mode: str, seconds: float) -> None:
        pass

    def describe(self) -> str:
        return f"mode {self.mode}"


@dataclass
class Schedule:
    """Change points (frame, mode), increasing; frames before the first run in `default`."""

    points: list[tuple[int, str]]
    default: str
    source: str = "the schedule"

    def mode_for(self, index: int) -> str:
        mode = self.default
        for frame, m in self.points:  # few change points: a scan is plenty
            if frame > index:
                break
            mode = m
        return mode

    def observe(self, mode: str, seconds: float) -> None:
        pass

    def describe(self) -> str:
        return f"modes from {self.source} ({len(self.points)} change points)"


def read_schedule(path: str | Path, modes: Sequence[str]) -> Schedule:
    """The change points of `path` (JSON lines, or CSV when the file name ends in .csv), every line checked."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise CortexError(f"--mode-schedule {path}: cannot read it: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CortexError(f"--mode-schedule {path}: not UTF-8 text (byte {e.start})") from None
    rows = _csv_rows(text) if path.suffix.lower() == ".csv" else _jsonl_rows(text)
    points: list[tuple[int, str]] = []
    for line, frame, mode in rows:
        where = f"--mode-schedule {path}:{line}"
        if isinstance(frame, str):
            raise CortexError(f"{where}: {frame}")
        if mode not in modes:
            raise CortexError(f"{where}: unknown mode {mode!r:.60} (compiled modes: {', '.join(modes)})")
        if points and frame <= points[-1][0]:
            raise CortexError(f"{where}: frame {frame} is not after frame {points[-1][0]} (change points go in frame order)")
        points.append((frame, str(mode)))
    if not points:
        raise CortexError(f"--mode-schedule {path}: no change point (lines like {{\"frame\": 0, \"mode\": \"{modes[0]}\"}})")
    return Schedule(points, modes[0], str(path))


def _frame_number(value: object) -> int | str:
    """A frame number, or the message saying why `value` is not one."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().isdigit():
            return int(value.strip())
        return f"frame must be a whole number >= 0, got {value!r:.40}"
    return value if value >= 0 else f"frame must be a whole number >= 0, got {value}"


def _jsonl_rows(text: str) -> list[tuple[int, int | str, object]]:
    rows: list[tuple[int, int | str, object]] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError as e:
            rows.append((number, f"not a JSON object ({e.msg})", None))
            continue
        if not isinstance(doc, dict) or set(doc) != {"frame", "mode"}:
            rows.append((number, 'each line is {"frame": N, "mode": "NAME"}', None))
            continue
        rows.append((number, _frame_number(doc["frame"]), doc["mode"]))
    return rows


def _csv_rows(text: str) -> list[tuple[int, int | str, object]]:
    rows: list[tuple[int, int | str, object]] = []
    for number, cells in enumerate(csv.reader(io.StringIO(text)), 1):
        cells = [c.strip() for c in cells]
        if not cells or not any(cells) or (number == 1 and [c.lower() for c in cells] == ["frame", "mode"]):
            continue
        if len(cells) != 2:
            rows.append((number, f"each line is frame,mode (got {len(cells)} fields)", None))
            continue
        rows.append((number, _frame_number(cells[0]), cells[1]))
    return rows


@dataclass
class Governor:
    """Picks per frame the richest mode that holds `target_fps` (see the module doc).

    `modes`: richest first. `profile_ms`: source op → ms per frame (what the profile measured so far);
    `stages`: mode → the source ops its variant runs.
    """

    modes: Sequence[str]
    target_fps: float
    stages: Mapping[str, frozenset[str]] = field(default_factory=dict)
    headroom: float = 0.85  # step up only to a mode expected within this share of the budget
    hold: int = 8  # frames in a mode before stepping up again
    smoothing: float = 0.3  # the weight of the newest measurement in the averages
    warmup: int = 1  # a mode's first frames measured are not counted: they pay one-off set-up (buffers, caches)
    profile_ms: dict[str, float] = field(default_factory=dict)
    current: str = ""
    switches: int = 0
    _since: int = 0
    _measured: dict[str, float] = field(default_factory=dict)  # mode -> averaged wall ms
    _correction: dict[str, float] = field(default_factory=dict)  # mode -> averaged measured / profiled
    _load: float | None = None  # measured / profiled averaged over every frame: how loaded the machine is now
    _seen: dict[str, int] = field(default_factory=dict)  # frames observed per mode

    def __post_init__(self) -> None:
        if not self.modes:
            raise CortexError("the governor needs at least one mode")
        if not self.target_fps > 0:
            raise CortexError(f"--target-fps must be a number > 0, got {self.target_fps}")
        self.current = self.current or self.modes[0]
        self.budget_ms = 1e3 / self.target_fps

    def profiled_ms(self, mode: str) -> float | None:
        """The profile's price of `mode`: the ms of the ops its variant runs (None: not all measured yet)."""
        ops = self.stages.get(mode)
        if not ops or not self.profile_ms or any(op not in self.profile_ms for op in ops):
            return None
        return sum(self.profile_ms[op] for op in ops)

    def expected_ms(self, mode: str) -> float | None:
        """What a frame in `mode` is expected to take: the profile's price corrected by measured times."""
        profiled = self.profiled_ms(mode)
        if profiled is not None:
            correction = self._correction.get(mode) if mode == self.current else None
            if correction is None:
                correction = self._load
            return profiled * (correction if correction is not None else 1.0)
        return self._measured.get(mode)

    def mode_for(self, index: int) -> str:
        current = self.current
        spent = self.expected_ms(current)
        position = self.modes.index(current)
        if spent is not None and spent > self.budget_ms and position + 1 < len(self.modes):
            chosen = self._fitting(position + 1, self.budget_ms) or self.modes[-1]
        elif self._since >= self.hold and position > 0:
            chosen = self._fitting(0, self.headroom * self.budget_ms, stop=position) or current
        else:
            chosen = current
        if chosen != current:
            self.current, self._since = chosen, 0
            self.switches += 1
            if self._load is not None:  # its own correction is from when it last ran: start from the load now
                self._correction[chosen] = self._load
        return self.current

    def _fitting(self, start: int, limit: float, stop: int | None = None) -> str | None:
        """The richest mode from `start` (before `stop`) expected within `limit` ms (unknown: not chosen)."""
        for mode in self.modes[start:stop]:
            expected = self.expected_ms(mode)
            if expected is not None and expected <= limit:
                return mode
        return None

    def observe(self, mode: str, seconds: float, profile_ms: Mapping[str, float] | None = None) -> None:
        """A frame of `mode` took `seconds` (wall); `profile_ms`: the profile's per-op ms so far, if it moved."""
        if mode == self.current:
            self._since += 1
        seen = self._seen[mode] = self._seen.get(mode, 0) + 1
        if seen <= self.warmup:
            return
        if profile_ms:
            self.profile_ms = dict(profile_ms)
        ms, a = 1e3 * seconds, self.smoothing
        self._measured[mode] = ms if mode not in self._measured else (1 - a) * self._measured[mode] + a * ms
        profiled = self.profiled_ms(mode)
        if profiled:
            ratio = ms / profiled
            old = self._correction.get(mode)
            self._correction[mode] = ratio if old is None else (1 - a) * old + a * ratio
            self._load = ratio if self._load is None else (1 - a) * self._load + a * ratio

    def describe(self) -> str:
        return f"mode auto (target {self.target_fps:g} fps: {', '.join(self.modes)}, richest first)"




# ---------------------------------------------------------------- cortex-run's side


@dataclass
class RequestPlan:
    """What cortex-run compiles and how it picks each frame's mode (`plan_requests`)."""

    modes: tuple[str, ...] | None  # the variants to compile; None: a single-mode program
    picker: FixedMode | Schedule | Governor | None  # None until the governor knows the variants' stages
    label: str  # the run's mode in the summary: a mode, "auto" or "schedule"
    default: str  # the first compiled mode: what the DCE line and the weight checks name
    target_fps: float | None = None


def parse_modes(text: str | None, known: Sequence[str]) -> tuple[str, ...] | None:
    """`--modes`: "all" or comma-separated names, each known."""
    if text is None:
        return None
    names = tuple(known) if text.strip() == "all" else tuple(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    if not names:
        raise CortexError("--modes names no mode (give 'all' or names like balanced,power_save)")
    for m in names:
        if m not in known:
            raise CortexError(f"--modes: unknown mode {m!r:.60} (known: {', '.join(known)})")
    return names


def plan_requests(mode: str, modes: str | None, schedule: str | None, target_fps: float | None,
                  known: Sequence[str]) -> RequestPlan:
    """cortex-run's `--mode`, `--modes`, `--mode-schedule` and `--target-fps`, checked (a schedule's every line
    too) before any frame runs."""
    compiled = parse_modes(modes, known)
    if target_fps is not None and mode != "auto":
        raise CortexError("--target-fps is the governor's: it needs --mode auto")
    if schedule is not None:
        if mode == "auto":
            raise CortexError("--mode-schedule and --mode auto both pick the frames' modes: give one")
        read = read_schedule(schedule, compiled or known)
        default = mode if compiled is None or mode in compiled else compiled[0]
        if default not in known:
            raise CortexError(f"unknown mode '{default}' (known: {', '.join(known)})")
        compiled = compiled or tuple(dict.fromkeys([default, *(m for _, m in read.points)]))
        return RequestPlan(compiled, Schedule(read.points, default, read.source), "schedule", default)
    if mode == "auto":
        if target_fps is None:
            raise CortexError("--mode auto needs --target-fps F (the rate the governor holds)")
        compiled = compiled or tuple(known)
        return RequestPlan(compiled, None, "auto", compiled[0], target_fps)
    if mode not in known:
        raise CortexError(f"unknown mode '{mode}' (known: {', '.join(sorted(known))})")
    if compiled is not None and mode not in compiled:
        raise CortexError(f"--mode {mode} is not among --modes {','.join(compiled)}")
    return RequestPlan(compiled, FixedMode(mode) if compiled else None, mode, mode)


def plan_from_args(args: Any, known: Sequence[str]) -> RequestPlan:
    """`plan_requests` for cortex-run's arguments, set as `args.requests`; `args.mode` becomes the first
    compiled mode (what the weight checks and the DCE line name). Idempotent: a batch checks twice."""
    requested = getattr(args, "requested_mode", None) or args.mode
    args.requested_mode = requested
    args.requests = plan_requests(requested, args.modes, args.mode_schedule, args.target_fps, known)
    args.mode = args.requests.default
    if args.requests.modes is not None and args.passes and args.runner != "reference":
        raise CortexError("--passes replaces the mode specialisation, so a compiled backend cannot build a variant "
                          "per mode with it: drop --passes, or run one mode")
    if requested == "auto":  # each frame's mode follows the frames before it: one frame at a time
        if (args.workers or 1) > 1 or args.engine != "threads":
            raise CortexError("--mode auto picks each frame's mode from the frames before it: it runs frame after "
                              "frame (drop --workers/--engine)")
        args.workers = 1
    return args.requests


class ModedRun:
    """A frame runner of a multi-mode program (`frame_runners.make_runner(..., modes=)`) called as cortex-run
    calls one, `run(frame)`: each frame in the mode `picker` says, its outputs' rows naming it
    (`outputs.mode`, once `outputs` is set), the governor fed each frame's time and the profile."""

    def __init__(self, backend: Any, plan: RequestPlan):
        self.backend, self.plan = backend, plan
        self.outputs: Any = None
        self.frames_per_mode: collections.Counter[str] = collections.Counter()
        self.seconds_per_mode: dict[str, float] = collections.defaultdict(float)  # frame after frame only
        self.count = 0
        switch: Any = getattr(backend, "compiled", None) or getattr(backend, "runner", None)
        self.switch = switch
        if plan.picker is None:  # the governor: richest (most source ops kept) first
            assert plan.modes is not None and plan.target_fps is not None
            stages = {m: switch.stage_labels(m) for m in plan.modes} if hasattr(switch, "stage_labels") else {}
            order = sorted(plan.modes, key=lambda m: -len(stages.get(m, ())))
            plan.picker = Governor(order, plan.target_fps, stages={m: s for m, s in stages.items() if s})
        self.picker = plan.picker

    def __call__(self, frame: Any) -> Any:
        mode = self.picker.mode_for(self.count)
        start = time.perf_counter()
        results = self.backend(frame, mode=mode)
        seconds = time.perf_counter() - start
        self.count += 1
        self.frames_per_mode[mode] += 1
        self.seconds_per_mode[mode] += seconds
        if self.outputs is not None:
            self.outputs.mode = mode
        if isinstance(self.picker, Governor):
            self.picker.observe(mode, seconds, self.profile_ms())
        return results

    def profile_ms(self) -> dict[str, float]:
        """Each source op's ms per frame, from the frames of the modes that ran it."""
        runners = getattr(self.switch, "runners", {})
        if not all(hasattr(r, "profile") for r in runners.values()):
            return {}  # interpreters: the governor goes by measured frame times alone
        out: dict[str, float] = {}
        for profile in self.switch.profiles().values():
            if profile.frames:
                out.update(profile.per_frame_ms())
        return out

    @property
    def compiled(self) -> Any:
        """For the frame-parallel runner: the program, its `run_video` given the schedule's modes."""
        compiled = getattr(self.backend, "compiled", None)
        return None if compiled is None else _ScheduledVideo(compiled, self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self.backend, name)


class _ScheduledVideo:
    """A multi-mode pipeline whose `run_video` takes its modes from a `ModedRun`'s schedule."""

    def __init__(self, compiled: Any, run: ModedRun):
        self._compiled, self._run = compiled, run

    def run_video(self, frames: Any, **options: Any) -> Any:
        picker = self._run.picker
        if isinstance(picker, Governor):
            raise CortexError("--mode auto picks each frame's mode from the frames before it: it runs frame after "
                              "frame (drop --workers/--engine)")
        return self._rows(self._compiled.run_video(frames, modes=picker.mode_for, **options), picker)

    def _rows(self, outputs: Any, picker: FixedMode | Schedule) -> Any:
        for index, results in enumerate(outputs):
            mode = picker.mode_for(index)
            self._run.frames_per_mode[mode] += 1
            if self._run.outputs is not None:
                self._run.outputs.mode = mode
            yield results

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._compiled, name)


__all__ = ["FixedMode", "Governor", "ModedRun", "plan_from_args", "Governor", "RequestPlan", "Schedule", "parse_modes", "plan_requests", "read_schedule"]
