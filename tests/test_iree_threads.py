"""`compiled.iree_threads = N` (a runtime setting of the loaded program), or `CORTEX_IREE_THREADS=N`, runs an
IREE-compiled program's calls on N threads (IREE's local-task driver with N workers; 1: local-sync), with the
same results; the count is IREE's once per process."""

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


def test_the_program_s_setting_wins_over_the_variable(monkeypatch):
    monkeypatch.setenv("CORTEX_IREE_THREADS", "2")
    assert iree_runtime.cpu_driver("local-sync", 1) == ("local-sync", None)
    assert iree_runtime.cpu_driver("local-sync", 3) == ("local-task", 3)
    monkeypatch.setenv("CORTEX_IREE_THREADS", "bogus")  # not read when the program says
    assert iree_runtime.cpu_driver("local-sync", 2) == ("local-task", 2)


def test_the_setting_reaches_the_loader(monkeypatch):
    """`load_executable(..., threads=N)` is what an IREE executable's driver is chosen with, during that load only."""
    from cortex.runtime import executables, iree_executable
    from cortex.runtime.program import Executable

    monkeypatch.delenv("CORTEX_IREE_THREADS", raising=False)
    monkeypatch.delenv("CORTEX_IREE_DRIVER", raising=False)
    exe = Executable("iree", {}, {}, {"driver": "local-sync"})
    seen = []
    monkeypatch.setitem(executables._LOADERS, "iree", lambda e, profile: seen.append(iree_executable.driver_for(e)))
    executables.load_executable(exe, threads=4)
    executables.load_executable(exe)
    assert seen == [("local-task", 4), ("local-sync", None)]


@pytest.mark.parametrize("bad", [0, -1, 2.5, "2"])
def test_a_bad_setting_is_refused_by_name(bad):
    import cortex
    from cortex.frontends.onnx_models import mlp

    compiled = cortex.compile(cortex.from_onnx(mlp(sizes=(8, 4), batch=1)))
    with pytest.raises(CortexError, match="iree_threads"):
        compiled.iree_threads = bad
    assert compiled.iree_threads is None


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
import os, sys, numpy as np, cortex
from cortex.frontends.onnx_models import mlp, sample_input
model = mlp(sizes=(48, 64, 10), batch=2)
x = sample_input(model)
compiled = cortex.compile(cortex.from_onnx(model), backend="iree")
if sys.argv[1] != "-":
    compiled.iree_threads = int(sys.argv[1])
(got,) = compiled(x)
(want,) = cortex.compile(cortex.from_onnx(model))(x)
np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
names = [open(f"/proc/self/task/{t}/comm").read().strip() for t in os.listdir("/proc/self/task")]
print(sum(n.startswith("iree-worker") for n in names))
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
@pytest.mark.parametrize("how", ["variable", "setting"])
@pytest.mark.parametrize("threads", ["1", "2"])
def test_calls_run_on_that_many_iree_workers(tmp_path, threads, how):
    """In a fresh process (the count is per process): the results of the NumPy backend, on `threads` threads
    (IREE makes no more workers than the CPU has cores), asked for by the variable or by the setting."""
    env = dict(os.environ, CORTEX_IREE_CACHE=str(tmp_path), CORTEX_IREE_MIN_INTENSITY="0", CORTEX_IREE_MIN_WORK="0")
    env.pop("CORTEX_IREE_THREADS", None)
    if how == "variable":
        env["CORTEX_IREE_THREADS"] = threads
    done = subprocess.run([sys.executable, "-c", RUN, threads if how == "setting" else "-"], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    workers = int(done.stdout.split()[-1])
    assert workers == (0 if threads == "1" else min(int(threads), os.cpu_count() or 1))


def test_every_mode_and_every_shape_gets_the_setting():
    """A multi-mode program sets it on every mode's runner; a shape-generic one on every shape's program, the
    ones compiled later too (NumPy-backend programs: stored, no effect on the results)."""
    import numpy as np
    from onnx import TensorProto, helper

    import cortex
    from cortex.examples import L2_PIPELINE

    every = cortex.compile(L2_PIPELINE, modes="all").specialize((96, 128, 3))
    every.iree_threads = 2
    assert every.iree_threads == 2 and {r.iree_threads for r in every.runners.values()} == {2}
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4])])
    generic = cortex.compile(cortex.from_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])))
    generic(np.ones((1, 4), np.float32))
    generic.iree_threads = 3
    generic(np.ones((2, 4), np.float32))  # a shape compiled after the setting
    assert generic.iree_threads == 3 and len(generic.compiled_shapes) == 2
    assert {p.iree_threads for p in generic._programs.values()} == {3}


def test_a_new_thread_count_keeps_profiling_on():
    """Setting `iree_threads` loads the program again: a profiling program still profiles the calls after it."""
    import numpy as np

    import cortex
    from cortex.frontends.onnx_models import mlp

    compiled = cortex.compile(cortex.from_onnx(mlp(sizes=(8, 4), batch=1)))
    compiled.profiling = True
    x = np.ones((1, 8), np.float32)
    compiled(x)
    compiled.iree_threads = 1
    assert compiled.profiling is True
    compiled.profile(reset=True)
    compiled(x)
    assert compiled.profile().frames == 1, "the call after the new thread count is profiled"
