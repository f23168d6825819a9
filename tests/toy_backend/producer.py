"""The toy backend's producer (compiler side): a lowered module → an Executable of kind "toy"."""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from cortex.backends.numpy.emitter import emit
from cortex.runtime.program import CALLS_BLAS, Executable


def toy_executable(lowered: ModuleOp, label: str, device: str) -> Executable:
    emitted = emit(lowered)
    return Executable("toy", {"program.py": emitted.self_contained()}, dict(emitted.functions),
                      {"label": label, CALLS_BLAS: emitted.calls_blas})
