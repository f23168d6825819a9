"""Compile, lower, parse and ONNX import from many threads at once.

xDSL's ImplicitBuilder swapped `Operation.__post_init__` process-wide on
each outermost `with`; two threads interleaving that swap left a hook that
inserted every op twice, so `cortex.compile` from 8 threads on 8 modules
failed every run ("Can't add to a block an operation already attached to a
block"). `cortex.dialects.xdsl_patches` installs the hook once. Each test
runs its threads several times, each thread on its own module, and compares
with the same work done on one thread.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

import cortex
from cortex.driver import lower
from cortex.examples.l2_pipeline import build_l2_pipeline
from cortex.frontends.onnx import from_onnx
from cortex.frontends.onnx_models import mlp
from cortex.ir import parse, to_text

THREADS = 8
ROUNDS = 3
COMPILE_THREADS = 4
"""A compile is seconds, so the whole-compile test runs 4 threads once: with the hook swapped per `with`
(the race above) 2 threads already failed every run; the cheap tests run 8 threads 3 times."""


def in_threads(work: Callable[[int], object], threads: int = THREADS) -> list[object]:
    """work(i) on `threads` threads started together; the results, or the first exception raised."""
    results: list[object] = [None] * threads
    errors: list[BaseException] = []
    start = threading.Barrier(threads)

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = work(i)
        except BaseException as e:  # noqa: BLE001 - reported below, with the thread's number
            errors.append(e)

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    if errors:
        raise errors[0]
    return results


def sizes(i: int) -> tuple[int, int, int]:
    return (16 * (1 + i % 4), 16 * (2 + i // 4), 8)


@pytest.fixture(scope="module")
def modules():
    return [build_l2_pipeline(*sizes(i)) for i in range(THREADS)]


@pytest.mark.slow
def test_lower_from_many_threads_matches_one_thread(modules):
    expected = [to_text(lower(m.clone())) for m in modules]
    for _ in range(ROUNDS):
        assert in_threads(lambda i: to_text(lower(modules[i].clone()))) == expected


@pytest.mark.slow
def test_compile_from_many_threads_runs_like_one_thread(modules):
    def run(i: int) -> np.ndarray:
        h, w, _ = sizes(i)
        frame = np.random.default_rng(i).integers(0, 255, (h, w, 3), dtype=np.uint8)
        compiled = cortex.compile(modules[i].clone())
        return np.asarray(compiled(frame)[1])

    expected = [run(i) for i in range(COMPILE_THREADS)]
    got = in_threads(run, COMPILE_THREADS)
    for result, want in zip(got, expected):
        np.testing.assert_array_equal(result, want)


def test_parse_and_onnx_import_from_many_threads(modules):
    texts = [to_text(m) for m in modules]
    model = mlp()
    onnx_text = to_text(from_onnx(model))
    for _ in range(ROUNDS):
        assert [to_text(m) for m in in_threads(lambda i: parse(texts[i]))] == texts
        assert in_threads(lambda i: to_text(from_onnx(model))) == [onnx_text] * THREADS


def test_thread_budget_gives_opencv_its_thread_count_back():
    """OpenCV runs with cores // workers threads inside the budget, and with its own count again after it."""
    import cv2

    from cortex.runtime.threads import thread_budget

    before = cv2.getNumThreads()
    try:
        cv2.setNumThreads(3)
        with thread_budget(2, cores=4) as per_worker:
            assert per_worker == 2 and cv2.getNumThreads() == 2
        assert cv2.getNumThreads() == 3
    finally:
        cv2.setNumThreads(before)
