"""Holding BLAS threads around a plain call, cheaply.

threadpoolctl's `limit` context cost 20–50 µs per call; the hold now reads each
BLAS library's thread count and sets and restores only what differs, and a
program whose generated code reaches no BLAS is not held at all. Timing is in
benchmarks/ (onnx_vs_ort.py); here: what is set, when, and what the caller sees after.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
import threadpoolctl
from helpers.graphs import one_function
from threadpoolctl import threadpool_limits

import cortex
from cortex.dialects import tensor_ops as ops
from cortex.runtime import blas
from cortex.tools.cortex_run import blas_line


class FakeController:
    """A threadpoolctl controller of a BLAS library that is not OpenBLAS: counts the calls that set it."""

    user_api, internal_api = "blas", "fake"

    def __init__(self, threads):
        self.threads, self.sets = threads, []

    def get_num_threads(self):
        return self.threads

    def set_num_threads(self, n):
        self.sets.append(n)
        self.threads = n


@pytest.fixture
def fake(monkeypatch):
    controllers = [FakeController(4), FakeController(1)]
    monkeypatch.setattr(blas, "_libraries", [blas.Library(c) for c in controllers])
    return controllers


def test_the_hold_sets_only_what_differs_and_restores_it(fake):
    wide, narrow = fake
    with blas.blas_limit(1):
        assert (wide.threads, narrow.threads) == (1, 1)
    assert (wide.threads, narrow.threads) == (4, 1)  # as the caller had them
    assert wide.sets == [1, 4] and narrow.sets == []  # the library already at 1 is only read
    with blas.blas_limit(None):
        assert wide.threads == 4
    with pytest.raises(RuntimeError), blas.blas_limit(2):
        raise RuntimeError  # restored on the way out of an exception too
    assert (wide.threads, narrow.threads) == (4, 1) and narrow.sets == [2, 1]


def test_no_blas_library_holds_nothing(monkeypatch):
    monkeypatch.setattr(blas, "_libraries", [])
    with blas.blas_limit(1) as held:
        assert held is None  # a nullcontext


def test_a_limit_another_thread_holds_is_left_alone():
    """threadpoolctl lets one thread own OpenBLAS's process-wide limit; a hold does not fight it."""
    if not blas.blas_libraries():
        pytest.skip("no BLAS library loaded")
    held, done, seen, inside = threading.Event(), threading.Event(), [], []

    def other():
        with threadpool_limits(limits=2, user_api="blas"):
            inside.extend(blas.blas_threads_now())  # 2, or what a thread that owned the limit before left
            held.set()
            done.wait(10)

    shared = getattr(threadpoolctl.OpenBLASController, "_SHARED_STATE", None)
    if shared is None:
        pytest.skip("this threadpoolctl has no controlling thread")
    # an earlier plain `threadpool_limits(...)` call may have left this thread owning the limit: let the other take it
    before, shared.controlling_thread = shared.controlling_thread, None
    t = threading.Thread(target=other)
    t.start()
    try:
        assert held.wait(10)
        with blas.blas_limit(1):
            seen = blas.blas_threads_now()
    finally:
        done.set()
        t.join()
        shared.controlling_thread = before
    assert seen and seen == inside  # the hold changed nothing while the other thread held the limit


@pytest.mark.parametrize("code, externs, reaches", [
    ("gray = _t1 @ _k_gray", (), True),
    ("y = np.tensordot(a, b, axes=1)", (), True),
    ("y = np.einsum('ij,jk->ik', a, b)", (), True),
    ("y = np.dot(a, b)", (), True),
    ("y = np.linalg.norm(a)", (), True),
    ("text = _x_text_roi(gray)", ("_x_text_roi",), True),  # a kernel may use NumPy's BLAS
    ("text = _x_text_roi(gray)", (), False),  # not an extern's binding: an ordinary function
    ("y = x + x", (), False),
    ('"""@main(a @ b)"""', (), False),  # text is not code: a scan of the source would have said yes
    ("y = np.add(a, b) @ c", (), True),
])
def test_the_emitter_decides_blas_on_its_syntax_trees(code, externs, reaches):
    import ast

    from cortex.backends.numpy.blas import reaches_blas

    assert reaches_blas(ast.parse(code).body, externs) is reaches


def test_the_emitter_records_blas_in_the_executable_and_the_program_keeps_it(tmp_path):
    """What the NumPy emitter recorded is the program's `calls_blas` (no scan of the source at run time),
    saved and loaded with it; a product whose result nobody reads is dropped, so it reaches nothing."""
    elementwise = one_function([(4, 4)], lambda v: ops.ExpOp(ops.AddOp(v, v).result).result)
    product = one_function([(4, 4)], lambda v: ops.MatmulOp(v, v).result)
    unused = one_function([(4, 4)], lambda v: [ops.MatmulOp(v, v), ops.ExpOp(v)][1].result)
    for module, reaches in ((elementwise, False), (product, True), (unused, False)):
        compiled = cortex.compile(module, entry="main", mode=None, split=False)
        assert compiled.program.executables["entry"].meta["calls_blas"] is reaches
        assert compiled.program.backend.calls_blas is reaches and compiled.calls_blas is reaches
        again = cortex.load(compiled.save(tmp_path / f"p{int(reaches)}.cortex"))
        assert again.calls_blas is reaches


def threads_seen_during_a_call(compiled, *inputs):
    seen = []
    plain = compiled._call

    def spy(*args):
        seen.append(blas.blas_threads_now())
        return plain(*args)

    compiled._call = spy
    compiled(*inputs)
    compiled._call = plain
    return seen[0]


def test_a_program_without_blas_is_not_held_and_one_with_it_is():
    x = np.ones((4, 4), np.float32)
    elementwise = cortex.compile(one_function([(4, 4)], lambda v: ops.ExpOp(ops.AddOp(v, v).result).result), entry="main", mode=None)
    product = cortex.compile(one_function([(4, 4)], lambda v: ops.MatmulOp(v, v).result), entry="main", mode=None)
    assert not elementwise.calls_blas and product.calls_blas
    with threadpool_limits(limits=2, user_api="blas"):
        before = blas.blas_threads_now()
        assert threads_seen_during_a_call(elementwise, x) == before  # not held: nothing to hold
        assert all(n == 1 for n in threads_seen_during_a_call(product, x))
        assert blas.blas_threads_now() == before

    class Backend:
        compiled = elementwise

    assert blas_line(None, Backend()).startswith("BLAS threads: not held (the generated code calls no BLAS")


def test_the_engines_budget_holds_blas_the_same_cheap_way_and_restores_it(fake):
    """`thread_budget` (every concurrent-stage call, every run_video) goes through the hold: threadpoolctl's
    `threadpool_limits` re-found every library on each entry, 1.1 ms per call."""
    from cortex.runtime.threads import thread_budget

    wide, narrow = fake
    with thread_budget(workers=2, cores=4) as per_worker:
        assert per_worker == 2 and (wide.threads, narrow.threads) == (2, 2)
    assert (wide.threads, narrow.threads) == (4, 1)
    with pytest.raises(RuntimeError), thread_budget(workers=4, cores=4):
        assert (wide.threads, narrow.threads) == (1, 1)
        raise RuntimeError
    assert (wide.threads, narrow.threads) == (4, 1)
