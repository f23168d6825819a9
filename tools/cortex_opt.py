"""cortex-opt: the mlir-opt of Cortex, built on xDSL's opt driver.

`CortexOptMain` keeps xDSL's `xDSLOptMain` for what it does well (dialect,
pass and target registration, argument parsing, the output targets) and
replaces its input-to-output step so that every failure is a diagnostic,
never a traceback:

- input is parsed with `cortex.ir.LocatingParser` and verified op by op with
  `verify_located`, so a verifier error has the failing op's `file:line:col`;
- the pass pipeline is built pass by pass, so an unknown pass or a bad option
  names that pass;
- between passes a `PassInstrumentation` (tools/instrumentation.py) verifies,
  dumps and times, and names the pass after which the IR stopped verifying;
- `--verify-diagnostics` really checks `// expected-error {{...}}` comments
  (tools/diagnostics.py);
- anything else is an internal error: `error: internal error: ...`, exit 2
  (`CORTEX_DEBUG=1` shows the traceback).

Imports of the optional engines (translation validation, graph views) are
lazy, inside the flags that need them, to keep start-up short.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from importlib import import_module
from io import StringIO
from typing import IO

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import DiagnosticException, ParseError, ShrinkException
from xdsl.xdsl_opt_main import xDSLOptMain

from cortex.dialects import Cortex
from cortex.errors import CortexError
from cortex.ir import ONLY_COMMENTS, LocatedVerifyException, LocatingParser, reject_byte_order_mark, verify_located
from cortex.registry import PipelineError, cortex_passes, cortex_targets, parse_pipeline
from cortex.tools.atomic import OutputError, check_distinct, detach_stdout, is_write_failure, write_bytes_atomic
from cortex.tools.diagnostics import Diagnostic, check_expectations, from_parse_error, parse_expectations
from cortex.tools.instrumentation import (
    ElidingPrinter,
    IRPrinter,
    NullTimer,
    PassInstrumentation,
    PassStatistics,
    PassTimer,
    PassVerificationError,
)
from cortex.tools.opt_args import (
    DEFAULT_SEMANTIC_FRAMES,
    DESCRIPTION,
    EPILOG,
    HELP_OVERRIDES,
    normalise_argv,
    one_line_usage_error,
    option_arity,
    positive_int,
)
from cortex.tools.opt_passes import bind_shapes_hint, list_passes, once_bound, semantic_reference
from cortex.tools.run_summary import process_start
from cortex.tools.versions import OPT_VERSION_FORMAT

SPLIT_MARKER = re.compile(r"[ \t]*// -----[ \t]*\r?")


XDSL_TARGETS_KEPT = frozenset({"mlir"})
"""xDSL's output targets that work on cortex and lowered IR."""


class UsageError(Exception):
    """A diagnostic about the command line (a pass, an option, a flag), not the input."""

    def __init__(self, diagnostic: Diagnostic | str):
        self.diagnostic = diagnostic if isinstance(diagnostic, Diagnostic) else Diagnostic(diagnostic)
        super().__init__(self.diagnostic.headline())


class InternalError(Exception):
    """A bug in cortex or xDSL (not in the input), with what was going on."""


class ChunkFailure(Exception):
    """Processing of one input chunk stopped at this diagnostic."""

    def __init__(self, diagnostic: Diagnostic, from_parser: bool = False):
        super().__init__(diagnostic.headline())
        self.diagnostic = diagnostic
        self.from_parser = from_parser


def split_input(text: str) -> list[tuple[str, int]]:
    """Chunks between `// -----` lines, each with the number of lines before it."""
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    start = 0
    for number, line in enumerate(text.split("\n")):
        if SPLIT_MARKER.fullmatch(line):
            chunks.append(("\n".join(current), start))
            current, start = [], number + 1
        else:
            current.append(line)
    chunks.append(("\n".join(current), start))
    return chunks


