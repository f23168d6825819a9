"""Every cortex pass and target, by the name pipelines use.

`cortex-opt`, the `xdsl.universe` entry point (plain `xdsl-opt`) and the
Python API all read these tables. Entries are (module, class) pairs,
imported when a pipeline first names them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass
from xdsl.utils.target import Target

PASS_LOCATIONS: dict[str, tuple[str, str]] = {
    # graph passes (issue 3)
    "cortex-canonicalize": ("cortex.passes.canonicalize", "CortexCanonicalizePass"),
    "cortex-specialize-mode": ("cortex.passes.specialize_mode", "SpecializeModePass"),
    "cortex-dce": ("cortex.passes.dce", "CortexDCEPass"),
    "cortex-shape-inference": ("cortex.passes.shape_inference", "ShapeInferencePass"),
    "cortex-specialize-shapes": ("cortex.passes.specialize_shapes", "SpecializeShapesPass"),
    "cortex-partition": ("cortex.passes.partition", "PartitionPass"),
    "cortex-profile": ("cortex.passes.profile", "ProfilePass"),
    "cortex-fuse-batch-norm": ("cortex.passes.fuse_batch_norm", "FuseBatchNormPass"),
    "cortex-recognize-gelu": ("cortex.passes.recognize_gelu", "RecognizeGeluPass"),
    # scheduling (issue 8)
    "cortex-schedule": ("cortex.passes.schedule", "SchedulePass"),
    "cortex-frame-split": ("cortex.passes.frame_split", "FrameSplitPass"),
    "cortex-stage-split": ("cortex.passes.stage_split", "StageSplitPass"),
    # the frame's own work (issue 21)
    "cortex-decompose-scene-change": ("cortex.passes.decompose_scene_change", "DecomposeSceneChangePass"),
    "cortex-temporal-reuse": ("cortex.passes.temporal_reuse", "TemporalReusePass"),
    "cortex-stack-stencils": ("cortex.passes.stack_stencils", "StackStencilsPass"),
    # quantisation (issue 11)
    "cortex-calibrate": ("cortex.passes.calibrate", "CalibratePass"),
    "cortex-quantize": ("cortex.passes.quantize", "QuantizePass"),
    "cortex-convert-layout": ("cortex.passes.convert_layout", "ConvertLayoutPass"),
    # lowering (issue 4)
    "convert-cortex-to-linalg": ("cortex.lowering.cortex_to_linalg", "ConvertCortexToLinalgPass"),
    "convert-cortex-to-extern": ("cortex.lowering.cortex_to_extern", "ConvertCortexToExternPass"),
    "convert-cortex-frame-boundary": ("cortex.lowering.frame_boundary", "ConvertFrameBoundaryPass"),
    "cortex-fuse-linalg-elementwise": ("cortex.lowering.fuse_elementwise", "FuseElementwisePass"),
    "cortex-conv-im2col": ("cortex.lowering.conv_im2col", "ConvIm2colPass"),
    "cortex-unroll-pooling": ("cortex.lowering.unroll_pooling", "UnrollPoolingPass"),
    "cortex-fold-constant-layouts": ("cortex.lowering.fold_constant_layouts", "FoldConstantLayoutsPass"),
    # the IREE backend (issue 19)
    "cortex-pad-as-tensor-pad": ("cortex.lowering.pad_as_tensor_pad", "PadAsTensorPadPass"),
    "cortex-outline-segments": ("cortex.lowering.outline_segments", "OutlineSegmentsPass"),
    "cortex-crop-generic-inputs": ("cortex.lowering.crop_generic_inputs", "CropGenericInputsPass"),
}

TARGET_LOCATIONS: dict[str, tuple[str, str]] = {
    "numpy": ("cortex.backends.numpy_emitter", "NumpyTarget"),
    "iree": ("cortex.backends.iree_backend", "IreeTarget"),
}


_MODULE_ANCHOR = re.compile(r"\s*builtin\.module\s*\((?P<inner>.*)\)\s*", re.S)


def unanchored(pipeline: str) -> str:
    """MLIR's anchored form `builtin.module(canonicalize,cse)` as the plain list `canonicalize,cse`.

    Every pass here runs on the whole module, so the anchor says nothing more; mlir-opt users type
    it by habit (`--pass-pipeline='builtin.module(...)'`). Nested anchors (`func.func(...)`) are
    left for the pipeline parser to reject, naming them.
    """
    match = _MODULE_ANCHOR.fullmatch(pipeline)
    return match["inner"].strip() if match else pipeline


def _loader(module: str, name: str) -> Callable[[], type]:
    return lambda: getattr(import_module(module), name)


def _loaders(table: dict[str, tuple[str, str]]) -> dict[str, Callable[[], type]]:
    return {key: _loader(module, name) for key, (module, name) in table.items()}


def cortex_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return _loaders(PASS_LOCATIONS)


def cortex_targets() -> dict[str, Callable[[], type[Target]]]:
    return _loaders(TARGET_LOCATIONS)


def all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """xDSL's passes (canonicalize, cse, dce, ...) and cortex's."""
    from xdsl.transforms import get_all_passes

    return {**get_all_passes(), **cortex_passes()}
