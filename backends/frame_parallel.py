"""Frame-parallel execution of a compiled pipeline: many frames in flight, the recurrence in order.

    for encoded, score in compiled.run_video(frames, workers=2):   # engine="threads"
        ...

The entry is cut by `cortex-frame-split` (`cortex.passes.frame_split`) into
four pure functions, lowered and emitted once (`SplitProgram`). Frame n is:

    delayed(frame n, leading state of n-1) -> next value of every delayed input (gray)
                                             and leading recurrence (sharpness_history)
    parallel(frame n, delayed inputs of n-1) -> the gate, the heavy stages [worker threads]
    recurrence(parallel's values, recurrent state of n-1)            [in order]
    tail(frame n, score n)                -> outputs (the encoder)     [worker threads]

`delayed` runs on the calling thread as frames are read (it is cheap and
only needs the frame and the leading recurrences the blur gate reads), so frame n's parallel part never waits for frame
n-1's; `recurrence` runs on the calling thread in frame order. At most
`window` frames are in flight, so memory is bounded by the window, never by
the video. The values are exactly those of calling `compiled(frame)` frame
after frame: the same ops, lowered and emitted the same way, on the same
inputs (tests/test_frame_parallel.py checks the JPEG bytes and score bits).

OpenCV and NumPy release the GIL, which is what makes threads pay off.
While a run is going, OpenCV and BLAS get cores // workers threads each
(`thread_budget`), so workers × library threads never exceed the cores.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import cv2
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, ModuleOp

from cortex.backends.runtime import _aliased, _to_caller, _to_internal, call_generated, load
from cortex.dialects.abi import SEGMENT, Port, entry_ports
from cortex.errors import CortexError
from cortex.passes.frame_split import (
    ARGS_ATTR,
    PARTS,
    RESULTS_ATTR,
    FrameSplitError,
    classify_states,
    split_entry,
)

ENGINES = ("threads", "ray")


def machine_cores() -> int:
    """Cores this process may use (the affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_BUDGET_LOCK = threading.Lock()


@contextmanager
def thread_budget(workers: int, cores: int | None = None):
    """OpenCV and BLAS limited to cores // workers threads each while the block runs (restored after)."""
    per_worker = max(1, (cores or machine_cores()) // max(workers, 1))
    with _BUDGET_LOCK:
        previous = cv2.getNumThreads()
        cv2.setNumThreads(per_worker)
    limits = None
    try:
        from threadpoolctl import threadpool_limits

        limits = threadpool_limits(limits=per_worker, user_api="blas")
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency; BLAS keeps its own default
        pass
    try:
        yield per_worker
    finally:
        if limits is not None:
            limits.restore_original_limits()
        with _BUDGET_LOCK:
            cv2.setNumThreads(previous)


class ConcurrentSection:
    """A profiling section several threads may be inside at once: wall-clock and thread CPU time per stage."""

    __slots__ = ("_local", "_lock", "count", "cpu_seconds", "label", "seconds")

    def __init__(self, label: str):
        self.label, self.seconds, self.cpu_seconds, self.count = label, 0.0, 0.0, 0
        self._local, self._lock = threading.local(), threading.Lock()

    def __enter__(self):
        self._local.start = (time.perf_counter(), time.thread_time())

    def __exit__(self, *exc):
        wall, cpu = self._local.start
        wall, cpu = time.perf_counter() - wall, time.thread_time() - cpu
        with self._lock:
            self.seconds += wall
            self.cpu_seconds += cpu
            self.count += 1


def _concurrent_sections(namespace: dict[str, Any]) -> dict[str, ConcurrentSection]:
    """Swap a profiled module's sections for thread-safe ones (the functions look them up as globals)."""
    from cortex.backends.runtime import Section

    sections = {}
    for name, value in list(namespace.items()):
        if isinstance(value, Section):
            namespace[name] = sections.setdefault(value.label, ConcurrentSection(value.label))
    return sections


class _PartFunction:
    """One part of the split entry, loaded: takes and returns values by key (`value:3`, `state:x`...)."""

    def __init__(self, name: str, fn: func.FuncOp, callable_: Callable[..., Any], weights: Mapping[str, Any]):
        self.name = name
        self.args, self.results = entry_ports(fn)
        keys = _keys(fn, ARGS_ATTR)
        self.arg_keys = keys
        self.result_keys = _keys(fn, RESULTS_ATTR)
        self.weight_slots = [(p.index, weights[p.name]) for p in self.args if p.kind == "weight"]
        self.arity = len(self.args)
        self.fn = callable_

    def __call__(self, env: dict[str, Any], index: int | None) -> None:
        """Run on the values in `env`, adding this part's results to it; errors name frame `index` (if any)."""
        values: list[Any] = [None] * self.arity
        for i, key in enumerate(self.arg_keys):
            values[i] = env[key]
        for i, w in self.weight_slots:
            values[i] = w
        try:
            results = call_generated(self.fn, values, f"the {self.name} part")
        except CortexError as e:
            raise CortexError(f"frame {index}: {e}" if index is not None else str(e)) from e
        except Exception as e:  # a NumPy failure inside generated code
            where = f"frame {index}: " if index is not None else ""
            raise CortexError(f"{where}the {self.name} part failed: {type(e).__name__}: {' '.join(str(e).split())}") from e
        for key, value in zip(self.result_keys, results):
            env[key] = value


class _InOrder:
    """The stages of a stage-split parallel part, one after the other."""

    def __init__(self, stages: list[_PartFunction]):
        self.stages = stages
        self.arg_keys = list(dict.fromkeys(k for s in stages for k in s.arg_keys if not k.startswith("stage:")))

    def __call__(self, env: dict[str, Any], index: int) -> None:
        for stage in self.stages:
            stage(env, index)


def _keys(fn: func.FuncOp, attr: str) -> list[str]:
    keys = fn.attributes.get(attr)
    assert isinstance(keys, ArrayAttr), f"@{fn.sym_name.data} has no {attr}"
    return [k.data for k in keys.data]


class SplitProgram:
    """The four parts of a frame-split entry, lowered and emitted once, with the wiring between them."""

    def __init__(self, module: ModuleOp, entry: str, weights: Mapping[str, Any], input_ports: list[Port],
                 output_ports: list[Port], state_ports: dict[str, Port], update_ports: dict[str, Port],
                 lower_module: Callable[[ModuleOp], ModuleOp], profile: bool = False, stages: bool = False,
                 backend: str = "numpy", device: str = "cpu"):
        from cortex.backends.numpy_emitter import emit

        split = module.clone()
        fn = next((op for op in split.ops if isinstance(op, func.FuncOp) and op.sym_name.data == entry), None)
        if fn is None:
            raise FrameSplitError(f"no function '@{entry}' to split")
        self.classes = classify_states(fn)
        split_entry(split, entry)
        if stages:  # the parallel part cut once more, one function per stage (cortex.passes.stage_split)
            from cortex.passes.stage_split import split_stages

            split_stages(split, f"{entry}__parallel")
        self.split_module = split
        lowered = lower_module(split)  # as the pipeline itself was lowered (the driver's lower, same post passes)
        self.iree = None
        if backend == "iree":  # every part's segments in one IREE module (cortex.backends.iree_backend)
            from cortex.backends.iree_backend import IreeProgram

            self.iree = IreeProgram(lowered, device)
            lowered = self.iree.host
        emitted = emit(lowered, profile=profile)
        namespace = load(emitted, f"<cortex-{backend} @{entry} frame split>")
        if self.iree is not None:
            self.iree.bind(emitted.functions, namespace)
        self.sections = _concurrent_sections(namespace) if profile else {}
        functions = {
            op.sym_name.data: op for op in lowered.ops if isinstance(op, func.FuncOp) and SEGMENT not in op.attributes
        }
        def part(name: str, symbol: str) -> _PartFunction:
            return _PartFunction(name, functions[symbol], namespace[emitted.functions[symbol]], weights)

        prefix = f"{entry}__parallel__s"
        self.stages = sorted(
            (part(f"parallel stage {f[len(prefix):]}", f) for f in functions if f.startswith(prefix)),
            key=lambda p: int(p.name.rsplit(" ", 1)[1]),
        )
        self.parts = {name: part(name, f"{entry}__{name}") for name in PARTS if name != "parallel" or not self.stages}
        if self.stages:
            self.parts["parallel"] = _InOrder(self.stages)
        self.parts = {name: self.parts[name] for name in PARTS}
        self.input_ports, self.output_ports = input_ports, output_ports
        self.state_ports, self.update_ports = state_ports, update_ports  # states read; states written
        self.delayed = [n for n, c in self.classes.items() if c.kind == "delayed"]
        self.leading = [n for n, c in self.classes.items() if c.kind == "leading"]
        self.ahead = [n for n, c in self.classes.items() if c.kind in ("delayed", "leading")]  # the delayed part's updates
        self.recurrent = [n for n, c in self.classes.items() if c.kind == "recurrence"]
        self.read_only = [n for n, c in self.classes.items() if c.kind == "read-only"]

    # ---- the boundary with the caller

    def inputs(self, args: tuple[Any, ...], entry: str) -> dict[str, Any]:
        if len(args) != len(self.input_ports):
            raise CortexError(f"@{entry} takes {len(self.input_ports)} argument(s), got {len(args)}")
        return {
            f"input:{p.index}": _to_internal(p, v, f"argument #{k} (%{p.name}) of @{entry}")
            for k, (p, v) in enumerate(zip(self.input_ports, args))
        }

    def internal_state(self, state: Mapping[str, Any]) -> dict[str, Any]:
        return {name: _to_internal(self.state_ports[name], state[name], f"state '{name}'") for name in self.state_ports}

    def outputs(self, env: Mapping[str, Any], args: tuple[Any, ...]) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The caller's outputs and the caller's state after this frame (as `CompiledPipeline.__call__`).

        An output sharing memory with a state value or with the frame's inputs is copied: frames read
        ahead already hold those arrays (the next frame's delayed inputs, the recurrence's last value),
        and the caller may write into what it is handed while they are still in flight.
        """
        internal = {n: env.get(f"update:{n}", env.get(f"state:{n}")) for n in {**self.state_ports, **self.update_ports}}
        held = [v for n in self.state_ports for v in (env.get(f"state:{n}"), internal[n]) if isinstance(v, np.ndarray)]
        outputs = tuple(
            o.copy() if isinstance(o, np.ndarray) and _aliased(o, held, args) else o for o in self.caller_outputs(env)
        )
        return outputs, self.caller_state(internal, outputs, args)

    def caller_outputs(self, env: Mapping[str, Any]) -> tuple[Any, ...]:
        return tuple(_to_caller(p, env[f"output:{k}"]) for k, p in enumerate(self.output_ports))

    def caller_state(self, internal: Mapping[str, Any], outputs: tuple, args: tuple) -> dict[str, Any]:
        state = {}
        for name, port in {**self.state_ports, **self.update_ports}.items():
            value = _to_caller(port, internal[name])
            if hasattr(value, "shape") and _aliased(value, outputs, args):
                value = value.copy()  # the caller may reuse its buffers or write into outputs
            state[name] = value
        return state

    # ---- one frame, all parts in order (what the engines reorder)

    def step(self, env: dict[str, Any], index: int) -> dict[str, Any]:
        for name in PARTS:
            self.parts[name](env, index)
        return env


def split_program_for(compiled, profile: bool = False) -> SplitProgram:
    """The `SplitProgram` of a `CompiledPipeline` (built on first use, then kept on it); `profile`: timed per stage.

    On the IREE backend it is the stage-split program, and every engine and the pipeline's own calls run
    it: IREE compiles each cut of the frame into its own code (fusion, reduction order), so one cut for
    all keeps every engine bit-identical to the sequential calls, as on the NumPy backend.
    """
    attr = "_split_program_profiled" if profile else "_split_program"
    program = getattr(compiled, attr, None)
    if program is None:
        if compiled.cortex_module is None or compiled.lower_module is None:
            raise CortexError("this pipeline was compiled without its cortex module; it cannot be frame-split")
        weights = {p.name: compiled._weights[p.index] for p in compiled.args if p.kind == "weight"}
        outputs = [p for p in compiled.results if p.kind == "output"]
        states = {p.name: p for p in compiled.args if p.kind == "state"}
        updates = {p.name: p for p in compiled.results if p.kind == "state"}
        backend = getattr(compiled, "backend", "numpy")
        program = SplitProgram(compiled.cortex_module, compiled.entry, weights, compiled.inputs, outputs, states, updates,
                               compiled.lower_module, profile=profile, stages=backend == "iree", backend=backend,
                               device=getattr(compiled, "device", "cpu"))
        setattr(compiled, attr, program)
    return program


def _as_args(item: Any) -> tuple[Any, ...]:
    return item if isinstance(item, tuple) else (item,)


def run_video(compiled, frames: Iterable[Any], workers: int | None = None, engine: str = "threads",
              window: int | None = None, profile: bool = False, **engine_options: Any) -> Iterator[tuple[Any, ...]]:
    """Outputs of `compiled` over `frames`, in order, several frames in flight; `compiled.state` follows.

    Equal to `[compiled(f) for f in frames]` (bit for bit, final state included).
    `workers` defaults to the machine's cores; `window` (frames in flight) to 2 × workers.
    Frames are read ahead: the source must not overwrite a frame it has already
    yielded (OpenCV's `VideoCapture.read()` returns a new array each time).
    `profile` (threads): per-stage wall-clock and CPU time in `split_program_for(compiled, True).sections`.
    """
    workers = machine_cores() if workers is None else workers
    if workers < 1:
        raise CortexError(f"workers must be >= 1, got {workers}")
    if engine == "threads":
        if engine_options:
            raise CortexError(f"engine 'threads' takes no options {sorted(engine_options)}")
        return _run_threads(compiled, frames, workers, window or 2 * workers, profile)
    if engine == "ray":
        from cortex.backends.ray_engine import run_video_ray

        return run_video_ray(compiled, frames, workers=workers, window=window, **engine_options)
    raise CortexError(f"unknown engine '{engine}' (engines: {', '.join(ENGINES)})")


def _run_threads(compiled, frames: Iterable[Any], workers: int, window: int, profile: bool) -> Iterator[tuple[Any, ...]]:
    program = split_program_for(compiled, profile)
    with thread_budget(workers):
        yield from _frames_in_flight(compiled, program, frames, workers, max(window, 1))


def _frames_in_flight(compiled, program: SplitProgram, frames: Iterable[Any], workers: int, window: int):
    parts = program.parts
    state = program.internal_state(compiled.state)
    fronts: deque[tuple[int, tuple, dict[str, Any], Future]] = deque()
    tails: deque[tuple[int, tuple, dict[str, Any], Future]] = deque()
    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="cortex-frame")
    source = iter(frames)
    index, exhausted = 0, False
    try:
        while True:
            while not exhausted and len(fronts) + len(tails) < window:
                item = next(source, _END)
                if item is _END:
                    exhausted = True
                    break
                args = _as_args(item)
                env = program.inputs(args, compiled.entry)
                env.update({f"state:{n}": state[n] for n in program.state_ports})
                parts["delayed"](env, index)
                for name in program.ahead:
                    state[name] = env[f"update:{name}"]
                fronts.append((index, args, env, pool.submit(parts["parallel"], env, index)))
                index += 1
            if tails and tails[0][3].done():
                yield _finish(compiled, program, tails.popleft())
            elif fronts:
                i, args, env, future = fronts.popleft()
                future.result()
                for name in program.recurrent:
                    env[f"state:{name}"] = state[name]
                parts["recurrence"](env, i)
                for name in program.recurrent:
                    state[name] = env[f"update:{name}"]
                tails.append((i, args, env, pool.submit(parts["tail"], env, i)))
            elif tails:
                yield _finish(compiled, program, tails.popleft())
            else:
                return
    finally:
        for *_, future in (*fronts, *tails):
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


_END = object()


def _finish(compiled, program: SplitProgram, entry: tuple[int, tuple, dict[str, Any], Future]) -> tuple[Any, ...]:
    _, args, env, future = entry
    future.result()
    outputs, state = program.outputs(env, args)
    compiled.state = state
    return outputs


def run_split_sequential(compiled, frames: Iterable[Any]) -> Iterator[tuple[Any, ...]]:
    """The four parts one frame after the other, no threads: the split's own semantics, for tests."""
    program = split_program_for(compiled)
    for index, item in enumerate(frames):
        args = _as_args(item)
        env = program.inputs(args, compiled.entry)
        env.update({f"state:{n}": v for n, v in program.internal_state(compiled.state).items()})
        program.step(env, index)
        outputs, compiled.state = program.outputs(env, args)
        yield outputs


__all__ = ["ENGINES", "ConcurrentSection", "SplitProgram", "machine_cores", "run_split_sequential", "run_video", "split_program_for", "thread_budget"]
