"""A loaded program, called frame after frame: the object `cortex.compile` and `cortex.load` return.

    compiled = cortex.compile(cortex.examples.L2_PIPELINE, mode="power_save")
    encoded, score = compiled(frame)        # same call shape as cortex.reference
    compiled.state, compiled.reset(), compiled.source
    compiled.profiling = True               # then compiled.profile(): ms per source op
    compiled.stage_threads = 2              # one call's independent stages on 2 threads
    for out in compiled.run_video(frames, workers=2, engine="threads"):   # frames in flight
    compiled.save("l2.cortex"); again = cortex.load("l2.cortex")

It runs a `Program` (`cortex.runtime.program`) and never compiles: the
program carries the executable of the whole entry and of its frame and
stage splits. State arguments and results are threaded from one call to the
next, weight arguments are bound once, and `{cortex.unsigned}` i8 data is
exchanged with the caller as uint8 (zero-copy views).
"""

from __future__ import annotations

import dataclasses
import itertools
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from os import PathLike
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cortex.deprecation import OMITTED, renamed_attributes, warn_renamed
from cortex.errors import CortexError, whole_number
from cortex.runtime.blas import BLAS_THREADS, blas_limit
from cortex.runtime.engines import ENGINES, EngineRun, engine_named
from cortex.runtime.engines.base import FrameVariants
from cortex.runtime.executables import load_executable
from cortex.runtime.generated import call_generated
from cortex.runtime.modes import ModeSwitch, mode_sets
from cortex.runtime.native_report import native_lines
from cortex.runtime.parts import CallBoundary, LoadedSplit, PartFunction, plain_signature, weight_values
from cortex.runtime.profiling import PROFILING_OFF, Profile, split_fused
from cortex.runtime.program import Program
from cortex.runtime.threads import MAX_WINDOW, MAX_WORKERS, as_args, machine_cores, stage_pool
from cortex.runtime.values import RunnerState, initial_zeros, to_caller
from cortex.semantics.abi_facts import Port


