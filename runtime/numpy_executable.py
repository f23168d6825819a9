"""The "numpy" executable kind: generated Python source, run with `exec`.

Members: `source` (the module `cortex.backends.numpy.emitter` wrote),
`profiled_source` (the same with a timer around each source op's
statements), and `constants/<name>`, the raw bytes of each large constant,
which the module reads from `_BLOBS` when it loads. `symbols` maps each
function symbol to its Python name. Loading runs the source in a fresh
namespace: the constants are built and the externs bound then, so a bad
extern fails at load time, never on some later frame.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from cortex.errors import CortexError
from cortex.runtime.generated import SOURCE_NAME
from cortex.runtime.profiling import ConcurrentSection, Section
from cortex.runtime.program import Executable

KIND = "numpy"
CONSTANTS = "constants/"


def run_source(source: str, blobs: Mapping[str, bytes], filename: str) -> dict[str, Any]:
    """Run generated module code; returns its namespace (which keeps the source under `SOURCE_NAME`, so an
    error inside it is named by op: `cortex.runtime.generated.call_generated`). `filename` starts `<cortex-`."""
    namespace: dict[str, Any] = {"__name__": "cortex_generated", "_BLOBS": dict(blobs), SOURCE_NAME: source}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - code a cortex compiler generated
    return namespace


class LoadedNumpy:
    """One loaded namespace of a "numpy" executable."""

    def __init__(self, exe: Executable, profile: bool):
        blobs = {name.removeprefix(CONSTANTS): value for name, value in exe.members.items()
                 if name.startswith(CONSTANTS) and isinstance(value, bytes)}
        label = exe.meta.get("label", "program")
        member = "profiled_source" if profile else "source"
        self.symbols = exe.symbols
        try:
            self.namespace = run_source(exe.text(member), blobs, f"<cortex-{exe.kind} {label}{' profiled' if profile else ''}>")
        except CortexError:
            raise
        except Exception as e:  # source that is not what the compiler wrote (an altered program)
            raise CortexError(f"executable {label} does not load: {type(e).__name__}: {' '.join(str(e).split())[:200]}") from None
        profiler = self.namespace.get("_prof")
        self.profiler = profiler
        self.sections: dict[str, Section | ConcurrentSection] = dict(profiler.sections) if profiler is not None else {}

    def concurrent_sections(self) -> dict[str, ConcurrentSection]:
        """Swap the module's timers for thread-safe ones (the functions look them up as globals); returns them."""
        sections: dict[str, ConcurrentSection] = {}
        for name, value in list(self.namespace.items()):
            if isinstance(value, Section):
                self.namespace[name] = sections.setdefault(value.label, ConcurrentSection(value.label))
        self.sections = dict(sections)
        return sections

    def working_set(self) -> int:
        """Bytes of the buffers one frame in flight writes its large intermediates into, at their peak
        (`numpy_support.BufferPool`; 0 before the first call, or where the generated code needs none)."""
        pool = self.namespace.get("_pool")
        return pool.working_set() if pool is not None else 0

    def function(self, symbol: str) -> Callable[..., Any]:
        name = self.symbols.get(symbol)
        if name is None or name not in self.namespace:
            raise CortexError(f"the numpy executable has no function @{symbol}")
        return self.namespace[name]


def LOADER(exe: Executable, profile: bool) -> LoadedNumpy:  # noqa: N802 - the name KINDS looks up
    return LoadedNumpy(exe, profile)


__all__ = ["CONSTANTS", "KIND", "LOADER", "LoadedNumpy", "run_source"]