def load_optional(flag: str, module: str, names: Sequence[str]) -> list[Callable]:
    """Callables from a module another part of Cortex provides; a clean error if it is missing."""
    try:
        mod = import_module(module)
    except ModuleNotFoundError as e:
        if e.name is not None and module.startswith(e.name):
            raise UsageError(f"{flag} is not available: {module} is not part of this build") from None
        raise
    missing = [name for name in names if not hasattr(mod, name)]
    if missing:
        raise UsageError(f"{flag} is not available: {module} does not define {', '.join(missing)}")
    return [getattr(mod, name) for name in names]


def build_passes(available: dict[str, Callable[[], type[ModulePass]]], spec: str) -> tuple[ModulePass, ...]:
    """The pipeline `spec` as pass instances (`cortex.registry.parse_pipeline`, the one parser), its error as
    a diagnostic: `<pass-pipeline>:1:N:` for a syntax error, one line naming the pass otherwise."""
    try:
        return parse_pipeline(spec, available)
    except PipelineError as e:
        if e.internal:
            raise InternalError(e.message) from e.__cause__
        if e.at is not None:
            line, col, text = e.at
            raise UsageError(Diagnostic(e.message, "error", "<pass-pipeline>", line, col, text)) from None
        raise UsageError(e.message) from None


def add_instrumentation_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """mlir-opt's pass instrumentation flags, and the semantic check after every pass."""
    tools = arg_parser.add_argument_group("pass instrumentation (as in mlir-opt)")
    tools.add_argument(
        "--mlir-print-ir-before-all", action="store_true", help="print the IR to stderr before every pass"
    )
    tools.add_argument(
        "--mlir-print-ir-after-all", action="store_true", help="print the IR to stderr after every pass"
    )
    tools.add_argument(
        "--mlir-print-ir-after-change",
        action="store_true",
        help="print the IR to stderr after each pass that changed it",
    )
    tools.add_argument(
        "--mlir-timing", action="store_true", help="report the wall time of parsing, each pass and output"
    )
    tools.add_argument(
        "--mlir-pass-statistics", action="store_true",
        help="report to stderr, per pass, the operations it erased and created and the module's size after it",
    )
    tools.add_argument(
        "--mlir-elide-elementsattrs-if-larger", metavar="N", type=int, default=None,
        help="print a dense elements attribute of more than N elements (not a splat) as "
        "dense_resource<__elided__>, as mlir-opt does (the output, and the IR dumps)",
    )
    tools.add_argument(
        "--verify-each-pass-semantics",
        metavar="N",
        type=positive_int,
        default=None,
        help="run the reference interpreter on N frames (default "
        f"{DEFAULT_SEMANTIC_FRAMES}; write --verify-each-pass-semantics=N) after every pass and "
        "fail naming the first pass that changed the results",
    )
    tools.add_argument(
        "--list-passes", action="store_true", help="list the available passes (cortex's with options) and exit"
    )


def add_graph_view_arguments(arg_parser: argparse.ArgumentParser) -> None:
    """The flags that print the dataflow graph, its diff or the quantisation report instead of the IR."""
    graphs = arg_parser.add_argument_group("graph views")
    graphs.add_argument(
        "--view-graph", action="store_true", help="print the dataflow graph as a table instead of the IR"
    )
    graphs.add_argument(
        "--graph-diff", action="store_true", help="print how the pipeline changed the graph instead of the IR"
    )
    graphs.add_argument(
        "--quant-report",
        metavar="HELD.npz",
        nargs="?",
        const="",
        default=None,
        help="after a pipeline with cortex-calibrate and cortex-quantize, print to stderr each quantised op's "
        "error against the float graph on the calibration set (and on HELD.npz if given)",
    )
    graphs.add_argument(
        "--graph-dot",
        metavar="FILE",
        default=None,
        help="also write the graph in Graphviz dot to FILE (FILE.svg, .png, .pdf: rendered by Graphviz)",
    )


