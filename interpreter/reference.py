"""The eager reference interpreter: L0 cortex IR run op by op on the reference kernels.

Built on xDSL's Interpreter: func, arith and scf run on xDSL's own
implementations, and `CortexFunctions` adds one implementation per cortex
op (a kernel from `cortex.semantics.kernels`, or state/weight handling).
Values are NumPy arrays, and f32 scalars are Python floats so that xDSL's
arith and scf implementations work on them unchanged. This is the
semantic ground truth every pass and backend is compared against.

    runner = ReferenceRunner(module, entry="l2_frame", mode="balanced")
    encoded, score = runner(frame)      # runner.state, runner.reset()
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters.arith import ArithFunctions
from xdsl.interpreters.func import FuncFunctions
from xdsl.interpreters.scf import ScfFunctions
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation
from xdsl.utils.exceptions import DiagnosticException, InterpretationError

from cortex.dialects import ALL_OPS
from cortex.dialects.state import StateOp, UpdateStateOp, WeightOp
from cortex.errors import CortexError
from cortex.interpreter.calling import check_value, find_entry, initial_zeros
from cortex.ir import parse, verify_located
from cortex.semantics.kernels import FLOAT_ERRORS, KERNELS, run_kernel
from cortex.semantics.modes import DEFAULT_ENTRY, DEFAULT_MODE, weights_for_call

OpTimer = Callable[[Operation, float], None]


class CortexFunctions(InterpreterFunctions):
    """Implementations of the cortex ops, holding one call's state and the weights.

    `state` is what the state ops read (the values after the previous call);
    `updates` collects this call's `update_state` writes, which the runner
    commits only when the call completes.
    """

    def __init__(self, weights: Mapping[str, float], weight_source: str):
        self.weights = weights
        self.weight_source = weight_source
        self.state: dict[str, Any] = {}
        self.updates: dict[str, Any] = {}

    @impl(StateOp)
    def run_state(self, interpreter: Interpreter, op: StateOp, args: tuple[Any, ...]):
        name = op.state_name
        if name not in self.state:
            self.state[name] = initial_zeros(op.result.type, f"state '{name}'")
        return (self.state[name],)

    @impl(UpdateStateOp)
    def run_update_state(self, interpreter: Interpreter, op: UpdateStateOp, args: tuple[Any, ...]):
        self.updates[op.state_name] = args[0]
        return ()

    @impl(WeightOp)
    def run_weight(self, interpreter: Interpreter, op: WeightOp, args: tuple[Any, ...]):
        name = op.state_name
        if name not in self.weights:
            raise CortexError(f"weight '{name}' has no value: {self.weight_source}")
        return (float(np.float32(self.weights[name])),)


def _kernel_impl(op_type: type[IRDLOperation]):
    def run(self: CortexFunctions, interpreter: Interpreter, op: IRDLOperation, args: tuple[Any, ...]):
        try:
            return run_kernel(op, args)
        except CortexError:
            raise
        except Exception as e:  # a library error (OpenCV, NumPy): one line naming the op
            raise CortexError(f"'{op.name}' failed: {type(e).__name__}: {' '.join(str(e).split())}") from e

    run.__name__ = f"run_{op_type.name.removeprefix('cortex.')}"
    return impl(op_type)(run)


# One `@impl` per kernel-backed op (every cortex op but state/weight), each
# dispatching to its kernel through `run_kernel`; `register_impls` then
# collects them together with the three above.
for _op in ALL_OPS:
    if _op.name in KERNELS:
        setattr(CortexFunctions, f"run_{_op.name.removeprefix('cortex.')}", _kernel_impl(_op))
register_impls(CortexFunctions)


class OpTimerListener(Interpreter.Listener):
    """Calls `op_timer(op, seconds)` after each cortex op (installed only when asked for)."""

    def __init__(self, op_timer: OpTimer):
        self.op_timer = op_timer
        self.started: list[float] = []

    def will_interpret_op(self, op: Operation, args) -> None:
        if op.name.startswith("cortex."):
            self.started.append(time.perf_counter())

    def did_interpret_op(self, op: Operation, results) -> None:
        if op.name.startswith("cortex."):
            self.op_timer(op, time.perf_counter() - self.started.pop())


def _output(value: Any, held: list[np.ndarray]) -> Any:
    """A result as the caller gets it: an array it may write into without touching the runner's own.

    Constants are read-only and a state read but not updated this frame is
    still held as state: both are copied (tests/test_ownership.py).
    """
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, np.ndarray) and (
        not value.flags.writeable or any(np.may_share_memory(value, h) for h in held)
    ):
        return value.copy()
    return value


class ReferenceRunner:
    """Runs `entry` of a cortex module frame after frame, threading named state.

    `mode` picks a row of the mode table for `cortex.weight`; `weights`
    (explicit values) win over it. `op_timer(op, seconds)`, when given, is
    called after every cortex op executes.
    """

    def __init__(
        self,
        module: ModuleOp | str | Path,
        entry: str = DEFAULT_ENTRY,
        mode: str | None = DEFAULT_MODE,
        weights: Mapping[str, float] | None = None,
        op_timer: OpTimer | None = None,
    ):
        if not isinstance(module, ModuleOp):
            module = parse(module)
        else:
            try:
                verify_located(module)
            except DiagnosticException as e:
                raise CortexError(f"the module does not verify: {e}") from None
        self.module = module
        self.entry = entry
        self.mode = mode
        self.function = find_entry(module, entry)
        self.weights, self._weight_source = weights_for_call(mode, weights)
        self.op_timer = op_timer
        self.state: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        """Back to before the first frame: every state holds zeros of its type."""
        self.state = {
            op.state_name: initial_zeros(op.result.type, f"state '{op.state_name}'")
            for op in self.module.walk()
            if isinstance(op, StateOp)
        }

    def _checked_state(self) -> dict[str, Any]:
        """`runner.state` as the state ops read it; the same checks as the compiled runner's."""
        if not isinstance(self.state, dict):
            raise CortexError(f"runner.state must be a dict of state name to value, got {type(self.state).__name__}")
        state = dict(self.state)
        for op in self.function.walk():
            if isinstance(op, StateOp):
                name = op.state_name
                if name not in state:
                    raise CortexError(f"state '{name}' is missing from runner.state (runner.reset() restores every state)")
                state[name] = check_value(op.result.type, state[name], f"state '{name}'")
        return state

    def _interpreter(self, functions: CortexFunctions) -> Interpreter:
        listeners = (OpTimerListener(self.op_timer),) if self.op_timer is not None else ()
        interpreter = Interpreter(self.module, listeners=listeners)
        interpreter.register_implementations(FuncFunctions())
        interpreter.register_implementations(ArithFunctions())
        interpreter.register_implementations(ScfFunctions())
        interpreter.register_implementations(functions)
        return interpreter

    def __call__(self, *inputs: Any) -> tuple[Any, ...]:
        arg_types = self.function.function_type.inputs.data
        if len(inputs) != len(arg_types):
            raise CortexError(f"@{self.entry} takes {len(arg_types)} argument(s), got {len(inputs)}")
        args = tuple(check_value(t, v, f"argument #{i}") for i, (t, v) in enumerate(zip(arg_types, inputs)))
        functions = CortexFunctions(self.weights, self._weight_source)
        functions.state = self._checked_state()
        try:
            # The compiled code's floating-point policy (IEEE results, no RuntimeWarning): the two agree.
            with np.errstate(**FLOAT_ERRORS):  # type: ignore[arg-type]
                results = self._interpreter(functions).call_op(self.function, args)
        except CortexError as e:
            e.__notes__ = []  # xDSL attaches the whole module as a note; the message is enough
            raise
        except InterpretationError as e:
            raise CortexError(f"@{self.entry}: {e}") from None
        # Copies: the caller may reuse its input buffers or write into the outputs.
        updates = {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in functions.updates.items()}
        self.state = {**functions.state, **updates}
        held = [v for v in self.state.values() if isinstance(v, np.ndarray)]
        return tuple(_output(r, held) for r in results)


__all__ = ["CortexFunctions", "OpTimerListener", "ReferenceRunner"]
