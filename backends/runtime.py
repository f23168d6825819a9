"""The NumPy backend's runtime: `cortex.compile`, the extern table, state threading, profiling.

    compiled = cortex.compile(cortex.examples.L2_PIPELINE, mode="power_save", profile=True)
    encoded, score = compiled(frame)        # same call shape as cortex.reference
    compiled.state, compiled.reset(), compiled.source
    print(compiled.profile())               # ms per source op (profile=True, or compiled.profiling = True)

With a mode, the module is specialised to it first (the mode's weights become
constants, then canonicalize and dce: in power_save, saliency and motion are
never computed); `specialize=False` keeps the weights as runtime inputs, a
mode-agnostic artifact. Runtime inputs every mode shares (the blur gate's,
`INPUT_DEFAULTS`) always stay inputs.

`cortex.driver.compile_pipeline` lowers the module (`cortex.lower`: optional passes, then
convert-cortex-to-linalg and convert-cortex-to-extern), emits Python with
`numpy_emitter`, and loads it. Everything that can be checked before the
first frame is: the entry exists, every `cortex.weight` argument has a
value, every extern names a kernel of the extern table and accepts its
properties. The runner reads the frame-boundary attributes the lowering
puts on the entry function (see `cortex.lowering`): state arguments and
results are threaded from one call to the next, weight arguments are bound
once, and `{cortex.unsigned}` i8 data is exchanged with the caller as uint8
(zero-copy views).
"""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from cortex.backends.numpy_codegen import np_dtype
from cortex.dialects.abi import Port, entry_ports
from cortex.errors import CortexError
from cortex.interpreter.calling import check_value, find_entry, initial_zeros
from cortex.semantics.kernels import FLOAT_ERRORS, KERNELS, NO_KERNEL

# ---------------------------------------------------------------- the extern table

EXTERNS: Mapping[str, Callable[..., Any]] = KERNELS
"""Kernel per extern name (`cortex.extern` on a declaration): the reference interpreter's own
table, so an extern and the op it stands for have one implementation."""


def bind_extern(name: str, props: Mapping[str, Any]) -> Callable[..., Any]:
    """The callable a generated module uses for one extern declaration (checked now, not per frame)."""
    kernel = EXTERNS.get(name) if name not in NO_KERNEL else None
    if kernel is None:
        raise CortexError(f"unknown extern '{name}': no kernel in the extern table (external ops: {', '.join(_external_ops())})")
    try:
        inspect.signature(kernel).bind_partial(**props)
    except TypeError as e:
        raise CortexError(f"extern '{name}' does not accept its properties {dict(props)}: {e}") from None

    def call(*args):
        try:
            return kernel(*args, **props)
        except CortexError:
            raise
        except Exception as e:  # an OpenCV/NumPy failure: one line naming the extern
            raise CortexError(f"'{name}' failed: {type(e).__name__}: {' '.join(str(e).split())}") from e

    call.__name__ = call.__qualname__ = name.removeprefix("cortex.")
    return call


BLAS_THREADS = 1
"""BLAS threads during a plain `compiled(frame)` call (`CompiledPipeline.blas_threads`). The BLAS calls
of generated code are small (gray's 3-term product, saliency's matmuls): on a loaded machine OpenBLAS's
worker threads spin and cost far more than they save (the scheduling note: compiled saliency 491 ms
instead of 20 ms per 1080p frame). The parallel engines limit BLAS the same way (`thread_budget`)."""

_controller: Any = None


def blas_limit(threads: int | None):
    """A context manager holding BLAS to `threads` threads (threadpoolctl; None: the library's own
    choice). The controller that finds the BLAS libraries is made once; each use costs microseconds."""
    global _controller
    if threads is None:
        return contextlib.nullcontext()
    if _controller is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - threadpoolctl is a dependency
            return contextlib.nullcontext()
        _controller = ThreadpoolController()
    return _controller.limit(limits=threads, user_api="blas")


def blas_threads_now() -> list[int]:
    """The thread counts the loaded BLAS libraries use at this moment (for summaries and tests)."""
    from threadpoolctl import threadpool_info

    return [info["num_threads"] for info in threadpool_info() if info.get("user_api") == "blas"]


def _external_ops() -> list[str]:
    from cortex.dialects import ALL_OPS
    from cortex.dialects.traits import External

    return sorted(op.name for op in ALL_OPS if External() in op.traits and op.name in EXTERNS)