class CortexOptMain(xDSLOptMain):
    """xDSL's opt driver with cortex registered and MLIR-grade diagnostics."""

    version_format = OPT_VERSION_FORMAT

    def __init__(self, args: Sequence[str] | None = None, description: str = DESCRIPTION):
        # --mlir-timing's clock: as a program, from the process's start (the interpreter and every import
        # count, as they do for the user waiting); called from Python, from this call.
        self.started, self.start_label = (
            (process_start(), "Start-up (interpreter, imports, registration, pass set-up)") if args is None
            else (time.perf_counter(), "Start-up (registration, pass set-up)")
        )
        self.timer: PassTimer = NullTimer()
        self.passes: tuple[ModulePass, ...] = ()
        self.semantics: Callable | None = None
        self.statistics: PassStatistics | None = None
        self.graph_view: dict[str, Callable] = {}
        super().__init__(description=description, args=sys.argv[1:] if args is None else list(args))

    # -- registration ------------------------------------------------------

    def register_all_dialects(self):
        super().register_all_dialects()
        if "cortex" not in self.ctx.registered_dialect_names:
            self.ctx.register_dialect("cortex", lambda: Cortex)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in cortex_passes().items():
            self.available_passes[name] = factory

    def register_all_targets(self):
        """mlir and cortex's own targets (numpy) only: xDSL's other targets (llvm, x86-asm, riscv-asm,
        arm-asm, wgsl, wat, csl, mps) fail on cortex IR and on its lowering (an assertion, a missing
        llvmlite, or no output at all), so `-t` neither lists nor accepts them."""
        super().register_all_targets()
        self.available_targets = {
            name: target for name, target in self.available_targets.items() if name in XDSL_TARGETS_KEPT
        }
        self.available_targets.update(cortex_targets())

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser):
        super().register_all_arguments(arg_parser)
        arg_parser.prog = "cortex-opt"
        arg_parser.error = one_line_usage_error  # type: ignore[method-assign]
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = EPILOG
        overrides = {
            **HELP_OVERRIDES,
            "passes": "pass pipeline, e.g. -p 'canonicalize,cse'. Cortex passes: "
            + (", ".join(sorted(cortex_passes())) or "(none yet)")
            + "; xDSL's passes too (--list-passes lists them all)",
            "target": "output: mlir (default) or " + ", ".join(t for t in self.available_targets if t != "mlir"),
        }
        for action in arg_parser._actions:
            if action.dest in overrides:
                action.help = overrides[action.dest]

        add_instrumentation_arguments(arg_parser)
        add_graph_view_arguments(arg_parser)
        # mlir-opt's spellings, read before argparse sees the arguments (tools/opt_args.py)
        parse_args = arg_parser.parse_args
        arity = option_arity(arg_parser)
        arg_parser.parse_args = lambda args=None, namespace=None: parse_args(  # type: ignore[method-assign, assignment]
            normalise_argv(sys.argv[1:] if args is None else args, arity), namespace
        )

    # -- set-up --------------------------------------------------------------

    def setup_pipeline(self):
        """Build the pass instances and load the engines the flags ask for."""
        args = self.args
        args.mlir_print_ir_after_all |= args.print_between_passes
        args.mlir_timing |= args.time_passes
        if args.mlir_timing:
            self.timer = PassTimer()
            self.timer.start = self.started
        self.statistics = PassStatistics() if args.mlir_pass_statistics else None
        if args.mlir_elide_elementsattrs_if_larger is not None and args.mlir_elide_elementsattrs_if_larger < 0:
            raise UsageError("--mlir-elide-elementsattrs-if-larger must be >= 0")
        self.passes = build_passes(self.available_passes, args.passes)
        self.pipeline = PassPipeline(self.passes)
        if args.verify_each_pass_semantics is not None:
            (self.semantics,) = load_optional(
                "--verify-each-pass-semantics", "cortex.passes.translation_validation", ["SemanticsCallback"]
            )
        wanted = [
            ("--view-graph", args.view_graph, "render_table"),
            ("--graph-diff", args.graph_diff, "render_diff"),
            ("--graph-dot", args.graph_dot, "render_dot"),
        ]
        for flag, asked, name in wanted:
            if asked:
                names = [name, "write_image"] if name == "render_dot" and image_path(args.graph_dot) else [name]
                for n, fn in zip(names, load_optional(flag, "cortex.reports.graph_view", names)):
                    self.graph_view[n] = fn
        if args.view_graph and args.graph_diff:
            raise UsageError("--view-graph and --graph-diff both replace the output: give one")

    # -- running -------------------------------------------------------------

    def run(self) -> int:
        """Process the input; returns the exit status."""
        if self.args.list_passes:
            sys.stdout.write(self.list_passes())
            return 0
        self.timer.add("Start-up", self.start_label, time.perf_counter() - self.started)
        source = self.args.input_file if self.args.input_file != "-" else None
        try:  # before any pass: replacing the input with an output would lose the user's file
            check_distinct([("-o", self.args.output_file), ("--graph-dot", self.args.graph_dot)],
                           [("the input file", source)])
        except OutputError as e:
            raise UsageError(str(e)) from None
        text, name = self.read_input()
        chunks = split_input(text) if self.args.split_input_file else [(text, 0)]
        to_file = self.args.output_file is not None
        out: IO[str] = StringIO() if to_file else sys.stdout
        failed = False
        try:
            for index, (chunk, offset) in enumerate(chunks):
                if index:
                    out.write("// -----\n")
                failed |= not self.run_chunk(chunk, offset, name, index, out)
                out.flush()
        except ShrinkException:
            print("Success, can shrink")
            return 0
        if to_file and not failed:
            try:  # whole or absent; a device or FIFO is written into, a symlink's target replaced
                write_bytes_atomic(self.args.output_file, (out.getvalue() if isinstance(out, StringIO) else "").encode())
            except OutputError as e:
                raise UsageError(str(e)) from None
        if self.statistics is not None:
            sys.stderr.write(self.statistics.report())
        if self.args.mlir_timing:
            sys.stderr.write(self.timer.report())
        if self.args.shrink:
            print("Failure, can't shrink")
            return 1
        return 1 if failed else 0

    def read_input(self) -> tuple[str, str]:
        path = self.args.input_file
        try:
            if path is None or path == "-":
                return sys.stdin.buffer.read().decode("utf-8"), "<stdin>"
            if path.endswith(".onnx"):  # an ONNX model: imported, then processed as its cortex IR
                from cortex.tools.import_onnx import onnx_as_text

                return onnx_as_text(path), path
            with open(path, "rb") as f:
                return f.read().decode("utf-8"), path
        except OSError as e:
            raise UsageError(f"could not open input file '{path}': {e.strerror}") from None
        except CortexError as e:
            raise UsageError(Diagnostic(str(e), file=path)) from None
        except UnicodeDecodeError as e:
            raise UsageError(f"input '{path or '<stdin>'}' is not UTF-8 text (byte {e.start})") from None

    def run_chunk(self, text: str, offset: int, name: str, index: int, out: IO[str]) -> bool:
        """One chunk: process it, then report (or check) its diagnostics. True if all is well."""
        # Padding with the lines before the chunk makes every location a line of the file.
        padded = "\n" * offset + text
        produced: list[Diagnostic] = []
        result = None
        from_parser = False
        try:
            result = self.process(padded, name, index)
        except ChunkFailure as failure:
            produced.append(failure.diagnostic)
            from_parser = failure.from_parser
        if result is not None:
            out.write(result)
        out.flush()  # keep stdout and stderr in input order when both go to one pipe
        if self.args.verify_diagnostics:
            expected, problems = parse_expectations(padded, name)
            mismatches = problems + check_expectations(expected, produced)
            for diag in mismatches:
                sys.stderr.write(diag.render())
            return not mismatches
        if produced and from_parser and self.args.parsing_diagnostics:
            sys.stdout.write(produced[0].render())
            return True
        for diag in produced:
            sys.stderr.write(diag.render())
        return not produced

    def process(self, text: str, name: str, index: int) -> str:
        """Parse, verify, run the pipeline, emit. Raises ChunkFailure on a diagnostic."""
        module, spans = self.parse_chunk_text(text, name)
        verify = None
        if not self.args.disable_verify:

            def verify(m: ModuleOp) -> None:
                verify_located(m, spans)

            with self.timer.scope("Verifier"):
                try:
                    verify(module)
                except LocatedVerifyException as e:
                    raise ChunkFailure(Diagnostic.at(e.span, e.message)) from None
                except DiagnosticException as e:
                    raise ChunkFailure(Diagnostic(str(e))) from None
        passes = self.passes
        if self.args.graph_diff:
            # Profiling only annotates: the diff's "before" is the graph with its
            # profile, so `-p 'cortex-profile,...' --graph-diff` can price removed ops.
            leading = len(list(itertools.takewhile(lambda p: p.name == "cortex-profile", passes)))
            if leading:
                self.apply_pipeline(module, None, verify, passes[:leading])
                passes = passes[leading:]
        wants_before = self.args.graph_diff or self.semantics is not None or self.args.quant_report is not None
        before = module.clone() if wants_before else None
        self.apply_pipeline(module, before, verify, passes)
        if self.args.quant_report is not None:
            assert before is not None  # wants_before
            self.print_quant_report(before, module)
        with self.timer.scope("Output"):
            return self.emit(module, before, index)

    def parse_chunk_text(self, text: str, name: str) -> tuple[ModuleOp, dict]:
        with self.timer.scope("Parser"):
            if ONLY_COMMENTS.match(text):
                return ModuleOp([]), {}  # as mlir-opt: empty input is an empty module
            try:
                reject_byte_order_mark(text, name)
                parser = LocatingParser(self.ctx, text, name)  # lexes the first token
                module = parser.parse_module(not self.args.no_implicit_module)
            except ParseError as e:
                raise ChunkFailure(from_parse_error(e), from_parser=True) from None
            return module, parser.spans

    def apply_pipeline(self, module: ModuleOp, before: ModuleOp | None, verify, passes: tuple[ModulePass, ...]) -> None:
        checks = []
        if self.semantics is not None:
            try:
                reference, entry = semantic_reference(self.ctx, before, passes)
                check = self.semantics(reference, frames=self.args.verify_each_pass_semantics, entry=entry)
                checks.append(check if entry is None else once_bound(check, entry))
            except (DiagnosticException, CortexError) as e:
                raise ChunkFailure(Diagnostic(f"--verify-each-pass-semantics: {e}{bind_shapes_hint(module)}")) from None
        if self.statistics is not None:
            checks.append(self.statistics)
        printer = IRPrinter(
            after_all=self.args.mlir_print_ir_after_all,
            after_change=self.args.mlir_print_ir_after_change,
            before_all=self.args.mlir_print_ir_before_all,
            generic=self.args.print_op_generic,
            elide_if_larger=self.args.mlir_elide_elementsattrs_if_larger,
        )
        instrumentation = PassInstrumentation(verify=verify, printer=printer, timer=self.timer, checks=checks)
        try:
            PassPipeline(passes, instrumentation).apply(self.ctx, module)
        except PassVerificationError as e:
            raise ChunkFailure(Diagnostic.at(getattr(e.error, "span", None), str(e))) from None
        except (DiagnosticException, CortexError) as e:
            current = instrumentation.current
            message = f"pass '{current.name}' failed: {e}" if current is not None else str(e)
            raise ChunkFailure(Diagnostic(message)) from None
        except ShrinkException:
            raise
        except Exception as e:
            current = instrumentation.current
            if current is None:
                raise
            raise InternalError(f"pass '{current.name}' crashed: {type(e).__name__}: {e}") from e

    def emit(self, module: ModuleOp, before: ModuleOp | None, index: int) -> str:
        args = self.args
        if args.graph_dot:
            self.write_dot(module, index)
        try:
            if args.view_graph:
                return ensure_newline(self.graph_view["render_table"](module))
            if args.graph_diff:
                return ensure_newline(self.graph_view["render_diff"](before, module))
            return self.output_resulting_program(module)
        except (DiagnosticException, CortexError) as e:
            raise ChunkFailure(Diagnostic(f"cannot emit target '{args.target}': {e}")) from None
        except ModuleNotFoundError as e:  # xDSL's llvm target imports llvmlite only when used
            raise ChunkFailure(
                Diagnostic(f"target '{args.target}' needs the Python package '{e.name}', which is not installed")
            ) from None

    def output_resulting_program(self, prog: ModuleOp) -> str:
        """xDSL's output, but with the mlir target and --mlir-elide-elementsattrs-if-larger printed by
        `ElidingPrinter` (as xDSL's MLIRTarget prints: the module, then its dialect resources)."""
        limit = self.args.mlir_elide_elementsattrs_if_larger
        if limit is None or parse_spec(self.args.target).name != "mlir":
            return super().output_resulting_program(prog)
        out = StringIO()
        printer = ElidingPrinter(stream=out, print_generic_format=self.args.print_op_generic,
                                 print_properties_as_attributes=self.args.print_no_properties,
                                 print_debuginfo=self.args.print_debuginfo, elide_if_larger=limit)
        printer.print_op(prog)
        printer.print_metadata(self.ctx.loaded_dialects)
        print("\n", file=out)
        return out.getvalue()

    def print_quant_report(self, before: ModuleOp, module: ModuleOp) -> None:
        (report,) = load_optional("--quant-report", "cortex.reports.quant_report", ["report_for_opt"])
        try:
            sys.stderr.write(report(before, module, self.args.quant_report or None))
        except (DiagnosticException, CortexError) as e:
            raise ChunkFailure(Diagnostic(str(e))) from None

    def write_dot(self, module: ModuleOp, index: int) -> None:
        path = self.args.graph_dot
        if index:
            stem, ext = os.path.splitext(path)
            path = f"{stem}.{index}{ext}"
        dot = self.graph_view["render_dot"](module)
        try:
            if image_path(path):
                self.graph_view["write_image"](dot, path)
            else:
                write_bytes_atomic(path, ensure_newline(dot).encode())
        except OSError as e:
            raise ChunkFailure(Diagnostic(f"cannot write graph to '{path}': {e.strerror or e}")) from None
        except OutputError as e:
            raise ChunkFailure(Diagnostic(str(e))) from None
        except (DiagnosticException, CortexError) as e:
            raise ChunkFailure(Diagnostic(f"cannot render graph to '{path}': {e}")) from None

    def list_passes(self) -> str:
        return list_passes(self.available_passes)


