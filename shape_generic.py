"""A shape-generic pipeline, compiled once per concrete input shape (as `jax.jit` traces once per shape).

`cortex.compile` (and `cortex.reference`) of a module whose entry takes an
argument with `?` dimensions returns a `ShapeGenericPipeline`. Calling it
with inputs of a new shape binds the generic module to that shape and
compiles the static module with the very options the call asked for; later
calls of that shape reuse it. Binding is a pass pipeline (`binding(shape)`
prints it; `cortex.passes.pad_frames.binding_pipeline`): a frame of any
H×W is padded in IR to the block grid and the encoder crops back
(`cortex-pad-frames`: one score cell per started block, a JPEG of the
frame's own size), then `cortex-specialize-shapes` infers every shape with
real numbers, every deferred rule checked then. The cache
holds at most `max_shapes` programs, least recently used dropped first;
`compiled_shapes` lists them, `compile_seconds` what each cost.

Why per shape and not one shape-generic program: the static program is the
one a static pipeline gets (same lowering, same emitted code, same per-frame
time), the lowering and every backend (NumPy, upstream MLIR, IREE) stay
static, and a video's frame size is known before its first frame, so
`specialize(shape)` (or `run_video`, which looks at the first frame) does
the compiling up front: the schedulers and engines below only ever run a
static program and never compile.

State follows the shape: a call whose shape differs from the previous
call's starts that shape's program from its initial state (zeros), as a new
stream would — a `prev_gray` of another size means nothing. Within one
`run_video` the frames must keep one size (the static program refuses
another, naming the frame).

This module sits between the pass registry and the driver: it is handed the
driver's compile function and never imports it.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp, TensorType

from cortex.dialects import shapes
from cortex.errors import CortexError, whole_number
from cortex.ir import make_context
from cortex.passes.pad_frames import binding_pipeline
from cortex.passes.specialize_shapes import bound_type, dynamic_arguments, find_function
from cortex.registry import parse_pipeline
from cortex.runtime.threads import MAX_WORKERS

ShapeKey = tuple[tuple[int, ...] | None, ...]
"""One entry per argument of the entry function: its concrete shape, or None (a scalar)."""

MAX_SHAPES = 8
"""Programs a shape-generic pipeline keeps by default (least recently used dropped first)."""


class ShapeGenericPipeline:
    """A module with `?` input dimensions, compiled on demand for each concrete shape (see module doc).

    `pipeline(*inputs)` runs the program for the inputs' shapes;
    `pipeline.specialize(shape, ...)` compiles ahead of time and returns the
    static program; `compiled_shapes`, `compile_seconds`; `state`, `reset()`,
    `run_video(frames, ...)`, `profile()`, `native()` act on the program of the last shape run;
    `profiling` and `stage_threads` are set on every shape's program.
    """

    def __init__(
        self,
        module: ModuleOp,
        entry: str,
        compile_static: Callable[[ModuleOp], Any],
        max_shapes: int = MAX_SHAPES,
    ):
        fn = find_function(module, entry)
        if fn is None:
            raise CortexError(f"the module has no function @{entry}")
        if isinstance(max_shapes, bool) or not isinstance(max_shapes, int) or max_shapes < 1:
            raise CortexError(f"max_shapes must be an integer >= 1, got {max_shapes!r}")
        self.module = module
        self.entry = entry
        self.arg_types = list(fn.function_type.inputs.data)
        self.dynamic = dynamic_arguments(fn)
        self.max_shapes = max_shapes
        self._compile_static = compile_static
        self._programs: OrderedDict[ShapeKey, Any] = OrderedDict()
        self.compile_seconds: dict[ShapeKey, float] = {}
        """Seconds each shape's specialisation and compilation took (kept after eviction)."""
        self._current: ShapeKey | None = None
        self._profiling = False
        self._stage_threads: int | None = None  # None: each program's own (1)
        self._iree_threads: int | None = None  # None: each program's own (CORTEX_IREE_THREADS, else 1)

    # ---- shapes

    @property
    def signature(self) -> str:
        """The entry's argument types, `?` and all."""
        return ", ".join(str(t) for t in self.arg_types)

    @property
    def compiled_shapes(self) -> list[ShapeKey]:
        """The shapes whose programs are cached, least recently used first."""
        return list(self._programs)

    def key_of(self, inputs: Sequence[Any]) -> ShapeKey:
        """The shape key of a call's inputs (the static program checks everything else)."""
        if len(inputs) != len(self.arg_types):
            raise CortexError(f"@{self.entry} takes {len(self.arg_types)} argument(s), got {len(inputs)}")
        try:
            return tuple(
                tuple(int(d) for d in np.shape(v)) if isinstance(t, TensorType) else None
                for t, v in zip(self.arg_types, inputs)
            )
        except (ValueError, TypeError) as e:  # a ragged nested list has no shape
            raise CortexError(f"@{self.entry}: an argument has no array shape ({' '.join(str(e).split())[:120]})") from None

    def _key(self, arg_shapes: Sequence[Sequence[int] | None]) -> ShapeKey:
        if len(arg_shapes) != len(self.arg_types):
            raise CortexError(f"@{self.entry} takes {len(self.arg_types)} argument(s), got {len(arg_shapes)} shape(s)")
        for k, s in enumerate(arg_shapes):
            if s is not None and (
                isinstance(s, (str, bytes)) or not isinstance(s, Sequence)
                or any(isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)) for d in s)
            ):
                raise CortexError(
                    f"@{self.entry} argument #{k}: a shape is a sequence of whole numbers such as (480, 640, 3), got {s!r:.80}"
                )
        return tuple(None if s is None else tuple(int(d) for d in s) for s in arg_shapes)

    def binding(self, *arg_shapes: Sequence[int] | None) -> str:
        """The passes that bind the generic module to these argument shapes, as `cortex-opt -p` text
        (what `specialize` and a call of that shape run before compiling)."""
        return binding_pipeline(self.module, self.entry, self._key(arg_shapes))

    def bind(self, key: ShapeKey) -> ModuleOp:
        """A copy of the generic module bound to `key` by the `binding` passes (each shape checked first
        against its argument's declared type, so an error names that type)."""
        fn = find_function(self.module, self.entry)
        assert fn is not None, "checked when made"
        for index, shape in enumerate(key):
            if shape is not None:
                bound_type(fn, index, shape)
        static = self.module.clone()
        ctx = make_context()
        for step in parse_pipeline(binding_pipeline(self.module, self.entry, key)):
            step.apply(ctx, static)
        return static

    def specialize(self, *arg_shapes: Sequence[int] | None) -> Any:
        """The static program for these argument shapes (one per argument; None for a scalar),
        compiled now unless cached. A shape that breaks a rule is a CortexError naming it."""
        return self._program(self._key(arg_shapes))

    def _program(self, key: ShapeKey) -> Any:
        program = self._programs.get(key)
        if program is not None:
            self._programs.move_to_end(key)
            return program
        start = time.perf_counter()
        program = self._compile_static(self.bind(key))
        self.compile_seconds[key] = time.perf_counter() - start
        if self._profiling:
            program.profiling = True
        if self._stage_threads is not None:
            program.stage_threads = self._stage_threads
        if self._iree_threads is not None:
            program.iree_threads = self._iree_threads
        self._programs[key] = program
        while len(self._programs) > self.max_shapes:
            evicted, _ = self._programs.popitem(last=False)
            if evicted == self._current:
                self._current = None
        return program

    def _switch(self, key: ShapeKey) -> Any:
        """The program for `key`, reset to its initial state when the last call had another shape."""
        program = self._program(key)
        if key != self._current:
            program.reset()
            self._current = key
        return program

    # ---- running

    def __call__(self, *inputs: Any, **call: Any) -> tuple[Any, ...]:
        """The program of the inputs' shapes, called (`call`: a multi-mode program's `mode=`)."""
        return self._switch(self.key_of(inputs))(*inputs, **call)

    def run_video(self, frames: Iterable[Any], workers: int | None = None, engine: str = "threads", **options: Any):
        """Outputs frame after frame: the first frame's shape picks (and, if new, compiles) the program
        before any frame runs; the engines then run that static program."""
        try:
            iterator = iter(frames)
        except TypeError:
            raise CortexError(f"run_video takes an iterable of frames (a list, a generator), got {type(frames).__name__}") from None
        try:
            first = next(iterator)
        except StopIteration:
            return iter(())
        inputs = first if isinstance(first, tuple) else (first,)
        program = self._switch(self.key_of(inputs))
        return program.run_video(chain([first], iterator), workers=workers, engine=engine, **options)

    def save(self, path: Any, key: Any = None) -> Any:
        """A program is compiled per shape: save one shape's (`specialize(shape).save(path)`)."""
        raise CortexError(
            f"@{self.entry} is shape-generic ({self.signature}): a saved program has one shape; "
            "save one with specialize(shape).save(path)"
        )

    @property
    def current(self) -> Any:
        """The program of the last shape run (a CortexError before any)."""
        if self._current is None:
            raise CortexError(
                f"@{self.entry} is shape-generic ({self.signature}): no shape has run yet "
                "(call it, or specialize(shape) first)"
            )
        return self._programs[self._current]

    @property
    def state(self) -> dict[str, Any]:
        return self.current.state

    @state.setter
    def state(self, value: dict[str, Any]) -> None:
        self.current.state = value

    def reset(self) -> None:
        """The current shape's program back to before its first frame (nothing to do before any run)."""
        if self._current is not None:
            self.current.reset()

    @property
    def profiling(self) -> bool:
        return self._profiling

    @profiling.setter
    def profiling(self, on: bool) -> None:
        self._profiling = bool(on)
        for program in self._programs.values():
            program.profiling = self._profiling

    @property
    def stage_threads(self) -> int:
        """Threads one call runs its frame's independent stages on (`LoadedProgram.stage_threads`), for
        every shape's program, compiled or to come."""
        return 1 if self._stage_threads is None else self._stage_threads

    @stage_threads.setter
    def stage_threads(self, n: int) -> None:
        self._stage_threads = whole_number("stage_threads", n, 1, MAX_WORKERS)
        for program in self._programs.values():
            program.stage_threads = n

    @property
    def iree_threads(self) -> int | None:
        """Threads IREE runs one call on (`CompiledPipeline.iree_threads`), for every shape's program,
        compiled or to come."""
        return self._iree_threads

    @iree_threads.setter
    def iree_threads(self, n: int | None) -> None:
        self._iree_threads = None if n is None else whole_number("iree_threads", n, 1, MAX_WORKERS)
        for program in self._programs.values():
            program.iree_threads = n

    def native(self) -> list[str]:
        """What the last shape's program runs as native code, and why the rest stays on NumPy (its `native()`)."""
        return self.current.native()

    def profile(self, reset: bool = False) -> Any:
        return self.current.profile(reset=reset)

    def __repr__(self) -> str:
        done = ", ".join(describe_key(k) for k in self._programs) or "none yet"
        return f"<ShapeGenericPipeline @{self.entry}({self.signature}); compiled for: {done}>"


def describe_key(key: ShapeKey) -> str:
    return "(" + ", ".join("scalar" if s is None else shapes.fmt(s) for s in key) + ")"


__all__ = ["MAX_SHAPES", "ShapeGenericPipeline", "describe_key"]
