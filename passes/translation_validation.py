"""Translation validation: which pass broke my results?

`SemanticsCallback` is a `PassPipeline` callback. Built from the module
before the pipeline, it runs the reference interpreter on a few inputs and
keeps the results; after every pass it runs the current module on the same
inputs and raises, at the first pass whose results differ,

    pass 'cse' changed the results of @l2_frame: output #1 differs by 0.3 at [2, 5] (frame 0)

Comparison, output by output and frame by frame (state threads through the
frames, so a pass that breaks state shows up on the second frame):
- float arrays and scalars: `allclose` with atol 1e-4 (rtol 1e-5), NaN equal
  to NaN; shapes must match;
- integer arrays: exactly, except 1-D uint8 arrays, the encoder's JPEG
  bytes: equal bytes pass; otherwise both must decode (`cv2.imdecode`) to
  images of the same size whose mean absolute difference is at most 1 gray
  level. The bytes are a deterministic function of the frame and the score
  map, but a score within the float tolerance can still flip one block's
  blur decision, which changes the bytes and not the picture; the score map
  itself is compared as a float output.

Weights come from `mode` (as for the reference interpreter). A
`cortex-specialize-mode{mode=M}` pass fixes the weights to M's: from that
pass on, the reference is the original module run in mode M (with a note),
so a specialising pipeline is checked for what it claims — equal to the
original in mode M — whatever `mode` was given. Modules the reference
interpreter cannot run (anything but cortex, func, arith and scf ops, or
calls to extern declarations, i.e. lowered IR) are skipped with a note in
`callback.notes`; validation resumes if a later pass returns to runnable IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.traits import SymbolTable

from cortex.errors import CortexError
from cortex.interpreter.calling import entry_function
from cortex.ir import function_named
from cortex.passes.profile import sample_inputs
from cortex.semantics.modes import DEFAULT_MODE, mode_weights

ATOL = 1e-4
RTOL = 1e-5
JPEG_MEAN_TOLERANCE = 1.0
RUNNABLE_DIALECTS = ("cortex", "func", "arith", "scf")


def why_not_runnable(module: ModuleOp) -> str | None:
    """Why the reference interpreter cannot run `module`, or None when it can."""
    for op in module.walk():
        dialect = op.name.split(".", 1)[0]
        if dialect not in RUNNABLE_DIALECTS and not isinstance(op, ModuleOp):
            return f"it contains '{op.name}', which the reference interpreter does not run"
        if isinstance(op, func.CallOp):
            callee = SymbolTable.lookup_symbol(op, op.callee)
            if isinstance(callee, func.FuncOp) and callee.is_declaration:
                return f"it calls the extern declaration @{callee.sym_name.data}"
    return None


def run_reference(
    module: ModuleOp,
    entry: str,
    mode: str | None,
    inputs: Sequence[tuple[Any, ...]],
    weights: dict[str, float] | None = None,
) -> list[tuple]:
    """The results of `entry` frame after frame (fresh state)."""
    from cortex.interpreter.reference import ReferenceRunner

    runner = ReferenceRunner(module, entry=entry, mode=mode, weights=weights)
    return [runner(*args) for args in inputs]


def _index(flat: int, shape: tuple[int, ...]) -> str:
    return "[" + ", ".join(str(int(i)) for i in np.unravel_index(flat, shape)) + "]" if shape else ""


def _decoded(data: np.ndarray) -> np.ndarray | None:
    import cv2

    if data.size == 0:
        return None
    image = cv2.imdecode(data, cv2.IMREAD_UNCHANGED)
    return None if image is None else image.astype(np.float64)


def difference(expected: Any, actual: Any) -> str | None:
    """How `actual` differs from `expected` (one output), or None when they agree."""
    if isinstance(expected, (int, float)) or isinstance(actual, (int, float)):
        if not isinstance(actual, (int, float, np.number)) or not isinstance(expected, (int, float, np.number)):
            return f"is {type(actual).__name__}, expected {type(expected).__name__}"
        if np.allclose(actual, expected, atol=ATOL, rtol=RTOL, equal_nan=True):
            return None
        return f"differs by {abs(float(actual) - float(expected)):.6g} ({actual!r} instead of {expected!r})"
    expected, actual = np.asarray(expected), np.asarray(actual)
    if expected.dtype == np.uint8 and expected.ndim == 1 and actual.dtype == np.uint8 and actual.ndim == 1:
        if np.array_equal(expected, actual):
            return None
        a, b = _decoded(expected), _decoded(actual)
        if a is None or b is None:
            return f"differs: {actual.size} bytes instead of {expected.size}, not both decodable images"
        if a.shape != b.shape:
            return f"decodes to an image of shape {b.shape}, expected {a.shape}"
        mean = float(np.abs(a - b).mean())
        return None if mean <= JPEG_MEAN_TOLERANCE else f"decodes to an image that differs by {mean:.3g} on average"
    if expected.shape != actual.shape:
        return f"has shape {actual.shape}, expected {expected.shape}"
    if expected.dtype.kind == "f" or actual.dtype.kind == "f":
        close = np.isclose(actual, expected, atol=ATOL, rtol=RTOL, equal_nan=True)
        if close.all():
            return None
        gap = np.where(close, 0.0, np.abs(actual.astype(np.float64) - expected.astype(np.float64)))
        gap = np.where(np.isnan(gap), np.inf, gap)  # NaN on one side only
        worst = int(np.argmax(gap))
        return f"differs by {gap.flat[worst]:.3g} at {_index(worst, expected.shape)}".rstrip()
    if np.array_equal(expected, actual):
        return None
    worst = int(np.argmax(expected != actual))
    return f"differs at {_index(worst, expected.shape)} ({actual.flat[worst]} instead of {expected.flat[worst]})"


def compare_runs(expected: Sequence[tuple], actual: Sequence[tuple]) -> str | None:
    """The differences in the first frame that differs ('output #i ...; output #j ... (frame f)'), or None."""
    for frame, (want, got) in enumerate(zip(expected, actual)):
        if len(want) != len(got):
            return f"returns {len(got)} outputs instead of {len(want)} (frame {frame})"
        problems = [
            f"output #{index} {problem}"
            for index, (w, g) in enumerate(zip(want, got))
            if (problem := difference(w, g)) is not None
        ]
        if problems:
            return "; ".join(problems) + f" (frame {frame})"
    return None


def _pass_name(p: ModulePass) -> str:
    """The pass as a pipeline names it, options included: `cortex-specialize-mode{mode="power_save"}`."""
    try:
        return str(p.pipeline_pass_spec())
    except Exception:  # a pass whose options do not print still has a name
        return p.name


def specialised_weights(p: ModulePass) -> tuple[str, dict[str, float]] | None:
    """The mode and weights a `cortex-specialize-mode` pass bakes in; None for any other pass."""
    if p.name != "cortex-specialize-mode":
        return None
    from cortex.passes.specialize_mode import specialization_weights

    mode = getattr(p, "mode", None)
    if not isinstance(mode, str):
        return None
    return mode, specialization_weights(mode, getattr(p, "table", None))


class SemanticsCallback:
    """A `PassPipeline` callback that checks every pass against the reference results."""

    def __init__(
        self,
        module: ModuleOp,
        frames: int = 3,
        entry: str | None = None,
        mode: str | None = DEFAULT_MODE,
        seed: int = 0,
    ):
        self.mode = mode
        self.weights: dict[str, float] | None = None  # set once a pass specialises to a mode
        fn = entry_function(module, entry)
        self.entry = fn.sym_name.data
        self.inputs = list(sample_inputs(fn, frames, seed))
        self.notes: list[str] = []
        self.checked: list[str] = []
        reason = why_not_runnable(module)
        if reason is not None:
            raise CortexError(f"cannot validate: the reference interpreter cannot run the input module: {reason}")
        self.expected = run_reference(module, self.entry, mode, self.inputs)
        self.original = module.clone()  # the pipeline changes `module` in place

    def current_weights(self) -> dict[str, float] | None:
        if self.weights is not None:
            return self.weights
        return mode_weights(self.mode) if self.mode is not None else None

    def __call__(self, previous: ModulePass | None, module: ModuleOp, following: ModulePass | None) -> None:
        if previous is None:
            return  # before the first pass: the module is the one we started from
        name = _pass_name(previous)
        specialised = specialised_weights(previous)
        if specialised is not None and specialised[1] != self.current_weights():
            mode, self.weights = specialised
            self.expected = run_reference(self.original, self.entry, None, self.inputs, self.weights)
            self.notes.append(f"after pass '{name}': comparing with @{self.entry} in mode '{mode}' from here on")
        reason = why_not_runnable(module)
        if reason is not None:
            self.notes.append(f"after pass '{name}': not checked, {reason}")
            return
        try:
            if function_named(module, self.entry, defined=False) is None:
                raise CortexError(f"@{self.entry} is gone from the module")
            if self.weights is None:
                actual = run_reference(module, self.entry, self.mode, self.inputs)
            else:
                actual = run_reference(module, self.entry, None, self.inputs, self.weights)
        except CortexError as e:
            raise CortexError(f"pass '{name}' broke @{self.entry}: {e}") from None
        except Exception as e:  # a kernel crashing on what the pass produced is the pass's fault too
            raise CortexError(f"pass '{name}' broke @{self.entry}: {type(e).__name__}: {e}") from None
        problem = compare_runs(self.expected, actual)
        if problem is not None:
            raise CortexError(f"pass '{name}' changed the results of @{self.entry}: {problem}")
        self.checked.append(name)


__all__ = ["SemanticsCallback", "compare_runs", "difference", "why_not_runnable"]
