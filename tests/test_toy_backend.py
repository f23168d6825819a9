"""Adding a backend is one folder, one loader in the runtime and one row (CONTRIBUTING.md, "Adding a backend"):
the toy backend of `tests/toy_backend/` is added exactly that way and compiles, runs, saves and loads.

The folder holds its record (`BACKEND`) and its producer; `loader.py` is its runtime half, which imports
nothing of the compiler; the rows are one entry in `cortex.backends.backend.BACKENDS` and one in
`cortex.runtime.executables.KINDS`. Nothing else in the package learns the toy's name.
"""

from __future__ import annotations

import numpy as np
import pytest
import toy_backend
import toy_backend.producer
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, frames_of
from toy_backend import loader

import cortex
from cortex.backends.backend import BACKENDS
from cortex.examples.tensor_graphs import EXAMPLES
from cortex.options import CompileOptions, compile_pipeline_text
from cortex.runtime.executables import KINDS
from cortex.runtime.program import CALLS_BLAS


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(BACKENDS, "toy", toy_backend.BACKEND)  # the row
    monkeypatch.setitem(KINDS, "toy", "toy_backend.loader")  # the loader
    loader.LOADS.clear()
    return toy_backend.BACKEND


def test_without_its_rows_the_toy_is_unknown():
    with pytest.raises(cortex.CortexError, match=r"unknown backend 'toy' \(backends: numpy, iree\)"):
        CompileOptions(backend="toy")


def test_a_tensor_graph_compiles_and_runs_on_the_toy_backend(toy, tmp_path):
    spec = EXAMPLES["linear_bn"]
    module = cortex.parse(spec.text())
    x = spec.make_inputs(0)
    compiled = cortex.compile(module, entry=spec.entry, mode=None, backend="toy")
    assert {exe.kind for exe in compiled.program.executables.values()} == {"toy"}
    assert loader.LOADS, "the toy's own loader loaded it"
    (got,) = compiled(*x)
    (want,) = spec.numpy_reference(*x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert compiled.calls_blas, "the emitter recorded the matmul; the toy's producer kept the fact"
    # its post-lowering passes are its record's (none), not the NumPy backend's elementwise fusion
    assert "cortex-fuse-linalg-elementwise" not in compile_pipeline_text(CompileOptions(backend="toy"))
    assert "cortex-fuse-linalg-elementwise" in compile_pipeline_text(CompileOptions())
    again = cortex.load(compiled.save(tmp_path / "toy.cortex"))
    np.testing.assert_array_equal(again(*x)[0], got)


def test_a_producer_that_records_nothing_of_blas_is_taken_to_reach_it(toy, monkeypatch):
    """A backend's producer that does not say whether its code reaches BLAS (one written before the fact was
    recorded): its programs hold the BLAS limit, which is always safe; one that says "no" is not held."""
    spec = EXAMPLES["gelu_tanh"]  # elementwise: the emitter records that it never reaches BLAS
    module = cortex.parse(spec.text())
    assert not cortex.compile(module, entry=spec.entry, mode=None, backend="toy").calls_blas
    made = toy_backend.producer.toy_executable

    def silent(lowered, label, device):
        exe = made(lowered, label, device)
        del exe.meta[CALLS_BLAS]
        return exe

    monkeypatch.setattr(toy_backend.producer, "toy_executable", silent)
    compiled = cortex.compile(module, entry=spec.entry, mode=None, backend="toy")
    assert CALLS_BLAS not in compiled.program.executables["entry"].meta
    assert compiled.calls_blas and compiled.program.backend.calls_blas


def test_a_pipeline_with_state_runs_frames_on_the_toy_backend_as_on_numpy(toy):
    """The bundled L2 pipeline (externs, state, the frame split) at a small size: the toy's calls and its
    frames in flight give what the NumPy backend gives, bit for bit (the same generated code)."""
    text = small_l2_text()
    frames = frames_of(SMALL, 4)
    on_toy = cortex.compile(text, backend="toy")
    on_numpy = cortex.compile(text)
    assert_same([on_toy(f) for f in frames], [on_numpy(f) for f in frames])
    on_toy.reset()
    on_numpy.reset()
    assert_same(list(on_toy.run_video(frames, workers=2)), list(on_numpy.run_video(frames, workers=2)))
    assert any("split" in label for label in loader.LOADS), "the split's parts ran through the toy's loader"


def test_the_toy_backend_checks_its_device(toy):
    with pytest.raises(cortex.CortexError, match=r"the toy backend runs on the CPU only, not device 'cuda' \(use backend='iree'\)"):
        CompileOptions(backend="toy", device="cuda")
