"""The IREE backend's run side: one loaded VM module per compiled pipeline, its segments as Python callables.

Needs only `iree.runtime` (the device check runs saved `.vmfb` files on a
machine without the compiler). A `LoadedModule` holds the module's bytes
loaded once, the device (`local-sync` for the CPU targets, `cuda`), and one
VM context per thread: a context is not safe to call from two threads at
once, and the frame-parallel engine runs frames on several, so each thread
gets its own over the same module and device (made on its first call).

A call goes through IREE's lower-level path (`VmContext.invoke` with a
`VmVariantList` built here, one `allocate_buffer_copy` per argument),
measured cheaper per call than the high-level `FunctionInvoker` (which
inspects every argument's type and builds `DeviceArray`s), and local-sync
cheaper than local-task (`benchmarks/iree_vs_ort.py --calls` prints the
table; benchmarks/README.md, "Figures behind the runtime's choices"). Reusing input device buffers saved a little more
but is not thread-safe without a buffer per thread and argument; not worth
it here. Results are copied to fresh NumPy arrays (a mapped result would
alias IREE's memory; the copy of a 640×480 f32 map is a fraction of a
percent of a frame).

The types a caller declares for a function (a saved program's segment
signatures) are checked against the module's own declaration (IREE's ABI
reflection) when the function is looked up, and each result's buffer view
against the shape and element type it is read as before it is read: a
mismatch is a CortexError, never a read past IREE's buffer.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np

from cortex.errors import CortexError

ELEMENT_DTYPES = {
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
    "i1": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
}


def require_runtime() -> ModuleType:
    try:
        import iree.runtime as rt
    except ImportError:
        raise CortexError(
            "the IREE backend needs the iree-base-runtime package: pip install 'cortex[iree]'"
        ) from None
    return rt


def _element_types(rt: ModuleType) -> dict[type, Any]:
    E = rt.HalElementType
    return {
        np.float16: E.FLOAT_16, np.float32: E.FLOAT_32, np.float64: E.FLOAT_64, np.bool_: E.BOOL_8,
        np.int8: E.INT_8, np.int16: E.INT_16, np.int32: E.INT_32, np.int64: E.INT_64,
    }


_ELEMENT_TEXT = {dtype: text for text, dtype in ELEMENT_DTYPES.items()}


def _type_text(view: Any, rt: Any) -> str:
    element = next((_ELEMENT_TEXT[d] for d, e in _element_types(rt).items() if int(e) == view.element_type), str(view.element_type))
    return f"tensor<{''.join(f'{d}x' for d in view.shape)}{element}>"


class Spec:
    """A boundary tensor: NumPy dtype, shape, the HAL element type."""

    __slots__ = ("dtype", "shape", "element", "code")

    def __init__(self, dtype: type, shape: tuple[int, ...], element: Any):
        self.dtype, self.shape, self.element = np.dtype(dtype), shape, element
        self.code = int(element)  # what a buffer view's element_type reads as


TENSOR_TEXT = re.compile(r"tensor<((?:\d+x)*)(\w+)>")
DECLARATION = re.compile(r"(?:\w+\s+)*func\s+@\S+?\((.*?)\)\s*->\s*(.*)", re.S)
"""IREE's `iree.abi.declaration`: `sync func @f(%input0: tensor<4x8xf32>) -> (%output0: tensor<4x8xf32>)`."""


def spec_of(t: object, rt: ModuleType) -> Spec:
    """The boundary spec of a tensor type, an xDSL attribute or its text ("tensor<1x3x16x16xf32>": what a
    saved module's metadata holds, so loading one needs no IR)."""
    text = str(t)
    match = TENSOR_TEXT.fullmatch(text.strip())
    if match is None or match.group(2) not in ELEMENT_DTYPES:
        raise CortexError(f"an IREE segment exchanges statically shaped tensors only, got {text}")
    dtype = ELEMENT_DTYPES[match.group(2)]
    shape = tuple(int(d) for d in match.group(1).split("x") if d)
    return Spec(dtype, shape, _element_types(rt)[dtype])


def declared_types(vm_function: Any, name: str) -> tuple[list[str], list[str]]:
    """The argument and result types a compiled function declares (the module's ABI reflection)."""
    reflection = getattr(vm_function, "reflection", None)
    text = reflection.get("iree.abi.declaration") if isinstance(reflection, dict) else None
    match = DECLARATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise CortexError(f"the compiled IREE function @{name} declares no signature to check its callers against")
    halves = []
    for half in (match.group(1), match.group(2).strip().removeprefix("(").removesuffix(")")):
        pieces = [p.strip() for p in re.split(r",\s*(?=%)", half) if p.strip()]
        halves.append([p.split(":", 1)[1].strip() if ":" in p else p for p in pieces])
    return halves[0], halves[1]


