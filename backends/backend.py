"""The backends a compile can target, one row each: what the driver, the options and the tools ask instead
of testing names.

Each backend lives in its own folder under `backends/`, whose `BACKEND` is its record
(`cortex.backends.record.Backend`: devices, producer, executable kind, target, post-lowering passes,
legalisation, and what its programs need from the runtime). The runtime half of a backend is its
executable kind's loader (`cortex.runtime.executables.KINDS`). Adding a backend is a folder, a loader
and a row here (CONTRIBUTING.md, "Adding a backend").
"""

from __future__ import annotations

from cortex.backends.iree import BACKEND as IREE
from cortex.backends.numpy import BACKEND as NUMPY
from cortex.backends.record import Backend
from cortex.errors import CortexError

BACKENDS: dict[str, Backend] = {b.name: b for b in (NUMPY, IREE)}
"""Every backend a compile can target, by name."""

HOST_BACKEND = BACKENDS["numpy"]
"""The backend of the host code: an entry that calls the split's parts, each compiled for another backend."""


def backend_named(name: str) -> Backend:
    """The backend called `name`, or a CortexError listing them."""
    if not isinstance(name, str) or name not in BACKENDS:
        raise CortexError(f"unknown backend {name!r:.60} (backends: {', '.join(BACKENDS)})")
    return BACKENDS[name]


def check_device(backend: str, device: str) -> None:
    """A CortexError unless backend `backend` runs on `device`, naming a backend that does."""
    target = backend_named(backend)
    try:
        target.check_device(device)
    except CortexError as e:
        elsewhere = [b.name for b in BACKENDS.values() if isinstance(device, str) and device in b.devices]
        hint = f" (use backend='{elsewhere[0]}')" if elsewhere and target.devices == ("cpu",) else ""
        raise CortexError(f"{e}{hint}") from None


__all__ = ["BACKENDS", "HOST_BACKEND", "Backend", "backend_named", "check_device"]
