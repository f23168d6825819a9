"""A backend is one object (`cortex.backends.backend.BACKENDS`): the driver and the compile options ask it and
never test a backend's name, and a compile for IREE picks the layout IREE's code wants by itself."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import cortex
from cortex.backends.backend import BACKENDS, backend_named
from cortex.driver import compile_program
from cortex.frontends.onnx_models import cnn, sample_input
from cortex.ir import to_text
from cortex.options import CompileOptions, compile_pipeline_text

ROOT = Path(cortex.__file__).resolve().parent


@pytest.mark.parametrize("path", ["driver.py", "options.py", "onnx_backend.py", "frame_runners.py", "tools/cortex_run.py",
                                  "tools/parallel_run.py", "tools/batch.py", "runtime/pipeline.py", "runtime/parts.py",
                                  "runtime/program.py"])
def test_generic_code_names_no_backend(path):
    """Backend names appear only as data (defaults, the registry), never in a comparison or a membership test."""
    tree = ast.parse((ROOT / path).read_text())
    tested = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Compare)
        and any(isinstance(c, ast.Constant) and c.value in BACKENDS for c in [node.left, *node.comparators])
    ]
    assert not tested, f"{path} tests a backend's name on lines {tested}: ask its Backend instead"


def test_the_backend_table_answers_what_the_driver_asks():
    assert backend_named("numpy").legalisation() == ""
    assert backend_named("iree").legalisation().startswith("cortex-convert-layout{layout=nhwc")
    with pytest.raises(cortex.CortexError, match=r"unknown backend 'tpu' \(backends: numpy, iree\)"):
        backend_named("tpu")
    with pytest.raises(cortex.CortexError, match=r"the numpy backend runs on the CPU only, not device 'cuda' \(use backend='iree'\)"):
        CompileOptions(device="cuda")
    with pytest.raises(cortex.CortexError, match=r"unknown device 'tpu' for the iree backend \(devices: cpu, cuda\)"):
        CompileOptions(backend="iree", device="tpu")
    assert compile_pipeline_text(CompileOptions(backend="iree")).startswith("cortex-convert-layout{layout=nhwc")


def test_a_compile_for_iree_runs_convolutions_channels_last():
    """The target chooses its layout: `cortex.compile(from_onnx(cnn), backend="iree")` lowers NHWC
    convolutions (as the ONNX backend's `prepare(..., backend="iree")` does: one path), NumPy keeps NCHW."""
    pytest.importorskip("iree.compiler")
    model = cnn()
    module = cortex.from_onnx(model)
    iree = compile_program(module, backend="iree", mode=None, split=False)
    numpy = compile_program(module, mode=None, split=False)
    assert "linalg.conv_2d_nhwc_hwcf" in to_text(iree.lowered)
    assert "linalg.conv_2d_nchw_fchw" in to_text(numpy.lowered)
    assert "nhwc" not in to_text(module)  # the caller's module is left as it was
    x = sample_input(model)
    (got,) = cortex.compile(module, backend="iree")(x)
    (want,) = cortex.reference(module, mode=None)(x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_each_backend_record_owns_its_facts():
    """A backend's record names its executable kind (which the runtime loads), its `cortex-opt -t` target and
    its own passes; the registry's tables are read from the records, not written out a second time."""
    from cortex.registry import PASS_LOCATIONS, TARGET_LOCATIONS
    from cortex.runtime.executables import KINDS

    for backend in BACKENDS.values():
        assert backend.kind in KINDS, f"the runtime has no loader for the {backend.name} backend's kind"
        assert TARGET_LOCATIONS.get(backend.name) == backend.target
        assert all(PASS_LOCATIONS[name] == (module, cls) for name, module, cls in backend.passes)
    iree_passes = {name for name, _, _ in backend_named("iree").passes}
    assert {"cortex-outline-segments", "cortex-raise-pooling", "cortex-expand-powf"} <= iree_passes
    assert all(module.startswith("cortex.backends.iree.") for _, module, _ in backend_named("iree").passes)


def test_the_driver_reads_no_executable_meta():
    """What the driver needs of an executable (IREE's compiled segments, BLAS use) it asks the backend's record
    (`Backend.native`, `Backend.traits`), never a kind's meta keys."""
    tree = ast.parse((ROOT / "driver.py").read_text())
    read = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "meta"]
    assert not read, f"driver.py reads an executable's meta on lines {read}"


def test_the_iree_record_says_which_functions_iree_compiled():
    from cortex.runtime.program import Executable

    iree = backend_named("iree")
    assert iree.native(Executable("iree", {}, {}, {"segments": {"f__seg0": {"args": [], "results": []}}})) == ("f__seg0",)
    assert iree.native(Executable("iree", {}, {}, {"segments": {}})) == ()
    assert backend_named("numpy").native(Executable("numpy", {}, {}, {})) == ()
