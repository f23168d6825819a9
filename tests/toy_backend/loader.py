"""The toy backend's loader (runtime side): runs the "toy" executable's one text in a fresh namespace."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cortex.errors import CortexError
from cortex.runtime.program import Executable

LOADS: list[str] = []
"""The label of every executable this loader loaded (the test reads it: the toy's loader ran)."""


class LoadedToy:
    def __init__(self, exe: Executable):
        self.symbols = exe.symbols
        self.namespace: dict[str, Any] = {"__name__": "toy_generated"}
        exec(compile(exe.text("program.py"), f"<toy {exe.meta.get('label')}>", "exec"), self.namespace)  # noqa: S102
        self.sections: dict[str, Any] = {}  # no profiling timers
        LOADS.append(str(exe.meta.get("label")))

    def function(self, symbol: str) -> Callable[..., Any]:
        name = self.symbols.get(symbol)
        if name not in self.namespace:
            raise CortexError(f"the toy executable has no function @{symbol}")
        return self.namespace[name]


def LOADER(exe: Executable, profile: bool) -> LoadedToy:  # noqa: N802 - the name KINDS looks up
    return LoadedToy(exe)
