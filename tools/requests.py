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
mode — so it does not flap between two modes either side of the budget. It is a pure object: tests
feed it synthetic times.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

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
    profile_ms: dict[str, float] = field(default_factory=dict)
    current: str = ""
    switches: int = 0
    _since: int = 0
    _measured: dict[str, float] = field(default_factory=dict)  # mode -> averaged wall ms
    _correction: dict[str, float] = field(default_factory=dict)  # mode -> averaged measured / profiled
    _load: float | None = None  # measured / profiled averaged over every frame: how loaded the machine is now

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
        if mode == self.current:
            self._since += 1

    def describe(self) -> str:
        return f"mode auto (target {self.target_fps:g} fps: {', '.join(self.modes)}, richest first)"


__all__ = ["FixedMode", "Governor", "Schedule", "read_schedule"]
