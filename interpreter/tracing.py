"""The reference interpreter, keeping every intermediate value.

Calibration (the value range of each tensor) and the quantisation report
(each quantised op against its float original) need what every op
computed, not just the function's results. `TracingRunner` is the
reference interpreter with one more listener, which records each op's
results; `trace` runs one call and returns them with the outputs.
"""

from __future__ import annotations

from typing import Any

from xdsl.interpreter import Interpreter
from xdsl.ir import Operation

from cortex.interpreter.reference import CortexFunctions, ReferenceRunner


class ResultRecorder(Interpreter.Listener):
    """Records the results of every op the interpreter runs (the last run of an op wins)."""

    def __init__(self):
        self.results: dict[Operation, tuple[Any, ...]] = {}

    def did_interpret_op(self, op: Operation, results) -> None:
        if results:
            self.results[op] = tuple(results)


class TracingRunner(ReferenceRunner):
    """A ReferenceRunner whose `last_trace` holds each op's results from the latest call."""

    last_trace: dict[Operation, tuple[Any, ...]]

    def _interpreter(self, functions: CortexFunctions) -> Interpreter:
        interpreter = super()._interpreter(functions)
        self._recorder = ResultRecorder()
        interpreter.listeners = (*interpreter.listeners, self._recorder)
        return interpreter

    def __call__(self, *inputs: Any) -> tuple[Any, ...]:
        outputs = super().__call__(*inputs)
        self.last_trace = self._recorder.results
        return outputs


__all__ = ["ResultRecorder", "TracingRunner"]
