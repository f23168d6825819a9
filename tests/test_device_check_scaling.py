"""scripts/device_check.py's scaling table (threads, processes and Ray, where installed, for each worker
count): its formatting, and a tiny run through the real engines that checks every run against the
sequential one."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from helpers.pipelines import SMALL

pytestmark = pytest.mark.xdist_group("processes")  # one worker: the shared-memory checks see every block

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.fixture(scope="module")
def device_check():
    spec = importlib.util.spec_from_file_location("device_check_scaling", SCRIPTS / "device_check.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["device_check_scaling"] = module
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop("device_check_scaling", None)


def test_the_table_has_a_row_per_count_and_each_engines_speed_up(device_check):
    rates = {1: {"threads": 10.0, "processes": 8.0}, 2: {"threads": 18.0, "processes": 16.0}, 16: {"threads": 80.0}}
    equal = {1: {"threads": True, "processes": True}, 2: {"threads": True, "processes": False}, 16: {"threads": True}}
    lines = device_check.scaling_lines(rates, equal, {"ray": "not installed here"})
    assert lines[0].split() == ["workers", "threads", "f/s", "speed-up", "eff", "eq", "processes", "f/s", "speed-up", "eff", "eq"]
    assert lines[1].split() == ["1", "10.0", "1.00x", "100%", "yes", "8.0", "1.00x", "100%", "yes"]
    assert lines[2].split() == ["2", "18.0", "1.80x", "90%", "yes", "16.0", "2.00x", "100%", "NO"]
    assert lines[3].split() == ["16", "80.0", "8.00x", "50%", "yes", "-", "-", "-", "-"]
    assert lines[4] == "(ray: not installed here)"
    assert len({len(line) for line in lines[:4]}) == 1  # the columns line up


@pytest.mark.slow
def test_a_tiny_run_prints_the_table_and_every_run_equals_the_sequential_one(device_check, capsys):
    bad = device_check.scaling(quick=True, size=SMALL, counts=(1, 2), engines=("threads", "processes"))
    out = capsys.readouterr().out.splitlines()
    assert bad == 0
    table = out[out.index(next(line for line in out if line.lstrip().startswith("workers"))):]
    assert [row.split()[0] for row in table[1:3]] == ["1", "2"]
    assert all(row.split().count("yes") == 2 for row in table[1:3])
    caller = next(line for line in out if line.startswith("processes engine, the caller's CPU a frame: 1: "))
    assert ", 2: " in caller
    work = {line.split(" engine")[0]: line for line in out if "CPU a frame (all its processes): " in line}
    assert set(work) == {"threads", "processes"}
    for line in work.values():
        ms = [float(cell.split(": ")[1].split(" ms")[0]) for cell in line.split("processes): ")[1].split(", ")]
        assert len(ms) == 2 and all(v > 0 for v in ms)
    mine = float(caller.split("1: ")[1].split(" ms")[0])
    assert float(work["processes"].split("1: ")[1].split(" ms")[0]) > mine  # the workers' share counted