def _same(specs: list[Spec], types: list[str], rt: ModuleType) -> bool:
    try:
        theirs = [spec_of(t, rt) for t in types]
    except CortexError:
        return False
    return [(s.dtype, s.shape) for s in specs] == [(s.dtype, s.shape) for s in theirs]


THREADS_VARIABLE = "CORTEX_IREE_THREADS"
DRIVER_VARIABLE = "CORTEX_IREE_DRIVER"
_TASK_WORKERS: list[int | None] = []
"""The worker count local-task was first created with in this process (None: IREE's default, a worker per
core): IREE reads it from a process-wide flag when it creates the driver, once."""
_TASK_LOCK = threading.Lock()


def cpu_driver(default: str, threads: int | None = None) -> tuple[str, int | None]:
    """The driver a CPU target's module loads with, and local-task's worker count: `threads` (a program's
    `iree_threads` setting), else `CORTEX_IREE_THREADS=N`, runs a call on N threads (1: local-sync; N > 1:
    local-task with N workers); else `CORTEX_IREE_DRIVER=local-sync|local-task`; else `default`."""
    text = os.environ.get(THREADS_VARIABLE, "")
    if threads is None and text:
        try:
            threads = int(text)
        except ValueError:
            threads = 0
        if threads < 1:
            raise CortexError(f"{THREADS_VARIABLE}='{text}' is not a thread count (a whole number >= 1)")
    if threads is not None:
        return ("local-sync", None) if threads == 1 else ("local-task", threads)
    chosen = os.environ.get(DRIVER_VARIABLE, "")
    return (chosen if chosen in ("local-sync", "local-task") else default), None


def _task_workers(rt: ModuleType, threads: int | None) -> None:
    """Sets local-task's worker count before the process's first local-task device; refuses another later."""
    with _TASK_LOCK:
        if not _TASK_WORKERS:
            if threads is not None:
                rt.flags.parse_flags(f"--task_topology_max_group_count={threads}")
            _TASK_WORKERS.append(threads)
        elif threads is not None and _TASK_WORKERS[0] != threads:
            had = _TASK_WORKERS[0] or "IREE's default (one per core)"
            raise CortexError(f"IREE's local-task driver runs {had} worker(s) in this process already: its thread count "
                              f"is set once per process, {threads} cannot be had now")


class LoadedModule:
    """A compiled VM module on one device, with a VM context per calling thread."""

    def __init__(self, vmfb: bytes, driver: str, threads: int | None = None):
        """`threads`: local-task's worker count (`cpu_driver`); None keeps IREE's default."""
        rt = require_runtime()
        self.rt = rt
        self.driver = driver
        if driver == "local-task":
            _task_workers(rt, threads)
        try:
            self.device = rt.get_device(driver)
        except (RuntimeError, ValueError) as e:
            raise CortexError(f"IREE device '{driver}' is not available here: {' '.join(str(e).split())[:300]}") from None
        self.host_memory = driver.startswith("local")
        self.instance = rt.VmInstance()
        self.hal = rt.create_hal_module(self.instance, self.device)
        self.vmfb = vmfb
        try:
            self.module = rt.VmModule.copy_buffer(self.instance, vmfb)
        except (RuntimeError, ValueError) as e:  # bytes that are not a VM module (a damaged saved program)
            raise CortexError(f"the IREE module is not valid ({len(vmfb)} bytes): {' '.join(str(e).split())[:200]}") from None
        self._local = threading.local()

    def context(self) -> Any:  # an iree.runtime.VmContext (the package is optional: no types without it)
        ctx = getattr(self._local, "context", None)
        if ctx is None:
            ctx = self._local.context = self.rt.VmContext(self.instance, modules=[self.hal, self.module])
        return ctx

    def function(self, name: str, args: Sequence[object], results: Sequence[object]) -> Callable[..., tuple]:
        """Function `name`, called with `args` and read as `results` (tensor types), once they are checked
        against the module's own declaration of it."""
        vm_function = self.module.lookup_function(name)
        if vm_function is None:
            raise CortexError(f"the compiled IREE module has no function @{name}")
        arg_specs, result_specs = [spec_of(t, self.rt) for t in args], [spec_of(t, self.rt) for t in results]
        own_args, own_results = declared_types(vm_function, name)
        if not (_same(arg_specs, own_args, self.rt) and _same(result_specs, own_results, self.rt)):
            def shown(types: Sequence[object]) -> str:
                return ", ".join(str(t) for t in types)[:160]

            raise CortexError(f"@{name}: the declared signature ({shown(args)}) -> ({shown(results)}) does not match the "
                              f"compiled module's ({shown(own_args)}) -> ({shown(own_results)})")
        return SegmentCall(self, name, vm_function, arg_specs, result_specs)


