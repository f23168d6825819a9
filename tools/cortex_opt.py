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
import inspect
import itertools
import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from importlib import import_module
from io import StringIO
from typing import IO, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import DiagnosticException, ParseError, ShrinkException
from xdsl.xdsl_opt_main import xDSLOptMain

from cortex.dialects import Cortex
from cortex.errors import CortexError
from cortex.ir import ONLY_COMMENTS, LocatedVerifyException, LocatingParser, reject_byte_order_mark, verify_located
from cortex.registry import PipelineError, all_passes, cortex_passes, cortex_targets, describe_options, parse_pipeline, unanchored
from cortex.tools.atomic import OutputError, check_distinct, detach_stdout, is_write_failure, write_bytes_atomic
from cortex.tools.diagnostics import Diagnostic, check_expectations, from_parse_error, parse_expectations
from cortex.tools.instrumentation import IRPrinter, NullTimer, PassInstrumentation, PassTimer, PassVerificationError
from cortex.tools.run_summary import process_start
from cortex.tools.versions import OPT_VERSION_FORMAT

DEFAULT_SEMANTIC_FRAMES = 3

DESCRIPTION = """\
cortex-opt: the Cortex modular optimizer driver (the mlir-opt of Cortex).

Reads MLIR (the cortex dialect and upstream builtin/func/arith/math/scf/
tensor/linalg) from a file or stdin, verifies it, runs a pass pipeline and
prints the result, or emits it with a target."""

EPILOG = """\
examples:
  cortex-opt examples/l2_pipeline.mlir
      parse, verify and print (custom form; --print-op-generic for generic)
  cortex-opt in.mlir -p 'cortex-specialize-mode{mode=power_save},canonicalize,cortex-dce'
      specialise the request mode, fold zero-weight terms, drop dead stages
  cortex-opt in.mlir -p convert-cortex-to-linalg,convert-cortex-to-extern
      lower to upstream MLIR (what /usr/lib/llvm-22/bin/mlir-opt accepts)
  cortex-opt in.mlir -p convert-cortex-to-linalg,convert-cortex-to-extern -t numpy
      emit the NumPy backend's Python source
  cortex-opt in.mlir -p canonicalize,cse --mlir-print-ir-after-change --mlir-timing
      show the IR after each pass that changed it, and where the time went
  cortex-opt errors.mlir --split-input-file --verify-diagnostics
      check the // expected-error {{...}} comments of every // ----- chunk

Pass options go in braces, separated by spaces: -p 'pass{opt=1 other=x}'.
As in mlir-opt, --pass-pipeline='builtin.module(canonicalize,cse)' is -p, and
each pass is also a flag: --canonicalize --cse --cortex-dce='mode=power_save'.
--list-passes shows every pass with what it does and its options.
Exit status: 0 success; 1 a diagnostic (bad input, a pass failed, a
--verify-diagnostics mismatch); 2 a bad command line or an internal error
(CORTEX_DEBUG=1 shows its traceback)."""

# xDSL's flags, described as cortex-opt implements them.
HELP_OVERRIDES = {
    "input_file": "input file (MLIR text, or an ONNX model if it ends in .onnx); stdin when omitted or '-'",
    "verify_diagnostics": "check the diagnostics against the input's // expected-error {{...}} "
    "comments (@+N, @-N, @above, @below; -re for regexes), as mlir-opt does; "
    "exit 1 on any mismatch",
    "parsing_diagnostics": "print parse errors to stdout and exit 0 (xDSL's test mode)",
    "print_between_passes": "same as --mlir-print-ir-after-all",
    "time_passes": "same as --mlir-timing",
    "split_input_file": "split the input at '// -----' lines and process each chunk on its own",
    "output_file": "write the output to FILE (only when every chunk succeeded)",
    "disable_verify": "do not verify the input, nor the IR after each pass",
}

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


def semantic_reference(ctx, before: ModuleOp | None, passes: Sequence[ModulePass]) -> tuple[ModuleOp | None, str | None]:
    """The module (and entry) `--verify-each-pass-semantics` takes its reference results from.

    A shape-generic entry (the bundled pipeline) has no input to sample until the pipeline's
    `cortex-specialize-shapes` binds its shapes: the reference is then the input bound to those
    shapes, and the passes before the binding run on the same concrete inputs. Without that
    pass it is a CortexError saying so.
    """
    from cortex.passes.specialize_shapes import is_shape_generic

    binding = next((p for p in passes if p.name == "cortex-specialize-shapes"), None)
    if before is None or binding is None:
        return before, None
    entry = getattr(binding, "entry", None)
    if not isinstance(entry, str) or not is_shape_generic(before, entry):
        return before, None
    bound = before.clone()
    binding.apply(ctx, bound)
    return bound, entry


def once_bound(check: Callable, entry: str) -> Callable:
    """`check` from the pass that binds `entry`'s shapes on: before it the module cannot run on the
    reference inputs (its states have no shape), so a change made there is reported at the binding."""
    from cortex.passes.specialize_shapes import is_shape_generic

    def checked(previous, module, following) -> None:
        if not is_shape_generic(module, entry):
            check(previous, module, following)

    return checked


