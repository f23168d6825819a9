"""cortex-run keeps the memory a frame frees for the next frame (runtime/memory_policy.py).

Measured by page faults, not time: a frame's worth of large arrays freed and
allocated again page-faults every page back in under glibc's default policy,
and not at all under the kept one. The speed it buys is in the module's
docstring (cortex-run at 1088×1920, 20–25 %), not asserted here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

FRAME_OF_ARRAYS = """
import resource, sys
import numpy as np
if sys.argv[1] == "kept":
    from cortex.runtime.memory_policy import keep_freed_memory
    print(keep_freed_memory(), file=sys.stderr)

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def frame():  # four 24 MB arrays alive at once, then all freed: what one 1080p frame does many times
    arrays = [np.ones(3 << 20) for _ in range(4)]
    del arrays

frame()
before = faults()
for _ in range(3):
    frame()
print(faults() - before)
"""


def faults_per_frame(policy: str) -> int:
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}  # 4 KiB pages: one fault per page, whatever the kernel's THP
    done = subprocess.run([sys.executable, "-c", FRAME_OF_ARRAYS, policy], capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    return int(done.stdout.strip()) // 3


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_kept_memory_comes_back_without_page_faults():
    returned, kept = faults_per_frame("default"), faults_per_frame("kept")
    assert returned > 10_000  # 96 MB handed back to the OS and faulted in again, page by page
    assert kept < 100


def cortex_run_summary(tmp_path, *flags: str) -> dict:
    path = tmp_path / "summary.json"
    subprocess.run([sys.executable, "-m", "cortex.tools.cortex_run", "--frames", "2", "--quiet", "--no-frame-log",
                    "--size", "96x128", "--summary-json", str(path), *flags],
                   capture_output=True, text=True, env=dict(os.environ), timeout=300, check=True)
    return json.loads(path.read_text())


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_cortex_run_keeps_freed_memory_unless_told_to_return_it(tmp_path):
    assert cortex_run_summary(tmp_path)["memory"].startswith("memory: freed memory kept for the next frame")
    assert cortex_run_summary(tmp_path, "--return-memory")["memory"].startswith("memory: glibc's default")


@pytest.mark.slow
def test_called_in_process_it_leaves_the_hosts_allocator_alone(tmp_path, capsys):
    from cortex.tools.cortex_run import main

    path = tmp_path / "summary.json"
    assert main(["--frames", "1", "--quiet", "--no-frame-log", "--size", "96x128", "--summary-json", str(path)]) == 0
    assert "host process's malloc policy" in json.loads(path.read_text())["memory"]


def test_the_guide_quotes_the_policy_as_environment_variables():
    import cortex
    from cortex.runtime.memory_policy import ENVIRONMENT, KEPT, M_ARENA_MAX, M_MMAP_THRESHOLD, M_TOP_PAD, M_TRIM_THRESHOLD

    assert ENVIRONMENT in (Path(cortex.__file__).resolve().parent / "docs" / "running.md").read_text()
    names = {M_ARENA_MAX: "MALLOC_ARENA_MAX", M_MMAP_THRESHOLD: "MALLOC_MMAP_THRESHOLD_", M_TRIM_THRESHOLD: "MALLOC_TRIM_THRESHOLD_",
             M_TOP_PAD: "MALLOC_TOP_PAD_"}
    assert dict(item.split("=") for item in ENVIRONMENT.split()) == {names[k]: str(v) for k, v in KEPT.items()}


def test_a_parameter_glibc_refuses_is_named_in_the_summary_line(monkeypatch):
    """mallopt returns 1 on success; a parameter it refuses (0) is named, and the line says freed memory may go
    back to the OS; none refused: the kept line."""
    from cortex.runtime import memory_policy
    from cortex.runtime.memory_policy import M_ARENA_MAX, M_TOP_PAD

    asked: list[tuple[int, int]] = []
    refusing: set[int] = set()

    class FakeLibc:
        def __init__(self, name):
            def mallopt(param, value):
                asked.append((param, value))
                return 0 if param in refusing else 1

            self.mallopt = mallopt

    monkeypatch.setattr(memory_policy.ctypes, "CDLL", FakeLibc)
    monkeypatch.setattr(memory_policy.ctypes.util, "find_library", lambda name: "libc.so.6")
    refusing.update({M_ARENA_MAX, M_TOP_PAD})
    assert memory_policy.keep_freed_memory() == ("memory: glibc refused MALLOC_ARENA_MAX, MALLOC_TOP_PAD_: freed "
                                                 "memory may go back to the OS after each frame")
    assert asked == list(memory_policy.KEPT.items())
    refusing.clear()
    assert memory_policy.keep_freed_memory().startswith("memory: freed memory kept for the next frame")