class SegmentCall:
    """One compiled function, called like the Python function the NumPy emitter writes: `f(*arrays) -> tuple`."""

    native = True
    """No NumPy arithmetic runs in a call (IREE's code): `call_generated` needs no NumPy error policy around it."""

    def __init__(self, loaded: LoadedModule, name: str, vm_function: Any, args: list[Spec], results: list[Spec]):
        self.loaded, self.name, self.vm_function = loaded, name, vm_function
        self.args, self.results = args, results
        rt = loaded.rt
        self._variant_list = rt.VmVariantList
        self._view_type = rt.HalBufferView
        self._allocate = loaded.device.allocator.allocate_buffer_copy
        self._memory = rt.MemoryType.DEVICE_LOCAL
        self._usage = rt.BufferUsage.DEFAULT
        self.__name__ = name

    def __call__(self, *values: Any) -> tuple[np.ndarray, ...]:
        if len(values) != len(self.args):
            raise CortexError(f"@{self.name} takes {len(self.args)} argument(s), got {len(values)}")
        device = self.loaded.device
        arguments = self._variant_list(len(values))
        for value, spec in zip(values, self.args):
            array = value if type(value) is np.ndarray and value.dtype == spec.dtype else np.asarray(value, spec.dtype)
            if array.shape != spec.shape:
                raise CortexError(f"@{self.name}: expected an array of shape {spec.shape}, got {array.shape}")
            if not array.flags.c_contiguous:
                array = np.ascontiguousarray(array)
            arguments.push_ref(self._allocate(memory_type=self._memory, allowed_usage=self._usage, device=device,
                                              buffer=array, element_type=spec.element))
        return self._invoke(arguments)

    def exact(self, values: tuple[Any, ...]) -> tuple[np.ndarray, ...] | None:
        """The call on `values` when each already is the C-contiguous NumPy array of the argument's dtype and
        shape (nothing to convert); None, having run nothing, otherwise. A whole-graph entry's call path
        (`LoadedProgram.__call__`): the caller's arrays go to IREE as they are."""
        if len(values) != len(self.args):
            return None
        device = self.loaded.device
        arguments = self._variant_list(len(values))
        for value, spec in zip(values, self.args):
            if type(value) is not np.ndarray or value.dtype != spec.dtype or value.shape != spec.shape or not value.flags.c_contiguous:
                return None
            arguments.push_ref(self._allocate(memory_type=self._memory, allowed_usage=self._usage, device=device,
                                              buffer=value, element_type=spec.element))
        return self._invoke(arguments)

    def _invoke(self, arguments: Any) -> tuple[np.ndarray, ...]:
        outputs = self._variant_list(len(self.results))
        try:
            self.loaded.context().invoke(self.vm_function, arguments, outputs)
        except RuntimeError as e:
            raise CortexError(f"IREE call @{self.name} failed: {' '.join(str(e).split())[:400]}") from None
        return tuple(self._result(outputs, i, spec) for i, spec in enumerate(self.results))

    def _result(self, outputs: Any, index: int, spec: Spec) -> np.ndarray:
        view = outputs.get_as_object(index, self._view_type)
        if view.element_type != spec.code or tuple(view.shape) != spec.shape:
            raise CortexError(f"@{self.name}: result {index} is {_type_text(view, self.loaded.rt)}, not the "
                              f"tensor<{''.join(f'{d}x' for d in spec.shape)}{_ELEMENT_TEXT[spec.dtype.type]}> it is read as")
        if self.loaded.host_memory:
            return np.array(view.map().asarray(spec.shape, spec.dtype), copy=True)
        return np.asarray(self.loaded.rt.DeviceArray(self.loaded.device, view, implicit_host_transfer=True).to_host()).copy()


__all__ = ["LoadedModule", "SegmentCall", "cpu_driver", "require_runtime"]