def image_path(path: str | None) -> bool:
    return path is not None and os.path.splitext(path)[1].lower() in (".svg", ".png", ".pdf")


def ensure_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def internal_error(e: BaseException) -> int:
    if os.environ.get("CORTEX_DEBUG"):
        raise e
    sys.stderr.write(f"error: internal error: {type(e).__name__ + ': ' if not isinstance(e, InternalError) else ''}{e}\n")
    sys.stderr.write("(this is a bug in cortex-opt; CORTEX_DEBUG=1 shows the traceback)\n")
    return 2


def main(argv: Sequence[str] | None = None, driver: type[CortexOptMain] = CortexOptMain) -> int:
    """The `cortex-opt` console script; returns the exit status, never raises.

    `driver` lets a subclass (say, one registering an extra pass) run under
    the same error handling.
    """
    try:
        return driver(args=argv).run()
    except UsageError as e:
        sys.stderr.write(e.diagnostic.render())
        return 1
    except SystemExit as e:  # argparse: --help, --version, usage errors
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`cortex-opt ... | head`): not an error of ours.
        detach_stdout()
        return 1
    except OSError as e:
        if not is_write_failure(e):
            return internal_error(e)
        detach_stdout()  # standard output is full (> /dev/full, a full disk): one line, exit 1
        sys.stderr.write(f"error: cannot write standard output: {e.strerror or e}\n")
        return 1
    except BaseException as e:  # noqa: BLE001 - the last resort: no traceback for users
        return internal_error(e)


if __name__ == "__main__":
    sys.exit(main())
