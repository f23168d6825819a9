"""cortex-run's request types as pure objects: the mode schedule's file, checked whole, and the governor fed
synthetic frame times (no pipeline runs here)."""

from __future__ import annotations

import pytest

from cortex.errors import CortexError
from cortex.tools.requests import Governor, parse_modes, read_schedule

MODES = ("balanced", "power_save", "motion")


def schedule_file(tmp_path, text: str, name: str = "modes.jsonl"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_jsonl_schedule_change_points(tmp_path):
    path = schedule_file(tmp_path, '{"frame": 3, "mode": "power_save"}\n\n{"frame": 5, "mode": "motion"}\n')
    schedule = read_schedule(path, MODES)
    assert [schedule.mode_for(k) for k in range(7)] == ["balanced"] * 3 + ["power_save"] * 2 + ["motion"] * 2


def test_csv_schedule_with_header(tmp_path):
    path = schedule_file(tmp_path, "frame,mode\n0,motion\n2, power_save\n", "modes.csv")
    assert [read_schedule(path, MODES).mode_for(k) for k in range(4)] == ["motion", "motion", "power_save", "power_save"]


@pytest.mark.parametrize("text, message", [
    ('{"frame": 0, "mode": "balanced"}\n{"frame": 2, "mode": "turbo"}\n', r":2: unknown mode 'turbo' \(compiled modes"),
    ('{"frame": 4, "mode": "motion"}\n{"frame": 4, "mode": "balanced"}\n', r":2: frame 4 is not after frame 4"),
    ('{"frame": 0, "mode": "motion"}\n{"frame": 1, "mode": "balanced"\n', r":2: not a JSON object"),
    ('{"frame": -1, "mode": "motion"}\n', r":1: frame must be a whole number >= 0, got -1"),
    ('{"frame": 1.5, "mode": "motion"}\n', r":1: frame must be a whole number >= 0, got 1.5"),
    ('{"frame": 1, "mode": "motion", "x": 1}\n', r':1: each line is \{"frame": N, "mode": "NAME"\}'),
    ("\n", "no change point"),
])
def test_bad_schedules_name_the_line(tmp_path, text, message):
    path = schedule_file(tmp_path, text)
    with pytest.raises(CortexError, match=message) as e:
        read_schedule(path, MODES)
    assert str(path) in str(e.value)


def test_bad_csv_line_and_missing_file(tmp_path):
    with pytest.raises(CortexError, match=r"modes.csv:2: each line is frame,mode \(got 3 fields\)"):
        read_schedule(schedule_file(tmp_path, "0,motion\n1,motion,extra\n", "modes.csv"), MODES)
    with pytest.raises(CortexError, match="cannot read it"):
        read_schedule(tmp_path / "absent.jsonl", MODES)


# ---------------------------------------------------------------- the governor

STAGES = {"balanced": frozenset({"gray", "text", "saliency", "motion"}), "motion": frozenset({"gray", "text", "motion"}),
          "power_save": frozenset({"gray", "text"})}
PROFILE = {"gray": 1.0, "text": 10.0, "saliency": 20.0, "motion": 5.0}  # ms per frame, as profiled


def drive(governor: Governor, cost_ms, frames: int) -> list[str]:
    """Frames through the governor, each taking `cost_ms(mode, index)` ms of wall time."""
    picked = []
    for k in range(frames):
        mode = governor.mode_for(k)
        picked.append(mode)
        governor.observe(mode, cost_ms(mode, k) / 1e3, PROFILE)
    return picked


def test_governor_keeps_the_richest_mode_that_holds_the_rate():
    order = ("balanced", "motion", "power_save")
    profiled = {m: sum(PROFILE[s] for s in STAGES[m]) for m in order}  # 36, 16, 11 ms
    fast = Governor(order, target_fps=25, stages=STAGES, warmup=0)  # 40 ms budget: balanced fits
    assert set(drive(fast, lambda m, k: profiled[m], 30)) == {"balanced"}
    slow = Governor(order, target_fps=50, stages=STAGES, warmup=0)  # 20 ms budget: motion (16 ms) fits, balanced does not
    picked = drive(slow, lambda m, k: profiled[m], 30)
    assert picked[0] == "balanced" and set(picked[1:]) == {"motion"} and slow.switches == 1


def test_governor_corrects_the_profile_by_measured_times():
    """Frames take twice what the profile says. At 35 fps (28.6 ms) motion's profiled 16 ms would fit, its
    corrected 32 ms does not: from balanced (72 ms measured) the governor steps straight to power_save (22 ms)."""
    order = ("balanced", "motion", "power_save")
    governor = Governor(order, target_fps=35, stages=STAGES, warmup=0)
    picked = drive(governor, lambda m, k: 2 * sum(PROFILE[s] for s in STAGES[m]), 40)
    assert picked[0] == "balanced" and set(picked[1:]) == {"power_save"}
    assert governor.expected_ms("motion") == pytest.approx(32.0, rel=0.05)


def test_governor_hysteresis_does_not_flap():
    """A mode whose time hovers around the budget (38-42 ms at 40 ms): stepping up needs headroom, so after the
    first step down it stays down instead of switching every frame."""
    order = ("balanced", "power_save")
    stages = {"balanced": STAGES["balanced"], "power_save": STAGES["power_save"]}
    governor = Governor(order, target_fps=25, stages=stages, warmup=0)
    profile_balanced = sum(PROFILE[s] for s in stages["balanced"])

    def cost(mode, k):
        scale = (38.0 if k % 2 else 42.0) / profile_balanced
        return scale * sum(PROFILE[s] for s in stages[mode])
    picked = drive(governor, cost, 60)
    assert governor.switches <= 2, picked


def test_governor_steps_back_up_when_the_load_goes():
    """Three times the profile for 10 frames (another process busy), then the profile's times: at 20 fps (50 ms)
    it steps down to motion (48 ms), then back up to balanced (36 ms, within the headroom) once the load goes."""
    order = ("balanced", "motion", "power_save")
    governor = Governor(order, target_fps=20, stages=STAGES, hold=4, warmup=0)
    picked = drive(governor, lambda m, k: (3.0 if k < 10 else 1.0) * sum(PROFILE[s] for s in STAGES[m]), 60)
    assert picked[1:10] == ["motion"] * 9 and picked[-1] == "balanced" and governor.switches == 2


def test_governor_does_not_count_a_modes_first_frame():
    """A first frame ten times slower (buffers allocated): not a reason to leave the mode."""
    order = ("balanced", "motion", "power_save")
    governor = Governor(order, target_fps=25, stages=STAGES)
    picked = drive(governor, lambda m, k: (10.0 if k == 0 else 1.0) * sum(PROFILE[s] for s in STAGES[m]), 20)
    assert set(picked) == {"balanced"} and governor.switches == 0


def test_governor_rejects_a_bad_target():
    with pytest.raises(CortexError, match="--target-fps must be a number > 0"):
        Governor(MODES, target_fps=0)


def test_modes_list_names_each_mode_once_in_the_order_given():
    known = ("balanced", "power_save", "motion")
    assert parse_modes(" motion, balanced ,motion,, balanced", known) == ("motion", "balanced")
    assert parse_modes("all", known) == known and parse_modes(None, known) is None
    with pytest.raises(CortexError, match="unknown mode 'blurry'"):
        parse_modes("balanced,blurry", known)
    with pytest.raises(CortexError, match="names no mode"):
        parse_modes(" , ", known)


def test_governor_steps_up_after_exactly_hold_frames():
    """`hold` frames in the current mode, and the next frame may step up to a mode known to fit."""
    governor = Governor(("rich", "cheap"), target_fps=10, hold=3, warmup=0, current="cheap")
    governor.observe("rich", 0.05)  # 50 ms: within headroom × 100 ms
    picked = []
    for _ in range(4):
        picked.append(governor.mode_for(len(picked)))
        governor.observe(picked[-1], 0.01)
    assert picked == ["cheap", "cheap", "cheap", "rich"]
