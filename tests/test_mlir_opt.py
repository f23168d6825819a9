"""Lowered modules are upstream MLIR: mlir-opt 22 accepts them, mlir-runner computes what
the reference interpreter (and the NumPy backend) computes.

Every `examples/*.mlir` is lowered and verified by `mlir-opt` in the custom
and the generic printed form. Examples without OpenCV externs are compiled
to LLVM by `mlir-opt` and run by `mlir-runner`; their results are compared
with the reference interpreter's and the NumPy backend's on the same inputs.
The L2 pipeline calls OpenCV, so its compilable core (the piece that
`cortex-partition` outlines) is run instead, at full 480×640 size on
synthetic video frames.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest
from helpers.numerics import ACCUMULATED, ALGORITHM, assert_f32_close
from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, TensorType

import cortex
from cortex.backends.mlir.upstream import (
    MlirToolError,
    mlir_opt_available,
    mlir_runner_available,
    run_with_mlir,
    verify_with_mlir_opt,
)
from cortex.dialects.traits import External
from cortex.driver import lower
from cortex.ir import parse
from cortex.passes.specialize_shapes import is_shape_generic, specialize_shapes
from cortex.semantics import vision_kernels
from cortex.semantics.modes import mode_weights

EXAMPLES_DIR = Path(cortex.__file__).resolve().parent / "examples"
EXAMPLE_FILES = sorted(EXAMPLES_DIR.glob("*.mlir"))

needs_mlir_opt = pytest.mark.skipif(not mlir_opt_available(), reason="mlir-opt (mlir-22-tools) not installed")
needs_mlir_runner = pytest.mark.skipif(not mlir_runner_available(), reason="mlir-runner (mlir-22-tools) not installed")


def has_externs(module) -> bool:
    return any(op.has_trait(External) for op in module.walk())


def example_spec(path: Path):
    """The example's entry and inputs from `examples/tensor_graphs.py`, when it describes it."""
    from cortex.examples.tensor_graphs import EXAMPLES

    return EXAMPLES.get(path.stem)


def seeded_inputs(fn: func.FuncOp, seed: int) -> list:
    """Inputs for an example without a spec: seeded normal f32 data of the argument types."""
    rng = np.random.default_rng(seed)
    inputs = []
    for t in fn.function_type.inputs.data:
        if isinstance(t, TensorType) and isinstance(t.element_type, Float32Type):
            inputs.append(rng.standard_normal(tuple(t.get_shape())).astype(np.float32))
        elif isinstance(t, Float32Type):
            inputs.append(float(rng.standard_normal()))
        else:
            pytest.skip(f"no input generator for arguments of type {t}")
    return inputs


def entry_and_inputs(path: Path, module, seed: int = 0):
    spec = example_spec(path)
    if spec is not None:
        return spec.entry, list(spec.make_inputs(seed))
    public = [op for op in module.ops if isinstance(op, func.FuncOp) and not op.is_declaration and op.sym_visibility is None]
    if len(public) != 1:
        pytest.skip(f"{path.name}: no spec and {len(public)} public functions; cannot pick an entry")
    return public[0].sym_name.data, seeded_inputs(public[0], seed)


def numpy_backend_available() -> bool:
    return importlib.util.find_spec("cortex.runtime.pipeline") is not None


def assert_close(got, expected, ulps: float = ACCUMULATED) -> None:
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        e = np.asarray(e, np.float32)
        g = np.asarray(g, np.float32)
        assert g.shape == e.shape
        assert_f32_close(g, e, ulps=ulps)


# ---------------------------------------------------------------- parse + verify


def test_examples_are_found():
    names = {p.stem for p in EXAMPLE_FILES}
    assert "l2_pipeline" in names
    assert len(names) >= 2


