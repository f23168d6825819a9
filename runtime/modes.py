"""One pipeline for several request types: a variant per mode, picked per call, over one named state.

    compiled = cortex.compile(cortex.examples.L2_PIPELINE, modes="all")
    compiled(frame)                         # the first mode ("balanced")
    compiled(frame, mode="power_save")      # that mode's variant: a dict lookup, no compile
    for out in compiled.run_video(frames, modes=lambda k: "motion" if k % 10 else "balanced"): ...
    compiled.frames_per_mode, compiled.profiles()

`ModeSwitch` holds one runner per mode (a `LoadedProgram` of each variant of a multi-mode `Program`,
or a reference interpreter per mode: `cortex.reference(module, modes=...)`) and the named state they
share: the state is the program's, not a variant's, so a frame continues from exactly the state the
previous frame left whatever mode wrote it. A variant updates only the states it needs; what the others
may read is decided at compile time (`Program.switch_states`, `cortex.passes.mode_states`):

- "keep": every variant updates the state (nothing to do here);
- "recompute": a delayed input the frame's mode did not update is *stale*; before a mode that reads it
  runs (or when `state` is read), it is recomputed from the last frame by a variant that writes it (its
  frame split's delayed part alone, else its whole frame), so it equals what every-frame updating would
  have left, bit for bit.

States temporal reuse derives from another (`RunnerState.derived`) follow their source by identity:
carried while the source is the very object they were derived from, recomputed otherwise.

`run_video(frames, modes=...)` keeps frames in flight across switches on an engine that runs each frame in
its own variant (`Engine.variants`: threads and processes): the engine is handed every variant's frame
split, the multi-mode program (what worker processes are sent) and each frame's mode (`FrameVariants`),
holds the states by name across the variants, and recomputes a stale delayed input before the next frame
that reads it. The state the engine hands back is merged here, and each delivered frame counted in order,
as a call's would be. On the other engines (Ray; and where the variants disagree on a state's class or on
the derived states of temporal reuse) each run of consecutive frames of one mode goes through that
variant's own `run_video` (frames in flight within the run; a switch waits for the run's last frame).
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from cortex.errors import CortexError
from cortex.runtime.values import RunnerState

ModeSchedule = Sequence[str] | Callable[[int], str] | None
"""`run_video`'s `modes`: one mode name per frame, a function frame index → mode, or None (the default mode)."""