# ---------------------------------------------------------------- profiling


class Section:
    """One source op's timer: `with section:` adds the elapsed time."""

    __slots__ = ("label", "seconds", "count", "_start")

    def __init__(self, label: str):
        self.label, self.seconds, self.count, self._start = label, 0.0, 0, 0.0

    def __enter__(self):
        self._start = time.perf_counter()

    def __exit__(self, *exc):
        self.seconds += time.perf_counter() - self._start
        self.count += 1


class Profiler:
    """The timers of one profiled module (one per source op label)."""

    def __init__(self):
        self.sections: dict[str, Section] = {}

    def section(self, label: str) -> Section:
        return self.sections.setdefault(label, Section(label))

    def reset(self) -> None:
        for s in self.sections.values():
            s.seconds, s.count = 0.0, 0


def split_fused(seconds: Mapping[str, float]) -> dict[str, float]:
    """Time of a fused section ("a+b+c", see cortex-fuse-linalg-elementwise) shared equally by its source ops."""
    out: dict[str, float] = {}
    for label, value in seconds.items():
        names = label.split("+")
        for name in names:
            out[name] = out.get(name, 0.0) + value / len(names)
    return out


PROFILING_OFF = (
    "profiling is off: compile with cortex.compile(..., profile=True), or set compiled.profiling = True "
    "before running frames"
)