class LoadedProgram:
    """A program's entry function, called frame after frame (a `Program` loaded by the runtime; its former
    name `CompiledPipeline` still works for one release, with a DeprecationWarning).

    `runner(*inputs) -> tuple` (arrays; Python floats for f32 scalars),
    `runner.state` (state name → value, threaded between calls; the reference runner's names: states
    temporal reuse derives from another are recomputed when their source is assigned, `RunnerState`),
    `runner.reset()`, `runner.source` (the generated Python),
    `runner.profiling = True` then `runner.profile()` (seconds per source op),
    `runner.stage_threads` (threads for one call's independent stages; 1: in order),
    `runner.program` (what was compiled), `runner.save(path)`.

    A program whose backend says `calls_split` (IREE with frame state) runs its
    frame split's parts in order for every call, sequential too: IREE compiles
    each cut of the frame into its own code, so one cut for every engine keeps
    them all bit-identical; profiling then reads that split's sections.

    Every call crosses one boundary (`CallBoundary`: argument count, inputs, state and outputs
    checked and converted once), whichever body runs the frame between.
    """

    blas_threads: int | None = BLAS_THREADS
    """BLAS threads while a plain call runs (`blas_limit`; held only if `calls_blas`); None leaves BLAS to its own default."""
    temporal_reuse: list[Any] = []
    """What `cortex-temporal-reuse` carried, per function (`ReuseReport`s; compiler data the driver sets)."""

    def __init__(self, program: Program, stage_threads: int = 1, profile: bool = False, *, workers: int = OMITTED):
        if workers is not OMITTED:
            warn_renamed("LoadedProgram(workers=)", "stage_threads=")
            stage_threads = workers
        whole_number("stage_threads" if workers is OMITTED else "workers", stage_threads, 1, MAX_WORKERS)
        self.program = program
        self.entry = program.entry
        self.args: list[Port] = list(program.args)
        self.results: list[Port] = list(program.results)
        self.inputs = program.inputs
        self._stage_threads = stage_threads
        self.calls_split = program.backend.calls_split and program.split is not None
        """Whether every call runs the frame split's parts in order (the saved program's `calls_split`)."""
        self._split_profiling = False
        part = program.entry_part
        self._executable = program.executables[part.executable]
        self.calls_blas = program.backend.calls_blas
        """Whether the entry's code may reach BLAS (its backend recorded it when compiling): if not, a call holds nothing."""
        self._iree_threads: int | None = None
        self._frames_profiled = 0
        self._stage_pool: tuple[int, ThreadPoolExecutor] | None = None
        self._load()
        self.state: dict[str, Any] = {}
        self.reset()
        if profile:
            self.profiling = True

    def _load(self) -> None:
        """(Re)load the entry's executable, with the `iree_threads` setting; splits load again when next asked for."""
        part = self.program.entry_part
        with_threads = self._iree_threads
        self._loaded = load_executable(self._executable, threads=with_threads)
        self._plain = self._loaded.function(part.symbol)
        self._profiled: Any = None
        self._call = self._plain
        self._boundary = CallBoundary(self.program, threads=with_threads)
        self._entry_part = PartFunction(part, self._plain, weight_values(self.program))
        self._splits: dict[tuple[bool, bool], LoadedSplit] = {}
        self._derived = self._boundary.derived
        self._direct = direct_call(self.program, self._plain, self._boundary)

    @property
    def iree_threads(self) -> int | None:
        """Threads IREE runs one call of this program's compiled code on (CPU targets): 1 on IREE's
        local-sync driver, N > 1 on local-task with N workers (IREE fixes the worker count once per process:
        another count later is refused); None: `CORTEX_IREE_THREADS`, else one. A runtime setting:
        `compiled.iree_threads = N` loads the program's IREE module again (state and profiling kept as they
        are set); NumPy-backend programs are unaffected."""
        return self._iree_threads

    @iree_threads.setter
    def iree_threads(self, n: int | None) -> None:
        if n is not None:
            n = whole_number("iree_threads", n, 1, MAX_WORKERS)
        if n == self._iree_threads:
            return
        profiling = self.profiling
        self._iree_threads = n
        self._load()
        if profiling:
            self.profiling = True

    @property
    def source(self) -> str:
        """The generated code of the entry (NumPy source), for reading."""
        return self._executable.text("source")

    def save(self, path: str | Path, key: str | bytes | None = None) -> Path:
        """Write the program (`cortex.load(path)` reads it back; the state is not saved), atomically; signed
        with `key` (else `CORTEX_PROGRAM_KEY`) when there is one."""
        return self.program.save(path, key)

    def working_set(self) -> int:
        """Peak bytes of the buffers a call keeps for its large intermediates, per frame in flight (NumPy
        backend: buffers reused from call to call, one set per thread; 0 before the first call or for IREE)."""
        loaded = [x for x in (self._loaded, self._profiled) if hasattr(x, "working_set")]
        return max((int(x.working_set()) for x in loaded), default=0)

    # ---- state and profiling

    def reset(self) -> None:
        """Back to before the first frame: every state holds zeros of its type."""
        zeros = {p.name: initial_zeros(p.spec, f"state '{p.name}'") for p in self.args if p.kind == "state"}
        zeros = {**self._derived.initial(), **zeros}
        self.state = self._derived.attach(zeros)  # a derived state's first value is f(zeros) = zeros (temporal reuse)

    @property
    def stage_threads(self) -> int:
        """Threads one call runs its frame's independent stages on (the caller and N - 1 more; 1: in order).
        A runtime setting: `compiled.stage_threads = N`, or `cortex.load(path, stage_threads=N)`."""
        return self._stage_threads

    @stage_threads.setter
    def stage_threads(self, n: int) -> None:
        self._stage_threads = whole_number("stage_threads", n, 1, MAX_WORKERS)

    @property
    def workers(self) -> int:
        """Deprecated: `stage_threads` (`workers` is the frames in flight of `run_video`)."""
        warn_renamed("LoadedProgram.workers", "stage_threads")
        return self._stage_threads

    @workers.setter
    def workers(self, n: int) -> None:
        warn_renamed("LoadedProgram.workers", "stage_threads")
        self.stage_threads = n

    @property
    def split_calls(self) -> bool:
        """Deprecated: `calls_split`, the saved program's name for the same fact."""
        warn_renamed("LoadedProgram.split_calls", "calls_split")
        return self.calls_split

    @property
    def profiling(self) -> bool:
        return self._split_profiling if self.calls_split else self._call is not self._plain

    @profiling.setter
    def profiling(self, on: bool) -> None:
        if self.calls_split:
            self._split_profiling = bool(on)
            return
        if on and self._profiled is None:
            self._profiled = load_executable(self._executable, profile=True, threads=self._iree_threads)
        self._call = self._profiled.function(self.program.entry_part.symbol) if on else self._plain

    def native(self) -> list[str]:
        """What the backend compiled to native code and why the rest stays on the NumPy host code, in words
        (`cortex.runtime.native_report`: the IREE cost rule's figures per run); [] for the NumPy backend."""
        return native_lines(self.program)

    def profile(self, reset: bool = False) -> Profile:
        """Seconds per source op over the calls made while `profiling` was on (a note saying how, if never)."""
        if self.calls_split:
            split = next((v for (profiled, _), v in self._splits.items() if profiled), None)
            if split is None:
                return Profile({}, 0, note=PROFILING_OFF)
            sections = split.sections
            report = Profile(split_fused({k: s.seconds for k, s in sections.items() if s.count}), self._frames_profiled,
                             cpu=split_fused({k: s.cpu_seconds for k, s in sections.items() if s.count}))
            if reset:
                for s in sections.values():
                    s.seconds, s.cpu_seconds, s.count = 0.0, 0.0, 0
                self._frames_profiled = 0
            return report
        if self._profiled is None:
            return Profile({}, 0, note=PROFILING_OFF)
        profiler: Any = self._profiled.profiler
        report = Profile(split_fused({s.label: s.seconds for s in profiler.sections.values() if s.count}), self._frames_profiled,
                         cpu=split_fused({s.label: s.cpu_seconds for s in profiler.sections.values() if s.count}))
        if reset:
            profiler.reset()
            self._frames_profiled = 0
        return report

    def profile_labels(self) -> frozenset[str]:
        """The source ops the entry's profile times (each op of a fused section): what a call of this program
        runs (empty when calls run the split, whose sections are its parts')."""
        if self.calls_split:
            return frozenset()
        if self._profiled is None:
            self._profiled = load_executable(self._executable, profile=True, threads=self._iree_threads)
        return frozenset(op for label in self._profiled.profiler.sections for op in label.split("+"))

    def delayed_updates(self, inputs: tuple[Any, ...], state: dict[str, Any], names: Iterable[str]) -> dict[str, Any] | None:
        """The values the delayed-input states `names` take after a frame of `inputs` (from `state`), computed
        by the frame split's delayed part alone (the values every engine computes them with); None when the
        program has no split whose delayed part writes them all. What a multi-mode program recomputes a
        state with on a switch (`ModeSwitch`)."""
        names = list(names)
        if self.program.split is None or self.calls_split or not set(names) <= set(self.program.states_of("delayed")):
            return None
        split = self.loaded_split()
        env = split.enter(inputs, state)
        split.parts["delayed"](env, None)
        updated = split.updates(env, names)
        return {n: to_caller(split.update_ports[n], v) for n, v in updated.items()}

    def loaded_split(self, profile: bool = False, stages: bool = False) -> LoadedSplit:
        """The program's frame split, loaded (once per kind; `profile`: thread-safe timers per stage)."""
        key = (profile, stages or self.program.backend.split_in_stages)
        if key not in self._splits:
            self._splits[key] = LoadedSplit(self.program, profile=profile, stages=stages, threads=self._iree_threads)
        return self._splits[key]

    def _pool(self) -> ThreadPoolExecutor:
        """The threads one call's stages run on, kept across calls (starting them for each call costs more than a small stage);
        they end when the pipeline is collected (or `stage_threads` changes)."""
        if self._stage_pool is None or self._stage_pool[0] != self._stage_threads:
            if self._stage_pool is not None:
                self._stage_pool[1].shutdown(wait=False)
            self._stage_pool = (self._stage_threads, stage_pool(self._stage_threads))
        return self._stage_pool[1]

    # ---- a frame

    def __call__(self, *inputs: Any, mode: str | None = None) -> tuple[Any, ...]:
        if mode is not None:
            raise CortexError(f"this program was compiled for one mode, so a call takes no mode= (got {mode!r:.40}): "
                              "compile with modes=[...] (or modes='all') to pick the mode per call")
        direct = self._direct
        if direct is not None and self._call is self._plain and self._stage_threads == 1 and type(self.state) is RunnerState \
                and not self.state:
            outputs = direct(inputs)  # None: an argument to convert or refuse, as the boundary does below
            if outputs is not None:
                return outputs
        env = self._boundary.enter(inputs, self.state)
        self._run_frame(env)
        outputs, self.state = self._boundary.outputs(env, inputs)
        return outputs

    def _run_frame(self, env: dict[str, Any]) -> None:
        """One frame on `env` (inputs and state by wiring key), adding its outputs and updates: the split's
        parts in order (`calls_split`), its stages on `stage_threads` threads, or the whole entry."""
        if self.calls_split and (self._stage_threads == 1 or self._split_profiling):
            self.loaded_split(profile=self._split_profiling).step(env, None)
            if self._split_profiling:
                self._frames_profiled += 1
        elif self._stage_threads > 1 and not self.profiling:
            from cortex.runtime.threads import run_concurrent_stages

            run_concurrent_stages(self.loaded_split(stages=True), env, self._stage_threads, self._pool())
        else:
            with blas_limit(self.blas_threads if self.calls_blas else None):
                results = call_generated(self._call, self._entry_part.values(env), f"@{self.entry}")
            self._entry_part.store(env, results)
            if self._call is not self._plain:
                self._frames_profiled += 1

    # ---- frames in flight

    def run_video(self, frames: Iterable[Any], workers: int | None = None, engine: str = "threads",
                  window: int | None = None, profile: bool = False, **engine_options: Any) -> Iterator[tuple[Any, ...]]:
        """Outputs over `frames`, in order, several frames in flight; `self.state` follows.

        Equal to `[compiled(f) for f in frames]` (bit for bit, final state included).
        `workers` defaults to the machine's cores; `window` (items in flight: frames,
        or chunks on Ray) to 2 × workers. Frames are read ahead: the source must not
        overwrite a frame it has already yielded (OpenCV's `VideoCapture.read()`
        returns a new array each time). A source whose next frame may not be there yet (a live
        stream) can have `ready(timeout)` (`NumberedFrames.ready`): frames done meanwhile come out
        without waiting for it (`cortex.runtime.engines.flight`). `engine`: a name in `ENGINES` (`cortex.runtime.engines`):
        "threads" (`profile`: per-stage wall-clock and CPU time in `loaded_split(profile=True).sections`;
        the other engines time nothing yet, and `profile=True` on them warns so),
        "processes" (worker processes past the GIL, frames through shared memory, the pool kept for the
        next run; option chunk) or "ray" (options address, chunk, num_cpus, session, worker_setup).
        A source that raises part-way: the frames read before it are delivered, then its exception.
        A bad frame (wrong shape or dtype, None, ...) stops the run as the loop above would:
        the frames before it are delivered, then "frame k: ..." is raised; a failure while
        frame k runs names frame k too, in every engine.
        """
        return self._engine_run(frames, workers, engine, window, profile, engine_options)

    def run_variants(self, frames: Iterable[Any], runners: Mapping[str, LoadedProgram], mode_of: Callable[[int], str],
                     recompute: Iterable[str], start_state: Callable[[], dict[str, Any]],
                     hand_back: Callable[[dict[str, Any]], None], owner: object = None, program: Program | None = None,
                     workers: int | None = None, engine: str = "threads", window: int | None = None,
                     profile: bool = False, **engine_options: Any) -> Iterator[tuple[Any, ...]]:
        """`run_video` with frame k in the variant `runners[mode_of(k)]` (a multi-mode program's, this being one
        of them), frames in flight across switches, from `start_state()`, the state after the frames delivered
        (their variants' names) to `hand_back`: what `ModeSwitch.run_video` runs on an engine whose `variants`
        is True. `owner` keeps the engine's resources across runs and `program` is the multi-mode program
        (what a worker process is sent); by default this pipeline and its program."""
        chosen = engine_named(engine)
        if not chosen.variants:
            raise CortexError(f"engine {engine!r} runs one variant per run: run_video(modes=...) hands it one run of one mode")

        def with_variants(run: EngineRun, profiled: bool) -> EngineRun:
            splits = {m: r.loaded_split(profile=profiled) for m, r in runners.items()}
            return dataclasses.replace(run, owner=self if owner is None else owner, program=program or self.program,
                                       start_state=start_state, hand_back=hand_back,
                                       variants=FrameVariants(splits, mode_of, frozenset(recompute)))
        return self._engine_run(frames, workers, engine, window, profile, engine_options, with_variants)

    def _engine_run(self, frames: Iterable[Any], workers: int | None, engine: str, window: int | None, profile: bool,
                    engine_options: dict[str, Any],
                    runs_as: Callable[[EngineRun, bool], EngineRun] | None = None) -> Iterator[tuple[Any, ...]]:
        """`run_video` on the engine `engine`; `runs_as` (the run, whether profiled) gives the run the engine is
        handed instead (`run_variants`)."""
        try:
            iter(frames)
        except TypeError:
            raise CortexError(f"run_video takes an iterable of frames (a list, a generator), got {type(frames).__name__}") from None
        workers = machine_cores() if workers is None else whole_number("workers", workers, 1, MAX_WORKERS)
        window = min(2 * workers, MAX_WINDOW) if window is None else whole_number("window", window, 1, MAX_WINDOW)
        chosen = engine_named(engine)
        chosen.check(engine_options)
        profiled = profile and chosen.profiles
        if profile and not profiled:
            warnings.warn(f"engine {engine!r} does not time its stages: run_video(profile=True) collects no profile "
                          "on it (engine 'threads' does)", RuntimeWarning, stacklevel=3)
        split = self.loaded_split(profile=profiled)  # a pipeline that cannot be split fails here
        source = NumberedFrames(frames, split.inputs)
        run = EngineRun(self, self.program, split, source, workers, window, lambda: self.state, self._hand_back)
        if runs_as is not None:
            run = runs_as(run, profiled)
        return source.then_its_error(chosen.run(run, **engine_options))

    def _hand_back(self, state: dict[str, Any]) -> None:
        """An engine's state after the last frame it delivered (`EngineRun.hand_back`)."""
        self.state = state