class ModeSwitch:
    """Runners of one entry, one per mode, called frame after frame over one shared named state (module doc).

    `reads[m]` / `writes[m]`: the recomputable states ("recompute" in `switch_states`) mode m's runner
    reads / updates; the others are updated by every runner.
    """

    def __init__(self, runners: Mapping[str, Any], recompute: Iterable[str] = (),
                 reads: Mapping[str, set[str]] | None = None, writes: Mapping[str, set[str]] | None = None,
                 program: Any = None):
        if not runners:
            raise CortexError("a multi-mode pipeline needs at least one mode")
        self.runners = dict(runners)
        self.modes = tuple(self.runners)
        self.default_mode = self.modes[0]
        self.recompute = frozenset(recompute)
        self.reads = {m: set((reads or {}).get(m, self.recompute)) & self.recompute for m in self.modes}
        self.writes = {m: set((writes or {}).get(m, self.recompute)) & self.recompute for m in self.modes}
        self.program = program
        """The multi-mode `Program` the runners are the variants of (None for reference interpreters)."""
        self.mode_report: list[str] = []
        """What the compiler did with the states the modes share (the DCE report's mode lines)."""
        self.frames_per_mode: collections.Counter[str] = collections.Counter()
        """Frames run per mode since the last `reset()` (calls and `run_video` frames)."""
        self._state: dict[str, Any] = {}
        self._stale: set[str] = set()
        self._last: tuple[Any, ...] | None = None
        self.reset()

    # ---- modes and state

    def mode_named(self, mode: str | None) -> str:
        """`mode` checked (None: the default mode), or a CortexError naming the modes compiled."""
        if mode is None:
            return self.default_mode
        if mode not in self.runners:
            raise CortexError(f"unknown mode {mode!r:.60} (this program has: {', '.join(self.modes)})")
        return mode

    def reset(self) -> None:
        """Back to before the first frame: every state zeros, no frame counted."""
        merged: dict[str, Any] = {}
        derived: dict[str, Any] = {}
        for runner in self.runners.values():
            runner.reset()
            merged.update(runner.state)
            derived.update(getattr(runner.state, "derived", {}))
        self._state = self._with_derived(merged, derived)
        self._stale, self._last = set(), None
        self.frames_per_mode.clear()

    @property
    def state(self) -> dict[str, Any]:
        """The named states (state name → value), exact: a stale recomputable state is recomputed first."""
        if self._stale:
            self._refresh(set(self._stale))
        return self._state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        if not isinstance(value, dict):
            raise CortexError(f"runner.state must be a dict of state name to value, got {type(value).__name__}")
        self._state, self._stale, self._last = value, set(), None

    @staticmethod
    def _with_derived(values: dict[str, Any], derived: dict[str, Any]) -> dict[str, Any]:
        if not derived:
            return values
        state = RunnerState(values)
        state.derived = dict(derived)
        return state

    def _merge(self, after: dict[str, Any]) -> None:
        """The state after a frame: the runner's, plus the states it does not hold (carried as they were)."""
        if self._state.keys() <= after.keys():
            self._state = after
            return
        derived = {**getattr(self._state, "derived", {}), **getattr(after, "derived", {})}
        self._state = self._with_derived({**self._state, **after}, derived)

    def _refresh(self, names: set[str]) -> None:
        """Recompute the stale states `names` from the last frame, by runners that write them."""
        assert self._last is not None, "a state is stale only after a frame"
        todo = set(names)
        for mode in self.modes:
            got = self.writes[mode] & todo
            if not got:
                continue
            runner = self.runners[mode]
            delayed = getattr(runner, "delayed_updates", None)
            values = delayed(self._last, self._state, got) if delayed is not None else None
            if values is not None:  # the frame split's delayed part alone: what the state's update needs
                self._merge({**self._state, **values})
                todo -= got
                if not todo:
                    break
                continue
            kept, profiled = runner.state, getattr(runner, "profiling", False)
            runner.state = self._state
            if profiled:  # not a frame of that mode: its profile does not count it
                runner.profiling = False
            try:
                runner(*self._last)
                values = {n: runner.state[n] for n in got}
            finally:
                runner.state = kept
                if profiled:
                    runner.profiling = True
            self._merge({**self._state, **values})
            todo -= got
            if not todo:
                break
        self._stale -= names

    def _before(self, mode: str) -> Any:
        """The runner of `mode`, its stale reads recomputed and the shared state handed to it."""
        runner = self.runners[mode]
        if self._stale & self.reads[mode]:
            self._refresh(self._stale & self.reads[mode])
        runner.state = self._state
        return runner

    def _after(self, mode: str, state: dict[str, Any], last: tuple[Any, ...] | None, frames: int) -> None:
        """`frames` frames of `mode` ran, leaving `state` (the runner's names); `last`: the last one's inputs."""
        self._merge(state)
        self._counted(mode, last, frames)

    def _counted(self, mode: str, last: tuple[Any, ...] | None, frames: int) -> None:
        """`frames` frames of `mode` ran (their state merged); `last`: the last one's inputs."""
        self.frames_per_mode[mode] += frames
        missed = self.recompute - self.writes[mode]
        if self.recompute:
            self._stale = (self._stale - self.writes[mode]) | missed
            if missed and last is not None:
                self._last = last

    # ---- a frame

    def __call__(self, *inputs: Any, mode: str | None = None) -> tuple[Any, ...]:
        """One frame in `mode` (None: the default mode), from the shared state."""
        mode = self.mode_named(mode)
        runner = self._before(mode)
        outputs = runner(*inputs)
        last = None
        if self.recompute - self.writes[mode]:  # kept for a later recompute: the caller may reuse its buffers
            last = tuple(x.copy() if isinstance(x, np.ndarray) else x for x in inputs)
        self._after(mode, runner.state, last, 1)
        return outputs

    def run_video(self, frames: Iterable[Any], workers: int | None = None, engine: str = "threads",
                  modes: ModeSchedule = None, **options: Any) -> Iterator[tuple[Any, ...]]:
        """Outputs over `frames`, frame k in mode `modes[k]` (or `modes(k)`; None: the default mode), equal to
        `[compiled(f, mode=m) for ...]`, with `workers`, `engine` and `options`: frames in flight across
        switches where the engine takes per-frame variants, else each run of one mode through that variant's
        `run_video` (module doc); a bad mode stops the run there ("frame k: unknown mode")."""
        pick = self.schedule(modes)
        try:
            iter(frames)
        except TypeError:
            raise CortexError(f"run_video takes an iterable of frames (a list, a generator), got {type(frames).__name__}") from None
        if self._in_flight(engine):
            return self._flight(iter(frames), pick, workers, engine, options)
        return self._runs(iter(frames), pick, workers, engine, options)

    def _in_flight(self, engine: str) -> bool:
        """Whether `run_video` can keep frames in flight across switches: an engine that runs a variant per
        frame, variants with a frame split that agree on each state's class, and derived states (temporal
        reuse) that every variant holds and updates alike. Otherwise each run of one mode runs on its own."""
        from cortex.runtime.engines import ENGINES

        if self.program is None or not isinstance(engine, str) or not getattr(ENGINES.get(engine), "variants", False):
            return False
        variants = list(self.program.variants.values())
        if any(v.split is None for v in variants):
            return False
        classes: dict[str, str] = {}
        for v in variants:
            for s in v.states:
                if classes.setdefault(s.name, s.kind) != s.kind:
                    return False
        derived = [frozenset(p.results[0] for p in v.derived) for v in variants]
        updated = [frozenset(f"update:{p.name}" for p in v.results if p.kind == "state") for v in variants]
        return all(d == derived[0] and d <= u for d, u in zip(derived, updated))

    def _flight(self, frames: Iterator[Any], pick: Callable[[int], str], workers: int | None, engine: str,
                options: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
        """Frame k in `pick(k)`'s variant, frames in flight across switches (`LoadedProgram.run_variants`):
        the state the engine hands back (each frame's, or the last delivered one's when the run ends) merged,
        and each delivered frame counted in order, as a sequential call's would be."""
        if self._stale:  # the run starts from the exact state: what a sequential switch recomputes lazily
            self._refresh(set(self._stale))
        read: collections.deque[tuple[str, Any]] = collections.deque()
        modes: dict[int, str] = {}

        def source() -> Iterator[Any]:
            for index, item in enumerate(frames):
                modes[index] = pick(index)
                read.append((modes[index], item))
                yield item

        first = self.runners[self.default_mode]
        outputs = first.run_variants(source(), self.runners, modes.pop, self.recompute, lambda: self._state, self._merge,
                                     self, self.program, workers=workers, engine=engine, **options)

        def delivered() -> Iterator[tuple[Any, ...]]:
            for out in outputs:
                mode, item = read.popleft()
                self._counted(mode, item if isinstance(item, tuple) else (item,), 1)
                yield out
        return delivered()

    def schedule(self, modes: ModeSchedule) -> Callable[[int], str]:
        """`run_video`'s `modes` as a function frame index → checked mode (a sequence is checked whole, now)."""
        if modes is None:
            return lambda _: self.default_mode
        if callable(modes):
            def pick(index: int) -> str:
                try:
                    return self.mode_named(modes(index))
                except CortexError as e:
                    raise CortexError(f"frame {index}: {e}") from None
            return pick
        if isinstance(modes, (str, bytes)) or not isinstance(modes, Sequence):
            raise CortexError(f"modes must be a sequence of mode names or a function frame index -> mode, got {modes!r:.60}")
        checked = []
        for index, m in enumerate(modes):
            try:
                checked.append(self.mode_named(m))
            except CortexError as e:
                raise CortexError(f"modes[{index}]: {e}") from None

        def listed(index: int) -> str:
            if index >= len(checked):
                raise CortexError(f"frame {index}: modes names {len(checked)} frames only")
            return checked[index]
        return listed

    def _runs(self, frames: Iterator[Any], pick: Callable[[int], str], workers: int | None, engine: str,
              options: dict[str, Any]) -> Iterator[tuple[Any, ...]]:
        index = 0
        pending = next(frames, _END)
        pending_mode = pick(0) if pending is not _END else ""
        while pending is not _END:
            mode = pending_mode
            runner = self._before(mode)
            count, last = 0, None

            def run(mode: str = mode) -> Iterator[Any]:
                nonlocal pending, pending_mode, index, count, last
                while pending is not _END and pending_mode == mode:
                    item, last = pending, pending
                    count += 1
                    index += 1
                    yield item
                    pending = next(frames, _END)
                    if pending is not _END:
                        pending_mode = pick(index)

            if hasattr(runner, "run_video"):
                yield from runner.run_video(run(), workers=workers, engine=engine, **options)
            else:  # an interpreter: frame after frame
                if (workers or 1) > 1 or engine != "threads" or options:
                    raise CortexError("the reference interpreter runs frame after frame: run_video takes no workers, "
                                      "engine or options there")
                for item in run():
                    yield runner(*(item if isinstance(item, tuple) else (item,)))
            args = last if isinstance(last, tuple) else (last,)
            self._after(mode, runner.state, args, count)

    # ---- what ran

    @property
    def stage_threads(self) -> int:
        """Threads one call runs its frame's independent stages on (`LoadedProgram.stage_threads`): the
        default mode's runner's; setting it sets every mode's."""
        return int(self.runners[self.default_mode].stage_threads)

    @stage_threads.setter
    def stage_threads(self, n: int) -> None:
        for runner in self.runners.values():
            runner.stage_threads = n

    @property
    def iree_threads(self) -> int | None:
        """Threads IREE runs one call on (`CompiledPipeline.iree_threads`): the default mode's runner's;
        setting it sets every mode's."""
        return getattr(self.runners[self.default_mode], "iree_threads", None)

    @iree_threads.setter
    def iree_threads(self, n: int | None) -> None:
        for runner in self.runners.values():
            runner.iree_threads = n

    @property
    def profiling(self) -> bool:
        return all(getattr(r, "profiling", False) for r in self.runners.values())

    @profiling.setter
    def profiling(self, on: bool) -> None:
        for runner in self.runners.values():
            runner.profiling = on

    def profiles(self, reset: bool = False) -> dict[str, Any]:
        """Each mode's profile (`runner.profile()`: seconds per source op over that mode's frames)."""
        return {m: r.profile(reset=reset) for m, r in self.runners.items()}

    def stage_labels(self, mode: str) -> frozenset[str]:
        """The source ops `mode`'s variant runs, as its profile names them (empty if the runner cannot say)."""
        labels = getattr(self.runners[self.mode_named(mode)], "profile_labels", None)
        return labels() if labels is not None else frozenset()

    def profile(self, reset: bool = False) -> Any:
        """Seconds per source op over every mode's profiled frames (`profiles()` splits them by mode)."""
        parts = self.profiles(reset)
        first = next(iter(parts.values()))
        seconds: dict[str, float] = {}
        for p in parts.values():
            for op, s in p.items():
                seconds[op] = seconds.get(op, 0.0) + s
        return type(first)(seconds, sum(p.frames for p in parts.values()), note=None if seconds else first.note)

    def save(self, path: Any, key: Any = None) -> Any:
        """Write the multi-mode program, every variant (`cortex.load` reads it back)."""
        if self.program is None:
            raise CortexError("a reference interpreter has no program to save: compile the module")
        return self.program.save(path, key)

    def __getattr__(self, name: str) -> Any:
        """What is not per mode (`entry`, `inputs`, `source`, ...) is the default mode's runner's."""
        if name.startswith("_") or name in ("runners", "modes", "default_mode", "program"):
            raise AttributeError(name)
        return getattr(self.runners[self.default_mode], name)


_END = object()


def mode_sets(program: Any) -> tuple[set[str], dict[str, set[str]], dict[str, set[str]]]:
    """A multi-mode `Program`'s recomputable states, and per mode those its variant reads and writes."""
    recompute = {s for s, d in program.switch_states.items() if d == "recompute"}
    reads, writes = {}, {}
    for mode, variant in program.variants.items():
        sources = {p.args[0].split(":", 1)[1] for p in variant.derived}
        reads[mode] = ({p.name for p in variant.args if p.kind == "state"} | sources) & recompute
        writes[mode] = {p.name for p in variant.results if p.kind == "state"} & recompute
    return recompute, reads, writes


__all__ = ["ModeSchedule", "ModeSwitch", "mode_sets"]
