"""Shared by the scheduling tests (frame split, frame- and stage-parallel, Ray): compile, feed
frames, compare bit for bit, and run the frame split's parts under the reference interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func

import cortex
from cortex.dialects.abi import FRAME_PARTS as PARTS
from cortex.dialects.abi import SPLIT_ARGS as ARGS_ATTR
from cortex.dialects.abi import SPLIT_RESULTS as RESULTS_ATTR
from cortex.errors import CortexError
from cortex.interpreter.reference import CortexFunctions, ReferenceRunner
from cortex.runtime.pipeline import LoadedProgram
from cortex.semantics.modes import BLUR_AUTO, INPUT_DEFAULTS
from cortex.video.synthetic import SyntheticVideo

FRAMES = 60
MODES = ("balanced", "power_save", "motion")


def passes(mode):
    return f"cortex-specialize-mode{{mode={mode}}},canonicalize,dce"


_PROGRAMS: dict[tuple[str, str], tuple[object, list]] = {}


def compile_text(text, stage_threads=1, profile=False, **options):
    """`cortex.compile(cortex.parse(text), **options)` with `stage_threads` and `profiling` set on it, compiled once
    per (text, options) in a test process.

    The runtime's tests compile the same few pipelines dozens of times, and each compile is seconds. A
    `Program` is immutable and every `LoadedProgram` loads its own code and state from it, so a new
    pipeline over the first compile's program is what a new compile gives (a shape-generic one is not kept)."""
    key = (text, repr(sorted((name, sorted(v.items()) if isinstance(v, dict) else v) for name, v in options.items())))
    if key in _PROGRAMS:
        program, reuse = _PROGRAMS[key]
        pipeline = LoadedProgram(program, stage_threads, profile)
        pipeline.temporal_reuse = list(reuse)
        return pipeline
    pipeline = cortex.compile(cortex.parse(text), **options)
    if type(pipeline) is LoadedProgram:
        _PROGRAMS[key] = (pipeline.program, list(pipeline.temporal_reuse))
    pipeline.stage_threads = stage_threads
    pipeline.profiling = profile
    return pipeline


def with_stage_threads(pipeline, threads):
    """`pipeline` with `stage_threads` set (one call's independent stages on that many threads)."""
    pipeline.stage_threads = threads
    return pipeline


def compiled(text, mode="balanced", specialise=True):
    return compile_text(text, mode=mode, passes=passes(mode) if specialise else None)


def frames_of(size, n=FRAMES, start=0):
    video = SyntheticVideo(*size)
    return [video.frame(i) for i in range(start, start + n)]


def assert_same(got, want):
    """Same number of calls, each with the same outputs: dtype, shape and bytes."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert len(g) == len(w)
        for a, b in zip(g, w):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def assert_same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), k


def snapshot(values):
    """Copies of the arrays among `values` (what the caller saw, whatever it does to them later)."""
    return [np.array(v, copy=True) if isinstance(v, np.ndarray) else v for v in values]


def vandalise(array: np.ndarray) -> None:
    """Overwrite a caller-owned buffer in place with values no frame produces."""
    assert array.flags.writeable, "a returned array the caller cannot write into"
    array[...] = np.full_like(array, 77 if array.dtype == np.uint8 else -1234.5)


def delivered_before_error(outputs, match: str) -> list:
    """What a run delivers before it stops with the CortexError `match` (a run that does not raise it fails)."""
    got = []
    with pytest.raises(CortexError, match=match):
        for out in outputs:
            got.append(out)
    return got


def sequential(pipeline, frames):
    return [pipeline(f) for f in frames]


def entry_of(module, name="l2_frame") -> func.FuncOp:
    return next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == name)


def keys(fn, attr):
    return [k.data for k in fn.attributes[attr].data]


def call_reference(runner: ReferenceRunner, args: list):
    """The interpreter on a part (its i1/f32 arguments are internal values the runner's checks do not take)."""
    functions = CortexFunctions(runner.weights, runner._weight_source)
    return runner._interpreter(functions).call_op(runner.function, tuple(args))


def run_parts_reference_with(module, frames, initial, mode="balanced", weights=None):
    """Run the split parts delayed → parallel → recurrence → tail frame after frame, wired by their keys;
    `weights` (runtime inputs such as the blur gate's) go to every part as they would to the entry."""
    if weights is None:
        weights = None if mode else {}
    runners = {p: ReferenceRunner(module, entry=f"l2_frame__{p}", mode=mode, weights=weights) for p in PARTS}
    fns = {p: entry_of(module, f"l2_frame__{p}") for p in PARTS}
    state = dict(initial)
    outputs = []
    for frame in frames:
        env = {"input:0": frame, **{f"state:{n}": v for n, v in state.items()}}
        for part in PARTS:
            values = call_reference(runners[part], [env[k] for k in keys(fns[part], ARGS_ATTR)])
            env.update(zip(keys(fns[part], RESULTS_ATTR), values))
        state.update({k.removeprefix("update:"): v for k, v in env.items() if k.startswith("update:")})
        outputs.append(tuple(env[f"output:{i}"] for i in range(len(keys(fns["tail"], RESULTS_ATTR)))))
    return outputs, state


GATES = {"auto": BLUR_AUTO, "fixed": {**INPUT_DEFAULTS, "blur_threshold": 150.0}}
"""The blur gate's runtime inputs: the relative (auto) gate and a fixed threshold that gates the blurred frames."""


def gated_frames(pipeline, frames):
    """Frames the gate skipped in a sequential run (the score kept: equal to the previous frame's)."""
    outs = sequential(pipeline, frames)
    return outs, [i for i in range(1, len(outs)) if np.asarray(outs[i][1]).tobytes() == np.asarray(outs[i - 1][1]).tobytes()]