def normalise_argv(argv: Sequence[str]) -> list[str]:
    """mlir-opt's spellings as cortex-opt's, and `--verify-each-pass-semantics` standing alone (`=3`).

    - `--pass-pipeline='builtin.module(a,b)'` (or `--pass-pipeline X`) is `-p 'a,b'`;
    - a pass as a flag, `--canonicalize` or `--cortex-dce=mode=power_save` / `--cortex-dce='mode=power_save'`,
      joins the pipeline in command-line order, as in mlir-opt; giving both forms is an error there
      and here.
    argparse would otherwise take the input file that follows `--verify-each-pass-semantics` as N.
    """
    flag = "--verify-each-pass-semantics"
    out: list[str] = []
    pipeline: list[str] = []
    explicit = False
    names: set[str] | None = None
    args = list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == flag:
            # `--verify-each-pass-semantics 2`, as the usage line spells it; a number never names the input
            if i + 1 < len(args) and args[i + 1].isdigit() and args[i + 1].isascii():
                i += 1
                out.append(f"{flag}={args[i]}")
            else:
                out.append(f"{flag}={DEFAULT_SEMANTIC_FRAMES}")
        elif arg == "--pass-pipeline" or arg.startswith("--pass-pipeline="):
            if arg == "--pass-pipeline":
                if i + 1 >= len(args):
                    one_line_usage_error("argument --pass-pipeline: expected one argument")
                i += 1
                value = args[i]
            else:
                value = arg.split("=", 1)[1]
            out += ["-p", unanchored(value)]
            explicit = True
        elif arg == "--":
            out += args[i:]
            break
        elif arg.startswith("--") and len(arg) > 2:
            name, eq, options = arg[2:].partition("=")
            names = names if names is not None else set(all_passes())
            if name in names and name not in OPTION_NAMES:
                pipeline.append(f"{name}{{{options.strip(chr(39) + chr(34))}}}" if eq and options else name)
            else:
                out.append(arg)
        else:
            out.append(arg)
        i += 1
    if pipeline:
        if explicit or any(a in ("-p", "--passes") or a.startswith("--passes=") for a in out):
            one_line_usage_error("give the passes either as -p/--pass-pipeline or as flags (--canonicalize), not both")
        out += ["-p", ",".join(pipeline)]
    return out


OPTION_NAMES = frozenset({"help", "version", "passes", "target", "output-file", "list-passes"})
"""cortex-opt options a pass of the same name must never shadow (no pass is named so today)."""


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of frames, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of frames, got {value}")
    return value


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


def pass_summary(cls: type[ModulePass]) -> str:
    """The first sentence of a pass's docstring, on one line ("" when it has none of its own)."""
    doc = inspect.getdoc(cls) or ""
    if not doc or doc.startswith(f"{cls.__name__}(") or cls.__doc__ is None:  # dataclass's generated signature
        return ""
    name = str(getattr(cls, "name", ""))
    paragraphs = [" ".join(p.split()) for p in doc.split("\n\n") if p.strip()]
    # a first paragraph that only shows the pass's own syntax (`cortex-frame-split{entry=...}`) is no summary
    # `cortex-frame-split{entry=l2_frame}: the entry becomes ...`: the syntax is no summary, the rest is
    paragraphs = [re.sub(rf"^{re.escape(name)}(\{{[^}}]*\}})?:\s+", "", p) if name else p for p in paragraphs]
    prose = [p for p in paragraphs if not (p.split()[0].startswith(name) or len(p.split()) == 1)]
    if not prose:
        return ""
    paragraph = prose[0]
    first = re.split(r"(?<=[.:;])\s", paragraph, maxsplit=1)[0].rstrip(".:;")
    return first if len(first) <= 110 else first[:107].rstrip() + "..."


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
        self.graph_view: dict[str, Callable] = {}
        argv = normalise_argv(sys.argv[1:] if args is None else args)
        super().__init__(description=description, args=argv)

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

        tools = arg_parser.add_argument_group("pass instrumentation (as in mlir-opt)")
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

    # -- set-up --------------------------------------------------------------

    def setup_pipeline(self):
        """Build the pass instances and load the engines the flags ask for."""
        args = self.args
        args.mlir_print_ir_after_all |= args.print_between_passes
        args.mlir_timing |= args.time_passes
        if args.mlir_timing:
            self.timer = PassTimer()
            self.timer.start = self.started
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
                raise ChunkFailure(Diagnostic(f"--verify-each-pass-semantics: {e}")) from None
        printer = IRPrinter(
            after_all=self.args.mlir_print_ir_after_all,
            after_change=self.args.mlir_print_ir_after_change,
            generic=self.args.print_op_generic,
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
        """Every pass with the first line of its docstring; cortex's with their options too."""
        lines = ["cortex passes:"]
        for name, factory in sorted(cortex_passes().items()):
            try:
                cls = factory()
                lines.append(f"  {name}  {pass_summary(cls)} ({describe_options(cls)})")
            except Exception as e:  # a pass module that does not import yet
                lines.append(f"  {name}  (cannot be loaded: {type(e).__name__}: {e})")
        lines.append("xDSL passes:")
        for name in sorted(set(self.available_passes) - set(cortex_passes())):
            try:
                summary = pass_summary(self.available_passes[name]())
            except Exception:  # noqa: BLE001 - a pass whose module does not import here: list it bare
                summary = ""
            lines.append(f"  {name}  {summary}".rstrip())
        return "\n".join(lines) + "\n"


def one_line_usage_error(message: str) -> NoReturn:
    """argparse's usage errors as one line (no usage dump): `cortex-opt: error: ...`, exit 2."""
    sys.stderr.write(f"cortex-opt: error: {message} (cortex-opt --help lists the options)\n")
    raise SystemExit(2)


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
