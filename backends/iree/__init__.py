"""The IREE backend: its legalisation passes over the lowered module (`outline_segments`,
`pad_as_tensor_pad`, `crop_generic_inputs`, `raise_pooling`, `shallow_conv_generic`, `expand_powf`),
the `iree-compile` wrapper with its flags and on-disk cache (`compiler`), and the program that
compiles the segments into one IREE module bound into the NumPy host code (`program`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cortex.backends.record import Backend, never

if TYPE_CHECKING:
    from cortex.runtime.program import Executable


def segments(exe: Executable) -> tuple[str, ...]:
    """The functions of `exe` IREE compiled (none: the outlining cost rule left all its code on the host)."""
    from cortex.runtime.iree_executable import SEGMENTS

    return tuple(exe.meta.get(SEGMENTS) or ())


BACKEND = Backend(
    "iree", ("cpu", "cuda"), ("cortex.backends.iree.program", "iree_executable"), kind="iree",
    target=("cortex.backends.iree.program", "IreeTarget"),
    passes=(  # its legalisation, each pass also on its own for cortex-opt and the lit tests
        ("cortex-pad-as-tensor-pad", "cortex.backends.iree.pad_as_tensor_pad", "PadAsTensorPadPass"),
        ("cortex-outline-segments", "cortex.backends.iree.outline_segments", "OutlineSegmentsPass"),
        ("cortex-crop-generic-inputs", "cortex.backends.iree.crop_generic_inputs", "CropGenericInputsPass"),
        ("cortex-raise-pooling", "cortex.backends.iree.raise_pooling", "RaisePoolingPass"),
        ("cortex-expand-powf", "cortex.backends.iree.expand_powf", "ExpandPowFPass"),
    ),
    # IREE's CPU and GPU code generation does convolutions and pooling best channels-last; each cut of the
    # frame is compiled into its own code, so the split's parallel part always runs as stages and a call with
    # state runs the split: one cut keeps every engine bit-identical.
    layout="nhwc", stages_always=True, stateful_calls_split=True,
    calls_blas=never,  # its host code only glues the segments and externs: no call holds the BLAS limit
    native=segments, needs="iree", native_tensor_code=True,
)
"""The IREE backend's record (`cortex.backends.record`)."""
