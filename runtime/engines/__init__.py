"""Engines: what runs `compiled.run_video`'s frames in flight — one module (or package) per engine, one
interface (`base.Engine`), and one table, `ENGINES` (name → engine): the one meaning of "engine".

- `threads` (`threads.py`): frames on a thread pool of the caller's process;
- `processes` (`processes/`: shared-memory blocks, the pool and its workers, the scheduler): worker
  processes on this machine, past the GIL;
- `ray` (`ray.py`): chunks of frames on Ray actors, on one machine or many.

All run the same loop (`flight.frames_in_flight`); the chunked engines run the same worker
(`chunk_worker.FrameWorker`). An engine's module is imported when the engine is first asked for, so
`import cortex` loads neither multiprocessing's pools nor Ray.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from cortex.errors import CortexError
from cortex.runtime.engines.base import Engine, EngineRun


class EngineTable(Mapping[str, Engine]):
    """name → engine; each engine's module (its `ENGINE`) is imported on first use."""

    def __init__(self, modules: dict[str, str]):
        self._modules = modules
        self._loaded: dict[str, Engine] = {}

    def __getitem__(self, name: str) -> Engine:
        if name not in self._loaded:
            self._loaded[name] = importlib.import_module(self._modules[name]).ENGINE
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __repr__(self) -> str:
        return f"EngineTable({', '.join(self._modules)})"


ENGINES = EngineTable({
    "threads": "cortex.runtime.engines.threads",
    "processes": "cortex.runtime.engines.processes",
    "ray": "cortex.runtime.engines.ray",
})
"""The executors of the frames-in-flight loop (`run_video(engine=...)`): the one meaning of "engine"."""


def engine_named(name: object) -> Engine:
    """The engine called `name`, or a CortexError listing the engines."""
    if not isinstance(name, str) or name not in ENGINES:
        raise CortexError(f"unknown engine {name!r} (engines: {', '.join(ENGINES)})")
    return ENGINES[name]


__all__ = ["ENGINES", "Engine", "EngineRun", "EngineTable", "engine_named"]
