"""Executable kinds: how the runtime loads each kind of executable a program may carry.

A backend plugs in with two halves: its folder on the compiler side
(`backends/<name>/`, whose record names its producer and kind, e.g.
`backends/numpy/emitter.numpy_executable`), which turns a lowered module
into an `Executable` of its kind, and a loader on the runtime side. `KINDS` names the module defining each kind's `LOADER`
(imported when a program of that kind is loaded first, so an optional
dependency such as `iree.runtime` is needed only by programs that use it);
`register_kind` adds one at run time.

A loader takes the executable and `profile` (timers per source op, when the
kind has them) and returns a `LoadedExecutable`: `function(symbol)` is the
callable of one function of the lowered module (positional arguments in,
a tuple or list of results out), `sections` the profiling timers by label.

`load_executable(exe, profile, threads=N)`: the threads one call of the
executable's compiled code may run on, for the kinds that have a say (IREE's
CPU drivers); a loader reads it as `cortex.runtime.program.THREADS.get()` while it loads, so the
loader's signature stays (exe, profile).
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any, Protocol

from cortex.errors import CortexError
from cortex.runtime.program import THREADS, Executable


class LoadedExecutable(Protocol):
    sections: dict[str, Any]

    def function(self, symbol: str) -> Callable[..., Any]: ...


Loader = Callable[[Executable, bool], LoadedExecutable]

KINDS: dict[str, str] = {"numpy": "cortex.runtime.numpy_executable", "iree": "cortex.runtime.iree_executable"}
"""Executable kind → the runtime module whose `LOADER` loads it."""

_LOADERS: dict[str, Loader] = {}


def register_kind(kind: str, loader: Loader) -> None:
    """Make `kind` loadable by `loader` (replacing a previous one)."""
    _LOADERS[kind] = loader


def loader_of(kind: str) -> Loader:
    if kind not in _LOADERS:
        home = KINDS.get(kind)
        if home is None:
            raise CortexError(f"unknown executable kind '{kind}' (this runtime loads: {', '.join(sorted({*KINDS, *_LOADERS}))})")
        try:
            module = import_module(home)
        except ImportError as e:
            raise CortexError(f"executables of kind '{kind}' need {e.name or home}, which is not installed") from None
        _LOADERS.setdefault(kind, module.LOADER)
    return _LOADERS[kind]


def load_executable(exe: Executable, profile: bool = False, threads: int | None = None) -> LoadedExecutable:
    """`exe` loaded (a fresh instance each call: its own namespace, its own timers); `threads`: see the module."""
    token = THREADS.set(threads)
    try:
        return loader_of(exe.kind)(exe, profile)
    finally:
        THREADS.reset(token)


__all__ = ["KINDS", "LoadedExecutable", "Loader", "load_executable", "loader_of", "register_kind"]
