"""Pass-level tooling of cortex-opt, run between passes through xDSL's PassPipeline callback.

xDSL calls a pipeline's callback as `callback(previous_pass, module,
next_pass)` before the first pass, between passes and after the last. One
`PassInstrumentation` object is that callback: it stops the timer of the pass
that just ran, verifies the IR (naming the pass if it no longer verifies),
dumps the IR (`--mlir-print-ir-before-all`, `-after-all`, `-after-change`), counts what each pass
erased and created (`--mlir-pass-statistics`), runs extra
checks such as translation validation, and starts the next pass's timer.
"""

from __future__ import annotations

import contextlib
import io
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

PassCallback = Callable[[ModulePass | None, ModuleOp, ModulePass | None], None]


def pass_title(p: ModulePass) -> str:
    """`CanonicalizePass (canonicalize)`, as MLIR titles a pass in dumps."""
    return f"{type(p).__name__} ({p.name})"


class PassVerificationError(VerifyException):
    """The IR stopped verifying after a pass; keeps the verifier's error and the pass."""

    def __init__(self, pass_name: str, error: VerifyException):
        super().__init__(f"IR does not verify after pass '{pass_name}': {getattr(error, 'message', error)}")
        self.pass_name = pass_name
        self.error = error


class PassTimer:
    """Wall time per pipeline stage, reported like MLIR's `-mlir-timing`.

    Rows keep their first-seen order; a pass that occurs twice in a pipeline
    gets two rows (keyed by position), and repeated runs (one per
    `--split-input-file` chunk) add up.
    """

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.rows: dict[object, tuple[str, float]] = {}

    def add(self, key: object, label: str, seconds: float) -> None:
        _, total = self.rows.get(key, (label, 0.0))
        self.rows[key] = (label, total + seconds)

    @contextlib.contextmanager
    def scope(self, label: str, key: object | None = None) -> Iterator[None]:
        begin = time.perf_counter()
        try:
            yield
        finally:
            self.add(label if key is None else key, label, time.perf_counter() - begin)

    def report(self) -> str:
        total = time.perf_counter() - self.start
        rows = list(self.rows.values())
        rest = total - sum(seconds for _, seconds in rows)
        if rest > 0:
            rows.append(("Rest", rest))
        rule = "===" + "-" * 73 + "==="
        out = io.StringIO()
        title = f"{'... Execution time report ...':^79}".rstrip()
        out.write(f"{rule}\n{title}\n{rule}\n")
        out.write(f"  Total Execution Time: {total:.4f} seconds\n\n")
        out.write("  ----Wall Time----  ----Name----\n")
        for label, seconds in [*rows, ("Total", total)]:
            share = 100.0 * seconds / total if total > 0 else 0.0
            out.write(f"  {seconds:8.4f} ({share:5.1f}%)  {label}\n")
        return out.getvalue()


class NullTimer(PassTimer):
    """A timer that records nothing (no `--mlir-timing`)."""

    def add(self, key: object, label: str, seconds: float) -> None:
        pass

    @contextlib.contextmanager
    def scope(self, label: str, key: object | None = None) -> Iterator[None]:
        yield


@dataclass(eq=False, repr=False)
class ElidingPrinter(Printer):
    """xDSL's printer, with mlir-opt's `--mlir-elide-elementsattrs-if-larger=N`: a dense elements attribute of
    more than N elements that is not a splat prints as `dense_resource<__elided__> : tensor<...>`, the form
    mlir-opt prints (and parses back, as a resource with no data)."""

    elide_if_larger: int | None = None

    def print_attribute(self, attribute: Attribute) -> None:
        limit = self.elide_if_larger
        if (limit is not None and isinstance(attribute, DenseIntOrFPElementsAttr) and len(attribute) > limit
                and not attribute.is_splat()):
            self.print_string("dense_resource<__elided__> : ")
            self.print_attribute(attribute.get_type())
            return
        super().print_attribute(attribute)