class Profile(dict):
    """Seconds spent per source op (cortex.origin) over `frames` profiled calls.

    Empty with a `note` saying how to turn profiling on when it was off.
    """

    def __init__(self, seconds: Mapping[str, float], frames: int, note: str | None = None):
        super().__init__(seconds)
        self.frames = frames
        self.note = note

    def per_frame_ms(self) -> dict[str, float]:
        return {k: 1000.0 * v / max(self.frames, 1) for k, v in self.items()}

    def table(self) -> str:
        if self.note and not self:
            return self.note
        rows = sorted(self.per_frame_ms().items(), key=lambda kv: -kv[1])
        width = max([len(k) for k, _ in rows] + [5])
        lines = [f"{'op':<{width}}  ms/frame   ({self.frames} frames)"]
        lines += [f"{k:<{width}}  {v:8.3f}" for k, v in rows]
        lines.append(f"{'total':<{width}}  {sum(v for _, v in rows):8.3f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


# ---------------------------------------------------------------- the entry's boundary


def _to_internal(port: Port, value: Any, what: str) -> Any:
    """A caller's value as the generated code takes it (checked as the reference interpreter checks it)."""
    value = check_value(port.type, value, what, port.unsigned)
    if isinstance(port.type, TensorType):
        return value.view(np.int8) if port.unsigned else value
    return np.dtype(np_dtype(port.type)).type(value)


def _to_caller(port: Port, value: Any) -> Any:
    if isinstance(port.type, TensorType) and not isinstance(value, np.ndarray):
        value = np.array(value, np_dtype(port.type))  # a rank-0 tensor computed as a NumPy scalar
    if isinstance(value, np.ndarray):
        if port.unsigned and value.dtype == np.int8:
            value = value.view(np.uint8)
        return value if value.flags.writeable else value.copy()  # constants and views stay ours
    if isinstance(value, (np.floating, np.integer, np.bool_)):
        return value.item()
    return value


# ---------------------------------------------------------------- loading


class GeneratedCodeError(CortexError):
    """An exception inside generated code, named by the cortex op whose code raised it."""


SOURCE_NAME = "__cortex_source__"
"""The generated source, kept in its own namespace: a traceback frame of generated code finds it there."""


def generated_origin(source: str, line: int) -> str:
    """`%saliency (linalg.generic)`: what the emitter's comment on `line` says the code implements."""
    lines = source.splitlines()
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    _, hash_, comment = text.rpartition("  # ")
    if not hash_ or ":" not in comment:
        return f"line {line} of the generated source"
    origin, _, note = comment.partition(":")
    origin, note = origin.strip(), note.strip()
    named = origin if origin.startswith("cortex.") or "(" in origin else f"%{origin}"
    return f"{named} ({note})" if note else named


def generated_code_error(e: BaseException, what: str) -> GeneratedCodeError | None:
    """`e`, raised inside generated code, as an error naming the op whose code raised it (None: not from there)."""
    found = None
    tb = e.__traceback__
    while tb is not None:  # the innermost frame of generated code
        source = tb.tb_frame.f_globals.get(SOURCE_NAME)
        if isinstance(source, str) and tb.tb_frame.f_code.co_filename.startswith("<cortex-numpy"):
            found = (source, tb.tb_lineno)
        tb = tb.tb_next
    if found is None:
        return None
    source, line = found
    detail = " ".join(str(e).split())
    return GeneratedCodeError(
        f"{what}: {type(e).__name__} in the code generated for {generated_origin(source, line)}: {detail} "
        f"(line {line} of the generated source, compiled.source)"
    )


def call_generated(function: Callable[..., Any], args: Sequence[Any], what: str) -> Any:
    """`function(*args)` — generated code — under the kernels' floating-point policy (`FLOAT_ERRORS`: IEEE
    results, no RuntimeWarning, e.g. on an all-black frame); an exception from inside it becomes a
    `GeneratedCodeError` naming the source op (from the emitter's `# origin: op` comment on its line)."""
    try:
        with np.errstate(**FLOAT_ERRORS):  # type: ignore[arg-type]
            return function(*args)
    except CortexError:
        raise
    except Exception as e:
        error = generated_code_error(e, what)
        if error is None:
            raise
        raise error from e


def load(emitted, filename: str) -> dict[str, Any]:
    """Compile and run generated module code; returns its namespace (which keeps the source, `SOURCE_NAME`).

    Call its functions through `call_generated`: the floating-point policy and the errors named by op.
    """
    namespace = emitted.namespace()
    namespace[SOURCE_NAME] = emitted.source
    exec(compile(emitted.source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
    return namespace


class CompiledPipeline:
    """A lowered entry function compiled to NumPy, called frame after frame.

    `runner(*inputs) -> tuple` (arrays; Python floats for f32 scalars),
    `runner.state` (state name → value, threaded between calls),
    `runner.reset()`, `runner.source` (the generated Python),
    `runner.profiling = True` then `runner.profile()` (seconds per source op).
    """

    cortex_module: ModuleOp | None = None
    """The cortex module after the optimisation passes, before lowering (what `run_video` splits)."""
    post_passes: str | None = None
    """The passes run on the lowered module (the frame split lowers its parts with the same)."""
    lower_module: Callable[[ModuleOp], ModuleOp] | None = None
    """The driver's lowering with those passes (set by `cortex.driver.compile_pipeline`)."""
    compile_fn: Callable[..., Any] | None = None
    """The driver's `compile_pipeline`, for Ray actors that compile the pipeline again."""
    blas_threads: int | None = BLAS_THREADS
    """BLAS threads while a plain call runs (`blas_limit`); None leaves BLAS to its own default."""
    temporal_reuse: list[Any] = []
    """What `cortex-temporal-reuse` carried, per function (`ReuseReport`s; set by the driver)."""
    workers: int = 1
    """Threads for one frame's independent stages (`cortex.backends.stage_parallel`); 1: in order."""

    def __init__(
        self, lowered: ModuleOp, entry: str, weights: Mapping[str, float], weight_source: str, profile: bool = False,
        backend: str = "numpy", device: str = "cpu",
    ):
        self.lowered = lowered
        self.backend, self.device = backend, device
        self.iree: Any = None
        """The `IreeProgram` (backend "iree"): segments compiled by IREE, called from the generated host code."""
        self.split_calls = False
        """IREE with frame state: each call runs the stage-split program's parts in order (`use_split_program`)."""
        self._split_profiling = False
        if backend != "numpy" or device != "cpu":
            from cortex.backends.iree_backend import IreeProgram, check_backend

            check_backend(backend, device)
            self.blas_threads = None  # IREE's code calls no BLAS, and holding BLAS costs ~50 us per call
            if not any(p.kind == "state" for p in entry_ports(find_entry(lowered, entry))[0]):
                self.iree = IreeProgram(lowered, device)
        self.entry = entry
        self.function = find_entry(lowered, entry)
        self.args, self.results = entry_ports(self.function)
        self.inputs = [p for p in self.args if p.kind == "input"]
        for port in self.args:
            if port.kind == "weight" and port.name not in weights:
                raise CortexError(f"weight '{port.name}' has no value: {weight_source}")
        self._weights = {p.index: _to_internal(p, weights[p.name], f"weight '{p.name}'") for p in self.args if p.kind == "weight"}
        emitted, self._namespace = self._load(profile=False)
        self.source = emitted.source
        self._name = emitted.functions[entry]
        self._plain = self._namespace[self._name]
        self._profiled_namespace: dict[str, Any] | None = None
        self._call = self._plain
        self._frames_profiled = 0
        self._plain_signature = _plain_signature(self.args, self.results)
        self.state: dict[str, Any] = {}
        self.reset()
        if profile:
            self.profiling = True

    def _load(self, profile: bool) -> tuple[Any, dict[str, Any]]:
        """The generated code (of the host module, on IREE) and its loaded namespace, segments bound."""
        from cortex.backends.numpy_emitter import emit

        host = self.iree.host if self.iree is not None else self.lowered
        emitted = emit(host, profile=profile)
        namespace = load(emitted, f"<cortex-{self.backend} @{self.entry}{' profiled' if profile else ''}>")
        if self.iree is not None:
            self.iree.bind(emitted.functions, namespace)
        return emitted, namespace

    def use_split_program(self) -> None:
        """IREE, a pipeline with frame state: calls run the stage-split program (the one every engine runs,
        see `frame_parallel.split_program_for`); if the entry cannot be split, the whole entry goes to IREE."""
        from cortex.backends.frame_parallel import split_program_for
        from cortex.passes.frame_split import FrameSplitError

        try:
            split_program_for(self)
        except (FrameSplitError, CortexError):
            from cortex.backends.iree_backend import IreeProgram

            self.iree = IreeProgram(self.lowered, self.device)
            emitted, self._namespace = self._load(profile=False)
            self.source, self._plain = emitted.source, self._namespace[self._name]
            self._call = self._plain
            return
        self._split_profiling = self._call is not self._plain  # profile=True at compile carries over
        self.split_calls = True

    def _call_split(self, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
        from cortex.backends.frame_parallel import split_program_for

        if len(inputs) != len(self.inputs):
            raise CortexError(f"@{self.entry} takes {len(self.inputs)} argument(s), got {len(inputs)}")
        if not isinstance(self.state, dict):
            raise CortexError(f"runner.state must be a dict of state name to value, got {type(self.state).__name__}")
        for port in self.args:
            if port.kind == "state" and port.name not in self.state:
                raise CortexError(f"state '{port.name}' is missing from runner.state (runner.reset() restores every state)")
        program = split_program_for(self, self._split_profiling)
        env = program.inputs(inputs, self.entry)
        env.update({f"state:{n}": v for n, v in program.internal_state(self.state).items()})
        program.step(env, self._frames_profiled if self._split_profiling else 0)
        if self._split_profiling:
            self._frames_profiled += 1
        outputs, self.state = program.outputs(env, inputs)
        return outputs

    # ---- state and profiling

    def reset(self) -> None:
        """Back to before the first frame: every state holds zeros of its type."""
        self.state = {p.name: initial_zeros(p.type, f"state '{p.name}'", p.unsigned) for p in self.args if p.kind == "state"}

    @property
    def profiling(self) -> bool:
        return self._split_profiling if self.split_calls else self._call is not self._plain

    @profiling.setter
    def profiling(self, on: bool) -> None:
        if self.split_calls:
            self._split_profiling = bool(on)
            return
        if on and self._profiled_namespace is None:
            self._profiled_namespace = self._load(profile=True)[1]
        self._call = self._profiled_namespace[self._name] if on else self._plain

    def profile(self, reset: bool = False) -> Profile:
        """Seconds per source op over the calls made while `profiling` was on (a note saying how, if never)."""
        if self.split_calls:
            program = getattr(self, "_split_program_profiled", None)
            if program is None:
                return Profile({}, 0, note=PROFILING_OFF)
            report = Profile(split_fused({k: s.seconds for k, s in program.sections.items() if s.count}), self._frames_profiled)
            if reset:
                for s in program.sections.values():
                    s.seconds, s.cpu_seconds, s.count = 0.0, 0.0, 0
                self._frames_profiled = 0
            return report
        if self._profiled_namespace is None:
            return Profile({}, 0, note=PROFILING_OFF)
        profiler: Any = self._profiled_namespace["_prof"]
        report = Profile(split_fused({s.label: s.seconds for s in profiler.sections.values() if s.count}), self._frames_profiled)
        if reset:
            profiler.reset()
            self._frames_profiled = 0
        return report

    # ---- a frame

    def __call__(self, *inputs: Any) -> tuple[Any, ...]:
        if self.split_calls and (self.workers == 1 or self._split_profiling):
            return self._call_split(inputs)
        if self.workers > 1 and not self.profiling:
            from cortex.backends.stage_parallel import call_with_concurrent_stages

            return call_with_concurrent_stages(self, inputs)
        signature = self._plain_signature
        if signature is not None and len(inputs) == len(signature):
            for v, (dtype, shape) in zip(inputs, signature):
                if type(v) is not np.ndarray or v.dtype != dtype or v.shape != shape:
                    break
            else:  # arrays in, arrays out, no state: nothing to convert (the checks below would pass)
                with blas_limit(self.blas_threads):
                    results = call_generated(self._call, inputs, f"@{self.entry}")
                if self._call is not self._plain:
                    self._frames_profiled += 1
                return tuple(
                    r if type(r) is np.ndarray and r.flags.writeable else _to_caller(p, r) for p, r in zip(self.results, results)
                )
        if len(inputs) != len(self.inputs):
            raise CortexError(f"@{self.entry} takes {len(self.inputs)} argument(s), got {len(inputs)}")
        values: list[Any] = [None] * len(self.args)
        for k, (port, value) in enumerate(zip(self.inputs, inputs)):
            values[port.index] = _to_internal(port, value, f"argument #{k} (%{port.name}) of @{self.entry}")
        if not isinstance(self.state, dict):
            raise CortexError(f"runner.state must be a dict of state name to value, got {type(self.state).__name__}")
        for port in self.args:
            if port.kind == "state":
                if port.name not in self.state:
                    raise CortexError(
                        f"state '{port.name}' is missing from runner.state (runner.reset() restores every state)"
                    )
                values[port.index] = _to_internal(port, self.state[port.name], f"state '{port.name}'")
            elif port.kind == "weight":
                values[port.index] = self._weights[port.index]
        with blas_limit(self.blas_threads):
            results = call_generated(self._call, values, f"@{self.entry}")
        if self._call is not self._plain:
            self._frames_profiled += 1
        outputs = tuple(_to_caller(p, r) for p, r in zip(self.results, results) if p.kind == "output")
        state = dict(self.state)
        for port, value in zip(self.results, results):
            if port.kind != "state":
                continue
            value = _to_caller(port, value)
            if isinstance(value, np.ndarray) and _aliased(value, outputs, inputs):
                value = value.copy()  # the caller may reuse its buffers or write into outputs
            state[port.name] = value
        self.state = state
        held = [v for v in state.values() if isinstance(v, np.ndarray)]
        # a state read but not updated this frame is still ours: the caller gets a copy
        return tuple(o.copy() if isinstance(o, np.ndarray) and _aliased(o, held, ()) else o for o in outputs)

    def run_video(self, frames, workers: int | None = None, engine: str = "threads", **options):
        """Outputs frame after frame, several frames in flight (`cortex.backends.frame_parallel`)."""
        from cortex.backends.frame_parallel import run_video

        return run_video(self, frames, workers=workers, engine=engine, **options)


def _plain_signature(args: list[Port], results: list[Port]) -> list[tuple[np.dtype, tuple[int, ...]]] | None:
    """(dtype, shape) per argument when every argument is a statically shaped signed tensor input and
    every result an output: then a call whose arrays match needs no conversion (prepared once, per call
    it is one comparison per argument). None otherwise."""
    signature = []
    for port in args:
        if port.kind != "input" or port.unsigned or not isinstance(port.type, TensorType):
            return None
        shape = tuple(port.type.get_shape())
        if any(d < 0 for d in shape):
            return None
        signature.append((np.dtype(np_dtype(port.type)), shape))
    if any(p.kind != "output" for p in results):
        return None
    return signature


def _aliased(value: np.ndarray, outputs, inputs) -> bool:
    return any(isinstance(o, np.ndarray) and np.may_share_memory(value, o) for o in (*outputs, *inputs))


__all__ = ["BLAS_THREADS", "EXTERNS", "blas_limit", "blas_threads_now", "CompiledPipeline", "Profile", "Profiler", "bind_extern", "load"]
