"""The "iree" executable kind: the NumPy host code, with its segments running as IREE-compiled code.

What `cortex.backends.iree.program.iree_executable` writes: the members of a
"numpy" executable of the host module (the lowered module with its extern-free
runs outlined as segment functions), plus `module.vmfb`, the one IREE VM
module of every segment; meta `driver` (IREE's HAL driver: local-sync for the
CPU targets, cuda) and `segments` (each segment's argument and result types as
text, what a call needs; checked against the module's own declaration when it
loads, so a program.json that says otherwise is refused). Loading runs the host source as the "numpy" kind
does, loads the VM module (`cortex.runtime.iree_runtime.LoadedModule`, needs
only `iree.runtime`) and points the host's segment functions at the compiled
ones. A host function that only calls one segment with its own arguments and
returns its results (meta `whole`: a tensor graph's entry) is replaced by the
compiled function itself, so a call costs no generated Python and no NumPy
floating-point policy (`SegmentCall.native`; about a tenth of the small CNN's call).
The profiled namespace keeps the host code (its timers). An executable whose
module had no segment has no `module.vmfb`: it is its host code alone.

Threads (CPU targets only): the loading program's `iree_threads` setting
(`load_executable(..., threads=N)`), else `CORTEX_IREE_THREADS=N`, runs each
call on N threads: IREE's local-task driver with N workers (a count set once per
process: IREE reads it when the driver is first made); `CORTEX_IREE_DRIVER=local-task`
loads with IREE's own threads, one per core. local-sync, the default, is cheaper
per call and the engines bring the threads.
"""

from __future__ import annotations

from cortex.errors import CortexError
from cortex.runtime.iree_runtime import LoadedModule, cpu_driver
from cortex.runtime.numpy_executable import LoadedNumpy
from cortex.runtime.program import THREADS, Executable

KIND = "iree"
VMFB = "module.vmfb"
SEGMENTS = "segments"
"""The meta key of the segments IREE compiled: symbol → {"args": [type text, ...], "results": [...]}."""


def driver_for(exe: Executable) -> tuple[str, int | None]:
    """The driver the executable's module loads with, and local-task's worker count (`cpu_driver`, with the
    threads the load asks for: `THREADS`)."""
    driver = str(exe.meta.get("driver", "local-sync"))
    return cpu_driver(driver, THREADS.get()) if driver.startswith("local") else (driver, None)


class LoadedIree(LoadedNumpy):
    """The host namespace of an "iree" executable, its segment functions bound to the loaded VM module."""

    def __init__(self, exe: Executable, profile: bool):
        super().__init__(exe, profile)
        self.module: LoadedModule | None = None
        vmfb = exe.members.get(VMFB)
        if not isinstance(vmfb, bytes):
            return
        label = exe.meta.get("label", "program")
        try:
            self.module = LoadedModule(vmfb, *driver_for(exe))
            for symbol, (args, results) in _signatures(exe).items():
                name = exe.symbols.get(symbol)
                if name is not None:
                    self.namespace[name] = self.module.function(symbol, args, results)
        except CortexError as e:
            raise CortexError(f"executable {label} does not load: {e}") from None
        if profile:
            return  # the profiled host code times each segment call under its source ops
        whole = exe.meta.get("whole", {})
        if not isinstance(whole, dict) or not all(isinstance(segment, str) for segment in whole.values()):
            raise CortexError(f"executable {label} does not load: its 'whole' functions are not a mapping")
        for host, segment in whole.items():
            host_name, segment_name = exe.symbols.get(host), exe.symbols.get(segment)
            if host_name in self.namespace and segment_name in self.namespace:
                self.namespace[host_name] = self.namespace[segment_name]  # a tensor graph: call IREE directly


def _signatures(exe: Executable) -> dict[str, tuple[list[str], list[str]]]:
    """meta `segments`: symbol → (argument types, result types), each a list of type texts."""
    segments = exe.meta.get(SEGMENTS, {})

    def texts(value: object) -> bool:
        return isinstance(value, list) and all(isinstance(t, str) for t in value)

    if not isinstance(segments, dict) or not all(
        isinstance(s, dict) and texts(s.get("args")) and texts(s.get("results")) for s in segments.values()
    ):
        raise CortexError("its segment signatures are not lists of tensor types")
    return {str(symbol): (s["args"], s["results"]) for symbol, s in segments.items()}


def LOADER(exe: Executable, profile: bool) -> LoadedIree:  # noqa: N802 - the name KINDS looks up
    return LoadedIree(exe, profile)


__all__ = ["KIND", "LOADER", "SEGMENTS", "VMFB", "LoadedIree", "driver_for"]