def direct_call(program: Program, plain: Any, boundary: CallBoundary) -> Callable[[tuple[Any, ...]], tuple[Any, ...] | None] | None:
    """The entry's compiled function's own exact-arguments call (`SegmentCall.exact`) when a call of the
    program is that function alone: a whole-graph entry without state, split or weights, whose inputs and
    outputs are the function's, signed tensors of the same dtypes and shapes. It checks the arguments as the
    boundary would pass them unconverted and returns None for any other (the boundary then converts or
    refuses them, with its messages). None when the program needs more around a call."""
    exact = getattr(plain, "exact", None)
    part = program.entry_part
    if exact is None or not boundary.stateless or (program.backend.calls_split and program.split is not None):
        return None
    if list(part.args) != boundary.input_keys or list(part.results) != boundary.output_keys:
        return None
    signature = plain_signature(boundary.input_ports)
    outputs = plain_signature(boundary.output_ports)
    specs = lambda ss: [(s.dtype, s.shape) for s in ss]  # noqa: E731
    if signature is None or outputs is None or signature != specs(plain.args) or outputs != specs(plain.results):
        return None
    return exact


class NumberedFrames:
    """A run's frame source, numbered once for every engine: frame k is checked as it is read.

    The engines number frames themselves (an item on Ray is a chunk), but only
    the source sees each frame whole and in order. A bad frame ends the source
    there, so the engines finish and deliver every frame before it, exactly as
    `for f in frames: compiled(f)` would; `then_its_error` then raises
    "frame k: ..." (`LoadedProgram.run_video`). An exception the caller's own
    iterator raises (a read error) ends the source the same way: every frame read
    before it is delivered, then it is raised, unchanged (docs/running.md, "When the
    frame source fails"). Ctrl-C (what is not an `Exception`) goes through at once.
    """

    def __init__(self, frames: Iterable[Any], check: Callable[[tuple[Any, ...]], object]):
        """`check(args)`: a CortexError for arguments the entry does not take (`LoadedSplit.inputs`)."""
        self.frames, self.check = frames, check
        self.error: Exception | None = None

    def __iter__(self) -> Iterator[Any]:
        source = iter(self.frames)
        for index in itertools.count():
            try:
                item = next(source)
            except StopIteration:
                return
            except Exception as e:  # noqa: BLE001 - raised by `then_its_error`, after the frames read before it
                self.error = e
                return
            try:
                self.check(as_args(item))
            except CortexError as e:
                self.error = CortexError(f"frame {index}: {e}")
                return
            yield item

    def ready(self, timeout: float = 0.0) -> bool:
        """Whether the next frame (or the end) can be read without waiting, after waiting at most `timeout`
        seconds for it: the caller's source's own `ready` (a live stream's), else always."""
        ready = getattr(self.frames, "ready", None)
        return True if ready is None else bool(ready(timeout))

    def then_its_error(self, outputs: Iterator[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
        """`outputs`, then the error the source stopped at, if it stopped at one."""
        yield from outputs
        if self.error is not None:
            error, self.error = self.error, None
            raise error


def loaded(program: Program, stage_threads: int = 1, profile: bool = False) -> LoadedProgram | ModeSwitch:
    """`program` ready to run: a `LoadedProgram`, or for a multi-mode program a `ModeSwitch` over one
    `LoadedProgram` per variant."""
    if not program.variants:
        return LoadedProgram(program, stage_threads, profile)
    recompute, reads, writes = mode_sets(program)
    runners = {m: LoadedProgram(v, stage_threads, profile) for m, v in program.variants.items()}
    return ModeSwitch(runners, recompute, reads, writes, program=program)


def load(path: str | Path, stage_threads: int = 1, profile: bool = False,
         key: str | bytes | None = None, *, workers: int = OMITTED) -> LoadedProgram | ModeSwitch:
    """A saved program (`compiled.save(path)`), ready to run: `cortex.load(path)`.

    A program file is code, as a pickle or a `.vmfb` is: loading runs the Python source it carries. Load
    only files you trust. Its digests catch a damaged file, not an edited one; to load programs from
    elsewhere, save them with a key and load with the same key (`key=`, else the CORTEX_PROGRAM_KEY
    environment variable): then only a file whose HMAC-SHA256 matches loads.

    `stage_threads` and `profile` set how it runs (`compiled.stage_threads`, `compiled.profiling`).
    """
    if not isinstance(path, (str, PathLike)):
        raise CortexError(f"cortex.load takes a path (str or pathlib.Path), got {type(path).__name__}")
    if workers is not OMITTED:
        warn_renamed("cortex.load(path, workers=)", "stage_threads=")
        stage_threads = workers
    whole_number("stage_threads" if workers is OMITTED else "workers", stage_threads, 1, MAX_WORKERS)  # before reading the file
    return loaded(Program.load(path, key), stage_threads, profile)


if not TYPE_CHECKING:  # the former name, for one release (type checkers see only the new one)
    __getattr__ = renamed_attributes(__name__, {"CompiledPipeline": "LoadedProgram"})

__all__ = ["ENGINES", "LoadedProgram", "NumberedFrames", "load", "loaded"]
