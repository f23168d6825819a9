"""`Backend`: one backend's facts, in the backend's own folder (`backends/<name>/__init__.py`'s `BACKEND`).

A record says everything the rest of the compiler asks of a backend, so nothing else tests its name: the
devices it runs on; how a cortex module is legalised for it before the lowering (the image layout its code
wants); the passes `post_passes="default"` runs on the lowered module for it; how a lowered module becomes
one of its executables (the producer, imported when first used, so a backend's optional dependency is
needed only by compiles for it) and the executable kind that makes (the runtime loads each kind with its
loader: `cortex.runtime.executables.KINDS`); its `cortex-opt -t` target and its own passes, registered by
name for every pipeline (`cortex.registry`); and what its programs need from
the runtime, read from the executables it made when the program is built (`traits`: whether the entry's
code reaches BLAS, which its producer recorded; whether a part holds code it compiled itself, `native`).
`cortex.backends.backend.BACKENDS` is the table of the records, one row each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import TYPE_CHECKING

from cortex.errors import CortexError
from cortex.lowering import POST_LOWERING_PASSES

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from cortex.runtime.program import BackendTraits, Executable


def recorded_blas(exe: Executable) -> bool:
    """Whether `exe`'s code may reach BLAS, as its producer recorded (meta `calls_blas`; unrecorded: it may)."""
    from cortex.runtime.program import CALLS_BLAS

    return exe.meta.get(CALLS_BLAS, True) is not False


def never(exe: Executable) -> bool:
    return False


def no_native_parts(exe: Executable) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Backend:
    """One backend (see the module docstring)."""

    name: str
    devices: tuple[str, ...]
    producer: tuple[str, str]  # (module, function): f(lowered module, label, device) -> Executable of `kind`
    kind: str  # the executable kind its producer makes (the runtime's loader: `cortex.runtime.executables.KINDS`)
    target: tuple[str, str] | None = None  # (module, Target class) of `cortex-opt -t <name>`; None: no textual form
    passes: tuple[tuple[str, str, str], ...] = ()  # its own passes, for pipelines by name: (name, module, class)
    post_lowering: str | None = POST_LOWERING_PASSES  # what `post_passes="default"` runs on the lowered module
    layout: str | None = None  # the image layout its code wants (`cortex-convert-layout`); None: as written
    stages_always: bool = False  # its split runs the parallel part as stages (one compiled unit per stage)
    stateful_calls_split: bool = False  # a call with state runs the split's parts (each part compiled alone)
    calls_blas: Callable[[Executable], bool] = recorded_blas  # whether an executable's code may reach BLAS
    native: Callable[[Executable], tuple[str, ...]] = no_native_parts  # the functions of an executable it compiled itself
    needs: str | None = None  # the pip extra it needs, for the message when it is missing
    native_tensor_code: bool = False  # it generates convolutions and pooling itself: no NumPy-shaped rewrites

    def check_device(self, device: str) -> None:
        """A CortexError unless this backend runs on `device` (`backend.check_device` adds which one does)."""
        if isinstance(device, str) and device in self.devices:
            return
        if self.devices == ("cpu",):
            raise CortexError(f"the {self.name} backend runs on the CPU only, not device {device!r:.40}")
        raise CortexError(f"unknown device {device!r:.40} for the {self.name} backend (devices: {', '.join(self.devices)})")

    def legalisation(self) -> str:
        """The passes that fit a cortex module to this backend, before anything else (`compile_phases`)."""
        return f"cortex-convert-layout{{layout={self.layout} report=false}},canonicalize" if self.layout else ""

    def produce(self, lowered: ModuleOp, label: str, device: str) -> Executable:
        """`lowered` as an executable of this backend for `device`."""
        make: Callable[[ModuleOp, str, str], Executable] = getattr(import_module(self.producer[0]), self.producer[1])
        exe = make(lowered, label, device)
        if exe.kind != self.kind:
            raise CortexError(f"internal error: the {self.name} backend's producer made a '{exe.kind}' executable, "
                              f"not '{self.kind}'")
        return exe

    def traits(self, entry: Executable, device: str, calls_split: bool) -> BackendTraits:
        """What the runtime must know of a program this backend compiled, whose plain call runs `entry`."""
        from cortex.runtime.program import BackendTraits

        return BackendTraits(self.name, device, self.calls_blas(entry), self.stages_always, calls_split)


__all__ = ["Backend", "never", "no_native_parts", "recorded_blas"]
