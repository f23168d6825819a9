"""Each backend as one object, registered in one table: what the driver asks instead of testing names.

A backend says which devices it runs on, how a cortex module is legalised for it before the lowering
(the image layout its code generation does best), what its programs need from the runtime (the
parallel part of the split run as stages; every stateful call through the split) and how a lowered
module becomes one of its executables (the producer, imported when first used, so the NumPy backend
needs nothing optional). The runtime half of a backend is its executable kind's loader
(`cortex.runtime.executables.KINDS`). Adding a backend is a row in `BACKENDS`, a producer and a loader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from cortex.errors import CortexError

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from cortex.runtime.program import Executable


@dataclass(frozen=True)
class Backend:
    """One backend: its name, devices, legalisation and producer (see the module docstring)."""

    name: str
    devices: tuple[str, ...]
    producer: tuple[str, str]  # (module, function): f(lowered module, label, device) -> Executable
    layout: str | None = None  # the image layout its code wants (`cortex-convert-layout`); None: as written
    stages_always: bool = False  # its split runs the parallel part as stages (one compiled unit per stage)
    stateful_calls_split: bool = False  # a call with state runs the split's parts (each part compiled alone)
    calls_blas: bool = True  # its code may reach BLAS (NumPy's): a call holds the runtime's BLAS limit
    needs: str | None = None  # the pip extra it needs, for the message when it is missing
    native_tensor_code: bool = False  # it generates convolutions and pooling itself: no NumPy-shaped rewrites

    def check_device(self, device: str) -> None:
        if isinstance(device, str) and device in self.devices:
            return
        if self.devices == ("cpu",):
            elsewhere = [b.name for b in BACKENDS.values() if isinstance(device, str) and device in b.devices]
            hint = f" (use backend='{elsewhere[0]}')" if elsewhere else ""
            raise CortexError(f"the {self.name} backend runs on the CPU only, not device {device!r:.40}{hint}")
        raise CortexError(f"unknown device {device!r:.40} for the {self.name} backend (devices: {', '.join(self.devices)})")

    def legalisation(self) -> str:
        """The passes that fit a cortex module to this backend, before anything else (`compile_phases`)."""
        return f"cortex-convert-layout{{layout={self.layout} report=false}},canonicalize" if self.layout else ""

    def produce(self, lowered: ModuleOp, label: str, device: str) -> Executable:
        """`lowered` as an executable of this backend for `device`."""
        make: Callable[[ModuleOp, str, str], Executable] = getattr(import_module(self.producer[0]), self.producer[1])
        return make(lowered, label, device)


BACKENDS: dict[str, Backend] = {
    "numpy": Backend("numpy", ("cpu",), ("cortex.backends.numpy.emitter", "numpy_executable")),
    # IREE's CPU and GPU code generation does convolutions and pooling best channels-last (measured:
    # benchmarks/onnx_vs_ort.py); each cut of the frame is compiled into its own code, so the split's parallel
    # part always runs as stages and a call with state runs the split: one cut keeps every engine bit-identical.
    "iree": Backend("iree", ("cpu", "cuda"), ("cortex.backends.iree.program", "iree_executable"), layout="nhwc",
                    stages_always=True, stateful_calls_split=True, calls_blas=False, needs="iree",
                    native_tensor_code=True),
}
"""Every backend a compile can target, by name."""

HOST_BACKEND = BACKENDS["numpy"]
"""The backend of the host code: an entry that calls the split's parts, each compiled for another backend."""


def backend_named(name: str) -> Backend:
    """The backend called `name`, or a CortexError listing them."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise CortexError(f"unknown backend {name!r:.60} (backends: {', '.join(BACKENDS)})")
    return BACKENDS[name]


__all__ = ["BACKENDS", "HOST_BACKEND", "Backend", "backend_named"]