class IRPrinter:
    """Dumps the module around passes: before each (`before_all`), after each (`after_all`) or after those
    that changed it (`after_change`), in mlir-opt's `// -----// IR Dump After ... //----- //` form."""

    def __init__(self, *, after_all: bool, after_change: bool, before_all: bool = False, generic: bool = False,
                 stream: IO[str] | None = None, elide_if_larger: int | None = None):
        self.after_all = after_all
        self.after_change = after_change
        self.before_all = before_all
        self.generic = generic
        self.stream = stream
        self.elide_if_larger = elide_if_larger
        self.before: str | None = None

    @property
    def enabled(self) -> bool:
        return self.after_all or self.after_change or self.before_all

    def text(self, module: ModuleOp) -> str:
        out = io.StringIO()
        ElidingPrinter(stream=out, print_generic_format=self.generic, elide_if_larger=self.elide_if_larger).print_op(module)
        return out.getvalue()

    def dump(self, when: str, p: ModulePass, text: str) -> None:
        (self.stream or sys.stderr).write(f"// -----// IR Dump {when} {pass_title(p)} //----- //\n{text}\n\n")

    def __call__(self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
        if not self.enabled:
            return
        after = self.text(module)
        if previous is not None:
            changed = after != self.before
            if self.after_all or (self.after_change and changed):
                self.dump("After", previous, after)
        self.before = after  # to detect the next pass's change
        if self.before_all and next_pass is not None:
            self.dump("Before", next_pass, after)


class PassStatistics:
    """`--mlir-pass-statistics`: per pass (by its place in the pipeline), the operations it erased and
    created, told apart by identity (an op the pass left in place is neither), and the module's size after
    it; summed over `--split-input-file` chunks, as mlir-opt sums a pass's statistics."""

    def __init__(self) -> None:
        self.rows: dict[int, tuple[ModulePass, list[int]]] = {}
        self.index = 0
        self._before: dict[int, Operation] = {}  # the ops (held, so no id is reused while the pass runs)

    def __call__(self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
        ops = {id(op): op for op in module.walk()}
        if previous is not None:
            _, counts = self.rows.setdefault(self.index, (previous, [0, 0, 0]))
            counts[0] += len(self._before.keys() - ops.keys())
            counts[1] += len(ops.keys() - self._before.keys())
            counts[2] += len(ops)
            self.index += 1
        else:
            self.index = 0
        self._before = ops if next_pass is not None else {}

    def report(self) -> str:
        rule = "===" + "-" * 73 + "==="
        out = io.StringIO()
        out.write(f"{rule}\n{'... Pass statistics report ...':^79}".rstrip() + f"\n{rule}\n'builtin.module' Pipeline\n")
        meaning = ("ops-erased - Operations the pass erased", "ops-created - Operations the pass created",
                   "ops-after - Operations in the module after the pass")
        for p, counts in self.rows.values():
            out.write(f"  {pass_title(p)}\n")
            for value, text in zip(counts, meaning):
                out.write(f"    (S) {value:6d} {text}\n")
        return out.getvalue()


class PassInstrumentation:
    """The callback cortex-opt gives xDSL's PassPipeline.

    `verify(module)` raises VerifyException (with a location, see
    `cortex.ir.verify_located`); a failure after a pass is re-raised as a
    PassVerificationError naming that pass. `checks` are further callbacks of
    the same shape (e.g. translation validation), run after the dump.
    `current` is the pass being run (or just run, while its output is
    verified), for attributing an exception it raises; None during checks.
    """

    def __init__(
        self,
        *,
        verify: Callable[[ModuleOp], None] | None = None,
        printer: IRPrinter | None = None,
        timer: PassTimer | None = None,
        checks: Sequence[PassCallback] = (),
    ):
        self.verify = verify
        self.printer = printer
        self.timer = timer or NullTimer()
        self.checks = list(checks)
        self.current: ModulePass | None = None
        self.index = 0
        self._started = 0.0

    def __call__(self, previous: ModulePass | None, module: ModuleOp, next_pass: ModulePass | None) -> None:
        if previous is not None:
            self.timer.add(("pass", self.index), previous.name, time.perf_counter() - self._started)
            self.index += 1
            if self.verify is not None:
                with self.timer.scope("Verifier"):
                    try:
                        self.verify(module)
                    except VerifyException as e:
                        raise PassVerificationError(previous.name, e) from None
        # Between passes nothing is "the current pass": an error from a check is the check's.
        self.current = None
        if self.printer is not None:
            self.printer(previous, module, next_pass)
        for check in self.checks:
            with self.timer.scope(type(check).__name__):
                check(previous, module, next_pass)
        self.current = next_pass
        self._started = time.perf_counter()


__all__ = [
    "ElidingPrinter",
    "IRPrinter",
    "NullTimer",
    "PassCallback",
    "PassInstrumentation",
    "PassStatistics",
    "PassTimer",
    "PassVerificationError",
    "pass_title",
]
