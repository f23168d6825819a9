"""A test that hangs fails by name, and the run goes on: the suite's time limits (pyproject's pytest options).

Each test runs a small inner pytest with the project's own configuration (`-c pyproject.toml`), its limits
shortened to seconds so the check is quick; what the configuration decides (pytest-timeout on, its method,
faulthandler's exit) is what the outer suite relies on."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

HANGS = '''import ctypes
import threading


def test_waits_for_an_event_nobody_sets():
    threading.Event().wait()


def test_deadlocks_in_c_with_the_gil_held():
    lock = ctypes.PyDLL(None).pthread_mutex_lock  # PyDLL: the GIL stays held during the call
    mutex = ctypes.create_string_buffer(64)  # zeroed: an unlocked default mutex
    lock(mutex)
    lock(mutex)


def test_after_the_hangs():
    pass
'''


def pytest_options() -> dict:
    import tomllib

    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]


def inner_run(tmp_path: Path, selected: str, *options: str) -> subprocess.CompletedProcess:
    """The inner pytest over `HANGS`' tests matching `selected`, with the project's configuration; every
    limit of its own is far longer than the inner limits, so a guard that does not work fails here by name."""
    (tmp_path / "test_child.py").write_text(HANGS)
    cmd = [sys.executable, "-m", "pytest", "-c", str(ROOT / "pyproject.toml"), "--rootdir", str(tmp_path),
           "-p", "no:cacheprovider", "-q", "-k", selected, *options, str(tmp_path / "test_child.py")]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=240)


def test_the_suite_gives_every_test_a_generous_limit_that_fails_it():
    options = pytest_options()
    assert 60 <= options["timeout"] < options["faulthandler_timeout"]
    assert options.get("timeout_method", "signal") == "signal"  # a failure of the test; the run goes on
    assert options["faulthandler_exit_on_timeout"] is True


def test_a_test_that_waits_forever_fails_by_name_and_the_next_one_runs(tmp_path):
    done = inner_run(tmp_path, "nobody_sets or after_the_hangs", "-p", "no:xdist", "-o", "timeout=1")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "FAILED test_child.py::test_waits_for_an_event_nobody_sets - Failed: Timeout" in out, out
    assert "1 failed, 1 passed" in out, out


@pytest.mark.slow
def test_an_xdist_worker_hung_in_c_with_the_gil_held_is_reported_by_test(tmp_path):
    done = inner_run(tmp_path, "test_", "-n", "1", "-o", "timeout=1", "-o", "faulthandler_timeout=3")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert "FAILED test_child.py::test_waits_for_an_event_nobody_sets - Failed: Timeout" in out, out
    assert "worker 'gw0' crashed while running 'test_child.py::test_deadlocks_in_c_with_the_gil_held'" in out, out
    assert "2 failed, 1 passed" in out, out
