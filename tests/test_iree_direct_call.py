"""A whole-graph entry on IREE is called straight through its compiled function's exact-arguments path.

`cortex.compile(cortex.from_onnx(model), backend="iree")(x)` with `x` already the C-contiguous array of the
input's dtype and shape hands `x` to IREE without the call boundary's environment (`SegmentCall.exact`);
any other argument goes through the boundary, which converts or refuses it with its own message. Results
are the same either way, fresh arrays the caller owns."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
pytest.importorskip("iree.runtime")

import cortex  # noqa: E402
from cortex.errors import CortexError  # noqa: E402
from cortex.frontends.onnx_models import mlp, sample_input  # noqa: E402
from cortex.runtime import parts  # noqa: E402


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("CORTEX_IREE_CACHE", str(tmp_path_factory.mktemp("iree-cache")))
    mp.setenv("CORTEX_IREE_MIN_INTENSITY", "0")  # the whole graph to IREE, however small
    mp.setenv("CORTEX_IREE_MIN_WORK", "0")
    try:
        model = mlp(sizes=(48, 64, 10), batch=2)
        yield model, cortex.compile(cortex.from_onnx(model), backend="iree"), cortex.compile(cortex.from_onnx(model))
    finally:
        mp.undo()


@pytest.fixture
def boundary_entries(monkeypatch):
    """How many calls crossed the call boundary's `enter`."""
    count = [0]
    enter = parts.CallBoundary.enter

    def counted(self, args, state):
        count[0] += 1
        return enter(self, args, state)

    monkeypatch.setattr(parts.CallBoundary, "enter", counted)
    return count


def test_exact_arrays_skip_the_boundary(compiled, boundary_entries):
    model, iree, numpy_backend = compiled
    x = sample_input(model)
    assert iree.program.executables[iree.program.entry_part.executable].meta.get("whole")  # a whole-graph entry
    (got,) = iree(x)
    assert boundary_entries[0] == 0
    np.testing.assert_allclose(got, numpy_backend(x)[0], rtol=1e-5, atol=1e-6)
    assert got.flags.writeable and got.flags.owndata and not np.shares_memory(got, x)


@pytest.mark.parametrize("layout", [np.asfortranarray, lambda x: np.repeat(x, 2, axis=1)[:, ::2]])
def test_arrays_of_another_layout_go_through_the_boundary(compiled, boundary_entries, layout):
    model, iree, _ = compiled
    x = sample_input(model)
    (want,) = iree(x)
    other = layout(x)
    assert not other.flags.c_contiguous
    (got,) = iree(other)
    assert boundary_entries[0] == 1
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("convert", [lambda x: x.tolist(), lambda x: x.astype(np.float64), lambda x: x[:1]])
def test_refused_arguments_get_the_boundary_s_message(compiled, convert):
    """A list, another dtype, another shape: the same CortexError as the NumPy backend's."""
    model, iree, numpy_backend = compiled
    bad = convert(sample_input(model))
    with pytest.raises(CortexError) as on_iree:
        iree(bad)
    with pytest.raises(CortexError) as on_numpy:
        numpy_backend(bad)
    assert str(on_iree.value) == str(on_numpy.value)


@pytest.mark.parametrize("args", [(), ("x", "x")])
def test_a_wrong_argument_count_is_the_boundary_s_error(compiled, args):
    model, iree, _ = compiled
    x = sample_input(model)
    with pytest.raises(CortexError, match=r"takes 1 argument\(s\), got"):
        iree(*[x for _ in args])


def test_profiling_and_workers_take_the_full_path(compiled, boundary_entries):
    model, iree, _ = compiled
    x = sample_input(model)
    (want,) = iree(x)
    iree.profiling = True
    try:
        np.testing.assert_array_equal(iree(x)[0], want)
    finally:
        iree.profiling = False
    assert boundary_entries[0] == 1
    iree.stage_threads = 2
    try:
        np.testing.assert_array_equal(iree(x)[0], want)
    finally:
        iree.stage_threads = 1
    assert boundary_entries[0] == 2