@needs_mlir_opt
@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=lambda p: p.stem)
def test_lowered_example_verifies_upstream(path, generic):
    module = parse(path)
    for fn in module.ops:  # a shape-generic frame entry (the bundled pipeline, ...): lowered once bound to a frame size
        if isinstance(fn, func.FuncOp) and not fn.is_declaration and is_shape_generic(module, fn.sym_name.data):
            specialize_shapes(module, fn.sym_name.data, [(480, 640, 3)])
    lowered = lower(module)
    canonical = verify_with_mlir_opt(lowered, generic=generic)  # mlir-opt knows no cortex op
    assert "cortex.origin" in canonical  # the provenance survives upstream


@needs_mlir_opt
@pytest.mark.parametrize("mode", ["balanced", "power_save", "motion"])
def test_specialised_l2_verifies_upstream(mode):
    lowered = lower(
        cortex.build_l2_pipeline(),
        passes=f"cortex-specialize-mode{{mode={mode}}},cortex-canonicalize,cortex-dce",
    )
    verify_with_mlir_opt(lowered)


@needs_mlir_opt
def test_mlir_opt_rejects_what_it_should():
    """The check has teeth: the unlowered cortex module is not upstream MLIR."""
    with pytest.raises(MlirToolError, match="cortex"):
        verify_with_mlir_opt(cortex.build_l2_pipeline())


# ---------------------------------------------------------------- run with mlir-runner


RUNNABLE = [p for p in EXAMPLE_FILES if not has_externs(parse(p))]


@needs_mlir_runner
@pytest.mark.parametrize("path", RUNNABLE, ids=lambda p: p.stem)
def test_example_runs_like_the_reference(path):
    module = parse(path)
    entry, inputs = entry_and_inputs(path, module)
    expected = cortex.reference(module, entry=entry, mode=None)(*inputs)
    got = run_with_mlir(lower(module), entry, inputs)
    assert_close(got, expected)
    if numpy_backend_available():
        compiled = cortex.compile(module, entry=entry, mode=None)(*inputs)
        assert_close(got, compiled)


def l2_core():
    """The L2 pipeline partitioned: its last compiled piece is the whole scoring core."""
    module = cortex.run_passes(cortex.build_l2_pipeline(), "cortex-partition")
    pieces = [op for op in module.ops if isinstance(op, func.FuncOp) and "cortex.compiled" in op.attributes]
    core = max(pieces, key=lambda f: len(list(f.walk())))
    return module, core.sym_name.data, [a.name_hint for a in core.args]


@pytest.fixture(scope="module")
def l2_core_inputs():
    from cortex.video.synthetic import SyntheticVideo

    video = SyntheticVideo()
    prev, frame = video.frame(2), video.frame(3)
    gray, prev_gray = vision_kernels.gray(frame), vision_kernels.gray(prev)
    rng = np.random.default_rng(3)
    return {
        "frame": frame,
        "gray": gray,
        "prev_gray": prev_gray,
        "text": vision_kernels.text_roi(gray),
        "prev_score": rng.random((15, 20), dtype=np.float32),
        "scene": vision_kernels.scene_change(gray, prev_gray),
        **mode_weights("balanced"),
    }


@needs_mlir_runner
def test_l2_scoring_core_runs_like_the_reference(l2_core_inputs):
    module, name, params = l2_core()
    assert {"gray", "prev_gray", "text", "prev_score", "scene", "wc", "ws"} <= set(params)
    inputs = [l2_core_inputs[p] for p in params]
    expected = cortex.reference(module, entry=name, mode=None)(*inputs)
    lowered = lower(module, passes=None)
    got = run_with_mlir(lowered, name, inputs)
    assert_close(got, expected, ulps=ALGORITHM)
    assert float(np.abs(got[0]).max()) > 0.1  # a real score map, not zeros


@needs_mlir_runner
def test_l2_gray_runs_like_the_reference(l2_core_inputs):
    module, _, _ = l2_core()
    gray_piece = next(
        op.sym_name.data
        for op in module.ops
        if isinstance(op, func.FuncOp) and any(inner.name == "cortex.gray" for inner in op.walk())
        and "cortex.compiled" in op.attributes
    )
    (got,) = run_with_mlir(lower(module), gray_piece, [l2_core_inputs["frame"]])
    np.testing.assert_array_equal(got, l2_core_inputs["gray"])
