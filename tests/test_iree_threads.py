"""`CORTEX_IREE_THREADS=N` runs an IREE-compiled program's calls on N threads (IREE's local-task driver
with N workers; 1: local-sync), with the same results; the count is IREE's once per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime import iree_runtime  # noqa: E402


@pytest.mark.parametrize("threads, expected", [("1", ("local-sync", None)), ("2", ("local-task", 2)), ("16", ("local-task", 16))])
def test_thread_count_picks_the_driver(monkeypatch, threads, expected):
    monkeypatch.setenv("CORTEX_IREE_THREADS", threads)
    monkeypatch.setenv("CORTEX_IREE_DRIVER", "local-sync")  # the thread count wins
    assert iree_runtime.cpu_driver("local-sync") == expected


@pytest.mark.parametrize("threads", ["0", "-2", "two", "1.5"])
def test_a_bad_thread_count_is_refused_by_name(monkeypatch, threads):
    monkeypatch.setenv("CORTEX_IREE_THREADS", threads)
    with pytest.raises(CortexError, match=f"CORTEX_IREE_THREADS='{threads}' is not a thread count"):
        iree_runtime.cpu_driver("local-sync")


def test_without_a_count_the_driver_variable_or_the_default(monkeypatch):
    monkeypatch.delenv("CORTEX_IREE_THREADS", raising=False)
    monkeypatch.setenv("CORTEX_IREE_DRIVER", "local-task")
    assert iree_runtime.cpu_driver("local-sync") == ("local-task", None)
    monkeypatch.setenv("CORTEX_IREE_DRIVER", "bogus")
    assert iree_runtime.cpu_driver("local-sync") == ("local-sync", None)


def test_a_second_worker_count_in_one_process_is_refused(monkeypatch):
    parsed: list[str] = []
    monkeypatch.setattr(iree_runtime, "_TASK_WORKERS", [])

    class Flags:
        @staticmethod
        def parse_flags(*flags):
            parsed.extend(flags)

    class Runtime:
        flags = Flags

    iree_runtime._task_workers(Runtime, 3)
    iree_runtime._task_workers(Runtime, 3)  # the same count again: fine
    assert parsed == ["--task_topology_max_group_count=3"]
    with pytest.raises(CortexError, match="runs 3 worker"):
        iree_runtime._task_workers(Runtime, 2)


RUN = """
import os, numpy as np, cortex
from cortex.frontends.onnx_models import mlp, sample_input
model = mlp(sizes=(48, 64, 10), batch=2)
x = sample_input(model)
(got,) = cortex.compile(cortex.from_onnx(model), backend="iree")(x)
(want,) = cortex.compile(cortex.from_onnx(model))(x)
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(sum(n.startswith("iree-worker") for n in names))
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_calls_run_on_that_many_iree_workers(tmp_path, threads):
    """In a fresh process (the count is per process): the results of the NumPy backend, on `threads` threads
    (IREE makes no more workers than the CPU has cores)."""
    env = dict(os.environ, CORTEX_IREE_THREADS=threads, CORTEX_IREE_CACHE=str(tmp_path),
               CORTEX_IREE_MIN_INTENSITY="0", CORTEX_IREE_MIN_WORK="0")
    done = subprocess.run([sys.executable, "-c", RUN], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    workers = int(done.stdout.split()[-1])
    assert workers == (0 if threads == "1" else min(int(threads), os.cpu_count() or 1))
