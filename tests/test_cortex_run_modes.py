"""cortex-run follows request types: --modes, --mode-schedule (JSON lines or CSV change points) and --mode auto
--target-fps (the governor); every row names its mode, the summary and the report count frames per mode, and
a bad schedule is refused naming its line before any frame runs."""

from __future__ import annotations

import json

import pytest

from cortex.tools.cortex_run import main

SMALL = ("--size", "64x96", "--quiet", "--dce-frames", "0", "--no-frame-log")


def run_cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def rows(path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_schedule_is_followed_and_reported(capsys, tmp_path, workers):
    schedule = tmp_path / "modes.jsonl"
    schedule.write_text('{"frame": 2, "mode": "power_save"}\n{"frame": 5, "mode": "motion"}\n')
    jsonl, summary, report = tmp_path / "s.jsonl", tmp_path / "summary.json", tmp_path / "r.html"
    rc, out, err = run_cli(capsys, "--frames", 7, *SMALL, "--mode-schedule", schedule, "--workers", workers,
                           "--scores-jsonl", jsonl, "--summary-json", summary, "--report", report)
    assert rc == 0, err
    assert [r["mode"] for r in rows(jsonl)] == ["balanced"] * 2 + ["power_save"] * 3 + ["motion"] * 2
    data = json.loads(summary.read_text())
    assert data["mode"] == "schedule" and data["frames_per_mode"] == {"balanced": 2, "power_save": 3, "motion": 2}
    assert "per mode: balanced 2" in out and "power_save 3" in out
    assert "frames per mode</td><td>balanced 2" in report.read_text()


def test_csv_schedule_and_modes_list(capsys, tmp_path):
    schedule = tmp_path / "modes.csv"
    schedule.write_text("frame,mode\n0,motion\n3,power_save\n")
    jsonl = tmp_path / "s.jsonl"
    rc, _, err = run_cli(capsys, "--frames", 5, *SMALL, "--workers", "1", "--modes", "motion,power_save",
                         "--mode-schedule", schedule, "--scores-jsonl", jsonl)
    assert rc == 0, err
    assert [r["mode"] for r in rows(jsonl)] == ["motion"] * 3 + ["power_save"] * 2


def test_single_mode_rows_name_their_mode(capsys, tmp_path):
    jsonl = tmp_path / "s.jsonl"
    rc, out, err = run_cli(capsys, "--frames", 2, *SMALL, "--workers", "1", "--mode", "power_save", "--scores-jsonl", jsonl)
    assert rc == 0, err
    assert [r["mode"] for r in rows(jsonl)] == ["power_save"] * 2 and "per mode: power_save 2" in out


@pytest.mark.parametrize("text, message", [
    ('{"frame": 3, "mode": "power_save"}\n{"frame": 1, "mode": "motion"}\n', ":2: frame 1 is not after frame 3"),
    ('{"frame": 0, "mode": "turbo"}\n', ":1: unknown mode 'turbo'"),
    ('{"frame": 0, "mode": "motion"}\nnot json\n', ":2: not a JSON object"),
])
def test_bad_schedule_refused_before_any_frame(capsys, tmp_path, text, message):
    schedule = tmp_path / "modes.jsonl"
    schedule.write_text(text)
    jsonl = tmp_path / "s.jsonl"
    rc, _, err = run_cli(capsys, "--frames", 3, *SMALL, "--mode-schedule", schedule, "--scores-jsonl", jsonl)
    assert rc == 1 and f"error: --mode-schedule {schedule}{message}" in err
    assert not jsonl.exists()


def test_schedule_naming_a_mode_not_compiled(capsys, tmp_path):
    schedule = tmp_path / "modes.jsonl"
    schedule.write_text('{"frame": 1, "mode": "motion"}\n')
    rc, _, err = run_cli(capsys, "--frames", 3, *SMALL, "--modes", "balanced,power_save", "--mode-schedule", schedule)
    assert rc == 1 and ":1: unknown mode 'motion' (compiled modes: balanced, power_save)" in err


@pytest.mark.parametrize("argv, message", [
    (("--mode", "auto"), "--mode auto needs --target-fps F"),
    (("--target-fps", "20"), "--target-fps is the governor's: it needs --mode auto"),
    (("--modes", "balanced,turbo"), "--modes: unknown mode 'turbo'"),
    (("--mode", "motion", "--modes", "balanced,power_save"), "--mode motion is not among --modes balanced,power_save"),
    (("--mode", "turbo"), "unknown mode 'turbo'"),
    (("--modes", "all", "--passes", "canonicalize"), "--passes replaces the mode specialisation"),
])
def test_request_type_mistakes(capsys, argv, message):
    rc, _, err = run_cli(capsys, "--frames", 2, *SMALL, *argv)
    assert rc == 1 and message in err


def test_governor_with_workers_refused_before_any_frame(capsys, tmp_path):
    jsonl = tmp_path / "s.jsonl"
    rc, _, err = run_cli(capsys, "--frames", 3, *SMALL, "--mode", "auto", "--target-fps", "30", "--workers", "2",
                         "--scores-jsonl", jsonl)
    assert rc == 1 and "--mode auto picks each frame's mode from the frames before it" in err
    assert not jsonl.exists()


def test_governor_drops_to_a_cheaper_mode_when_the_target_is_out_of_reach(capsys, tmp_path):
    """A target no mode can hold (100000 fps): after the richest mode's measured frames, the cheapest."""
    jsonl, summary = tmp_path / "s.jsonl", tmp_path / "summary.json"
    rc, out, err = run_cli(capsys, "--frames", 8, *SMALL, "--mode", "auto", "--target-fps", "100000",
                           "--scores-jsonl", jsonl, "--summary-json", summary)
    assert rc == 0, err
    modes = [r["mode"] for r in rows(jsonl)]
    assert modes[0] == "balanced" and modes[-1] == "power_save"
    data = json.loads(summary.read_text())
    assert data["mode"] == "auto" and sum(data["frames_per_mode"].values()) == 8
    assert set(data["ms_per_frame_per_mode"]) == set(data["frames_per_mode"])


def test_governor_on_the_reference_interpreter_goes_by_measured_times(capsys, tmp_path):
    jsonl = tmp_path / "s.jsonl"
    rc, out, err = run_cli(capsys, "--frames", 3, *SMALL, "--runner", "reference", "--mode", "auto",
                           "--target-fps", "100000", "--scores-jsonl", jsonl)
    assert rc == 0, err
    assert len(rows(jsonl)) == 3 and "per mode:" in out
