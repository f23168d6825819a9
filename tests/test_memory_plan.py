"""A steady-state frame allocates almost nothing new, under the host's default malloc.

Measured by minor page faults, not time: memory the allocator hands back to
the OS between frames comes back zero-filled page by page, one fault per page
(NumPy's hugepage advice off, so a page is 4 KiB whatever the kernel's THP).
Each check runs in a fresh plain Python process: no allocator setting, no
other test's heap.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import cortex

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_minflt counts minor page faults on Linux")


def faults_per_call(script: str, *args: str) -> float:
    env = {**os.environ, "NUMPY_MADVISE_HUGEPAGE": "0"}
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return float(done.stdout.split()[-1])


TEXT_ROI = """
import resource
import numpy as np
from cortex.semantics.vision_kernels import text_roi

gray = np.random.default_rng(0).integers(0, 256, (480, 640)).astype(np.float32)  # noise: thousands of MSER regions
text_roi(gray)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(3):
    text_roi(gray)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 3)
"""


@linux_only
def test_text_roi_keeps_its_detectors_work_buffers():
    """A new MSER detector per call allocates its per-pixel buffers again (~1,200 faults a call at 480×640)."""
    assert faults_per_call(TEXT_ROI) < 300


def test_text_roi_gives_the_same_map_whatever_ran_before_and_on_any_thread():
    """A kept detector starts every image afresh, and threads never share one."""
    from cortex.semantics.vision_kernels import text_roi

    rng = np.random.default_rng(1)
    images = [rng.integers(0, 256, (96, 128)).astype(np.float32) for _ in range(4)]
    with ThreadPoolExecutor(1) as fresh:  # a thread that never ran MSER: a new detector per image
        want = [fresh.submit(lambda im=im: text_roi(im)).result() for im in images]
    for image, expected in zip(images * 2 + images[::-1], want * 2 + want[::-1]):
        assert np.array_equal(text_roi(image), expected)
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(text_roi, images * 8))
    assert all(np.array_equal(g, w) for g, w in zip(got, want * 8))


def chain(h: int, w: int, state: bool) -> str:
    """Elementwise ops over h×w float32 images: intermediates, a result, and (`state`) a state carried across calls."""
    t = f"tensor<{h}x{w}xf32>"
    s = f'    %s = cortex.state "acc" : {t}\n' if state else ""
    d = f"    %d = cortex.add %c, %s : ({t}, {t}) -> {t}\n" if state else f"    %d = cortex.add %c, %x : ({t}, {t}) -> {t}\n"
    update = f'    cortex.update_state "acc" = %d : {t}\n' if state else ""
    return f"""builtin.module {{
  func.func @l2_frame(%x: {t}, %y: {t}) -> ({t}, {t}) {{
{s}    %a = cortex.mul %x, %y : ({t}, {t}) -> {t}
    %b = cortex.sub %x, %y : ({t}, {t}) -> {t}
    %c = cortex.mul %a, %b : ({t}, {t}) -> {t}
{d}    %e = cortex.mul %d, %a : ({t}, {t}) -> {t}
{update}    func.return %e, %a : {t}, {t}
  }}
}}
"""


def expected(x: np.ndarray, y: np.ndarray, s: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What `chain` returns (e, a) and carries (d), in NumPy: float32, the same operations in the same order."""
    a = x * y
    d = a * (x - y) + (x if s is None else s)
    return d * a, a, d


STEADY_STATE = """
import resource, sys
import numpy as np
import cortex

compiled = cortex.compile(cortex.parse(sys.argv[1]), mode=None)
rng = np.random.default_rng(0)
x, y = rng.random((1088, 1920), np.float32), rng.random((1088, 1920), np.float32)
for _ in range(2):
    compiled(x, y)
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    compiled(x, y)
print((resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 5)
"""


@pytest.mark.slow
@linux_only
def test_a_steady_state_call_takes_no_fresh_pages():
    """1088×1920 float32 intermediates, a result and a state: ~2,000 faults a call when each is a fresh
    allocation (glibc trims the heap between calls), none once they are buffers the program keeps."""
    assert faults_per_call(STEADY_STATE, chain(1088, 1920, state=True)) < 200


def compiled_chain(state: bool):
    compiled = cortex.compile(cortex.parse(chain(256, 512, state)), mode=None)  # 512 KiB images: pooled
    assert "_pool.take((256, 512), 'float32')" in compiled.source
    return compiled


def test_results_and_states_never_share_a_buffer_with_a_later_call():
    compiled = compiled_chain(state=True)
    rng = np.random.default_rng(2)
    held, state = [], np.zeros((256, 512), np.float32)
    for _ in range(12):  # more than the pool keeps of one kind while all are held elsewhere
        x, y = rng.random((256, 512), np.float32), rng.random((256, 512), np.float32)
        results = compiled(x, y)
        e, a, state = expected(x, y, state)
        assert np.array_equal(results[0], e) and np.array_equal(results[1], a)
        assert np.array_equal(compiled.state["acc"], state)
        held.append((results, (e, a), compiled.state["acc"].copy(), compiled.state["acc"]))
    for results, want, state_copy, state_then in held:  # nothing a later call wrote changed them
        assert all(np.array_equal(r, w) for r, w in zip(results, want))
        assert np.array_equal(state_then, state_copy)
    arrays = [r for results, *_ in held for r in results] + [s for *_, s in held]
    for i, a in enumerate(arrays):
        assert not any(np.shares_memory(a, b) for b in arrays[i + 1 :])
    assert compiled.working_set() >= 3 * 256 * 512 * 4


def test_frames_on_several_threads_never_share_a_buffer():
    compiled = compiled_chain(state=False)
    rng = np.random.default_rng(3)
    inputs = [(rng.random((256, 512), np.float32), rng.random((256, 512), np.float32)) for _ in range(4)]
    wants = [expected(x, y, None) for x, y in inputs]

    def frames(k: int) -> list[tuple[np.ndarray, ...]]:
        return [compiled(*inputs[(k + n) % 4]) for n in range(16)]

    with ThreadPoolExecutor(4) as pool:
        runs = list(pool.map(frames, range(4)))
    for k, run in enumerate(runs):  # checked after every thread ended: no call overwrote another's results
        for n, results in enumerate(run):
            assert all(np.array_equal(r, w) for r, w in zip(results, wants[(k + n) % 4][:2]))
