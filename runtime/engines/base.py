"""The one interface every engine has (`cortex.runtime.engines.ENGINES`: name → engine).

An engine checks its options before anything starts (`check`: a CortexError naming what it does not
take) and runs one `run_video` (`run`), handed an `EngineRun`: the program's loaded frame split, the
checked frame source, the worker count and window, the state the run starts from, and `hand_back`, which
it calls with the state after the last frame it delivered (each frame, or when the run ends). It never
writes the caller's objects itself. An engine that says `variants` also runs a multi-mode program's frames
each in its own variant (`EngineRun.variants`: frames in flight across a mode switch). Every engine's outputs and final state equal the sequential loop's,
bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from cortex.runtime.parts import LoadedSplit
from cortex.runtime.program import Program


@dataclass
class FrameVariants:
    """A multi-mode program's frames, each run by its own variant (`cortex.runtime.modes.ModeSwitch`).

    The variants share the named states by name; a state a variant holds no port for is carried as it was.
    A delayed input in `recompute` that a frame's variant does not update is stale after that frame: the
    next frame whose variant reads it first recomputes it from the frame before, by the delayed part of the
    first variant (in order) that updates it, as a sequential switch does."""

    splits: Mapping[str, LoadedSplit]
    """Mode → its variant's loaded frame split, in the program's order."""
    mode_of: Callable[[int], str]
    """Frame index → its mode (asked once per frame, in order, as the engine reads it)."""
    recompute: frozenset[str] = field(default_factory=frozenset)


@dataclass
class EngineRun:
    """One `run_video`, as an engine is handed it."""

    owner: object
    """What the engine keeps resources with across runs (the compiled pipeline: a processes pool ends with it)."""
    program: Program
    """The compiled program (a run with `variants`: the multi-mode one, every variant: what a worker process
    is sent)."""
    split: LoadedSplit
    frames: Iterable[Any]
    """The frame source, each item checked as it is read (`NumberedFrames`): an item is the entry's
    arguments, a tuple for several."""
    workers: int
    window: int
    start_state: Callable[[], dict[str, Any]]
    """The caller's state (its names) the run starts from, read when the run starts."""
    hand_back: Callable[[dict[str, Any]], None]
    """Takes the state (the caller's names) after the last frame delivered."""
    variants: FrameVariants | None = None
    """Per-frame variants (an engine whose `variants` is True), or None: every frame runs `split`."""


class Engine(Protocol):
    """An executor of `run_video` (`ENGINES`)."""

    name: str
    options: tuple[str, ...]
    """The keyword options `run_video(engine=name, ...)` passes on to `run`."""
    profiles: bool
    """Whether `run_video(profile=True)` times this engine's stages (`loaded_split(profile=True)`); where not, it warns."""
    variants: bool
    """Whether the engine runs each frame in its own variant (`EngineRun.variants`); else a multi-mode
    `run_video` hands it one run of one mode at a time."""

    def check(self, options: dict[str, Any]) -> None:
        """A CortexError for an option the engine does not take or a bad value, before anything starts."""
        ...

    def run(self, run: EngineRun, **options: Any) -> Iterator[tuple[Any, ...]]:
        """The outputs of every frame, in order (a generator: nothing starts before the first is asked for)."""
        ...


def unknown_options(engine: str, options: dict[str, Any], takes: tuple[str, ...]) -> None:
    """A CortexError naming the options of `options` the engine does not take."""
    from cortex.errors import CortexError

    unknown = sorted(set(options) - set(takes), key=str)
    if not unknown:
        return
    if not takes:
        raise CortexError(f"engine {engine!r} takes no options {unknown}")
    said = f"the option {takes[0]}" if len(takes) == 1 else f"the options {', '.join(takes)}"
    raise CortexError(f"engine {engine!r} takes {said}; got {', '.join(map(str, unknown))}")


__all__ = ["Engine", "EngineRun", "FrameVariants", "unknown_options"]
