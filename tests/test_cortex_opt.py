"""cortex-opt: bad input of every kind is one located diagnostic and a non-zero exit, never a traceback.

Most tests run the driver in-process (`main(argv)` returns the exit status);
a few run the installed console script to cover the real entry point.
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i64
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from cortex.dialects.tensor_ops import SoftmaxOp
from cortex.registry import cortex_passes
from cortex.tools.cortex_opt import CortexOptMain, UsageError, load_optional, main, split_input
from cortex.tools.diagnostics import Diagnostic, check_expectations, parse_expectations

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "l2_pipeline.mlir"
LOCATED = re.compile(r"^(?P<file>\S+):(?P<line>\d+):(?P<col>\d+): error: (?P<message>.+)$", re.M)

SOFTMAX = """\
func.func @graph(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = cortex.softmax %x {axis = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
"""


def run(capsys, *argv: str, stdin: str | None = None, driver=CortexOptMain) -> tuple[int, str, str]:
    """Run cortex-opt in-process: (exit status, stdout, stderr)."""
    if stdin is not None:
        old = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    try:
        rc = main(list(argv), driver=driver)
    finally:
        if stdin is not None:
            sys.stdin = old
    out, err = capsys.readouterr()
    return rc, out, err


def write(tmp_path: Path, text: str, name: str = "input.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# ---------------------------------------------------------------------------
# Malformed input: file:line:col: error: message, source line, caret.
# ---------------------------------------------------------------------------

MALFORMED = {
    # name: (input, (line, col), message fragment)
    "garbage": ("this is not mlir at all\n", (1, 1), "unknown operation 'this'"),
    "unknown op": (
        "func.func @f() {\n  %0 = cortex.frobnicate : f32\n  func.return\n}\n",
        (2, 8),
        "unknown operation 'cortex.frobnicate' (the 'cortex' dialect has no such op)",
    ),
    "unknown dialect": (
        'func.func @f() {\n  "nope.op"() : () -> ()\n  func.return\n}\n',
        (2, 3),
        "unknown operation 'nope.op' (no dialect 'nope' is registered)",
    ),
    "undefined value": (
        "func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "  %0 = cortex.neg %b : tensor<4xf32> -> tensor<4xf32>\n"
        "  func.return %0 : tensor<4xf32>\n}\n",
        (2, 19),
        "use of undeclared SSA value name '%b'",
    ),
    "bad type": ("func.func @f(%a: tensor<4xfloat>) {\n  func.return\n}\n", (1, 27), "Expected shape type"),
    "type disagrees with definition": (
        "func.func @f(%a: tensor<4xf32>) {\n  %0 = cortex.exp %a : tensor<8xf32> -> tensor<8xf32>\n  func.return\n}\n",
        (2, 19),
        "has been previously used or defined with type tensor<4xf32>",
    ),
    "property of the wrong kind": (
        "func.func @f(%g: tensor<64x64xf32>) {\n"
        '  %m = cortex.center_crop %g {block = "big"} : tensor<64x64xf32> -> tensor<2x2xf32>\n'
        "  func.return\n}\n",
        (2, 8),
        "'cortex.center_crop' op property 'block' must be an i64 integer, e.g. `16 : i64`; got `\"big\"`",
    ),
    "unterminated region": ("func.func @f() {\n  func.return\n", (3, 1), ""),
    "unterminated string": (
        'func.func @f() {\n  %w = cortex.weight "wc : f32\n  func.return\n}\n',
        (2, 22),
        "unterminated string literal",
    ),
    "verifier failure": (
        "func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {\n"
        "  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>\n"
        "  func.return\n}\n",
        (2, 8),
        "'cortex.add' op shapes 4 and 5 do not broadcast",
    ),
    "verifier failure in a nested region": (
        "func.func @f(%c: i1, %g: tensor<50x64xf32>) {\n  scf.if %c {\n"
        "    %m = cortex.center_crop %g : tensor<50x64xf32> -> tensor<1x2xf32>\n"
        "    scf.yield\n  }\n  func.return\n}\n",
        (3, 10),
        "image H=50 is not a multiple of block=32",
    ),
    "upstream verifier failure": (
        "func.func @f() -> i32 {\n  %0 = arith.constant 1 : i64\n  func.return %0 : i64\n}\n",
        (3, 3),
        "'func.return' op",
    ),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_input_is_one_located_error(capsys, tmp_path, case):
    text, (line, col), fragment = MALFORMED[case]
    path = write(tmp_path, text)
    rc, out, err = run(capsys, path)
    assert rc == 1
    assert "Traceback" not in err and "internal error" not in err
    errors = list(LOCATED.finditer(err))
    assert len(errors) == 1, err
    found = errors[0]
    assert (found["file"], int(found["line"]), int(found["col"])) == (path, line, col), err
    assert fragment in found["message"]
    # mlir-opt's rendering: the source line, then a caret under the column.
    lines = err.splitlines()
    index = lines.index(found.group(0))
    source = text.splitlines()
    assert lines[index + 1] == (source[line - 1] if line <= len(source) else "")
    assert lines[index + 2].index("^") == col - 1


def test_stdin_is_named_stdin(capsys):
    rc, _, err = run(capsys, stdin="func.func @f() {\n  %0 = cortex.nope : f32\n}\n")
    assert rc == 1
    assert err.startswith("<stdin>:2:8: error: unknown operation 'cortex.nope'")


def test_empty_input_is_an_empty_module(capsys):
    rc, out, err = run(capsys, stdin="// just a comment\n")
    assert (rc, err) == (0, "")
    assert out.split() == ["builtin.module", "{", "}"]


def test_split_input_reports_file_line_numbers(capsys, tmp_path):
    good = "func.func @ok() {\n  func.return\n}\n"
    bad = "func.func @bad(%a: tensor<4xf32>) {\n  %0 = cortex.softmax %a {axis = 4 : i64} : tensor<4xf32> -> tensor<4xf32>\n  func.return\n}\n"
    text = good + "// -----\n" + good + "// -----\n" + bad
    path = write(tmp_path, text)
    rc, out, err = run(capsys, path, "--split-input-file")
    assert rc == 1
    expected_line = text.splitlines().index(bad.splitlines()[1]) + 1
    assert re.match(rf"{re.escape(path)}:{expected_line}:8: error: 'cortex.softmax' op axis 4", err)
    # The chunks that verify are still printed, with mlir-opt's separators.
    assert out.count("func.func @ok") == 2 and out.count("// -----") == 2


def test_split_input_chunks_and_offsets():
    chunks = split_input("a\nb\n// -----\nc\n  // -----  \nd")
    assert chunks == [("a\nb", 0), ("c", 3), ("d", 5)]
    # A separator must be the whole line: `// ------- x` and IR dumps are not.
    assert len(split_input("a\n// -----// IR Dump After x //----- //\nb")) == 1


# ---------------------------------------------------------------------------
# Bad command lines: one `error:` line, no location, exit 1.
# ---------------------------------------------------------------------------

USAGE = {
    "unknown pass": (["-p", "cortex-nonsense"], "error: unknown pass 'cortex-nonsense'"),
    "misspelt pass": (["-p", "canonicalise"], "did you mean 'canonicalize'?"),
    "unknown option": (["-p", "cse{fast=true}"], "error: pass 'cse' has no option 'fast'; it takes no options"),
    "bad option value": (
        ["-p", "expand-math-to-polynomials{terms=lots}"],
        "error: invalid options for pass 'expand-math-to-polynomials': Incompatible types",
    ),
    "bad option syntax": (["-p", "cse,canonicalize{"], "<pass-pipeline>:1:18: error: invalid pass pipeline"),
    "missing separator": (["-p", "cse canonicalize"], "error: invalid pass pipeline: Expected a comma"),
}


@pytest.mark.parametrize("case", sorted(USAGE))
def test_bad_pipeline_is_one_error(capsys, case):
    argv, expected = USAGE[case]
    rc, out, err = run(capsys, str(EXAMPLE), *argv)
    assert rc == 1 and out == ""
    assert err.splitlines()[0].startswith(expected) or expected in err.splitlines()[0], err
    assert "Traceback" not in err


def test_missing_file(capsys, tmp_path):
    rc, out, err = run(capsys, str(tmp_path / "nope.mlir"))
    assert rc == 1 and out == ""
    assert err == f"error: could not open input file '{tmp_path / 'nope.mlir'}': No such file or directory\n"


def test_unknown_flag_is_an_argparse_error(capsys):
    rc, _, err = run(capsys, "--frobnicate")
    assert rc == 2
    assert "cortex-opt: error: unrecognized arguments: --frobnicate" in err


def test_help_describes_and_gives_examples(capsys):
    rc, out, _ = run(capsys, "--help")
    assert rc == 0
    assert "the mlir-opt of Cortex" in out
    assert "examples:" in out and "--verify-diagnostics" in out and "--mlir-print-ir-after-all" in out
    for name in cortex_passes():
        assert name in out.replace("\n", "").replace(" ", "")


def test_output_file_only_on_success(capsys, tmp_path):
    target = tmp_path / "out.mlir"
    rc, out, _ = run(capsys, write(tmp_path, SOFTMAX), "-o", str(target))
    assert rc == 0 and out == ""
    assert "cortex.softmax" in target.read_text()
    target.unlink()
    bad = write(tmp_path, SOFTMAX.replace("axis = 0", "axis = 9"), "bad.mlir")
    rc, _, _ = run(capsys, bad, "-o", str(target))
    assert rc == 1 and not target.exists()


# ---------------------------------------------------------------------------
# --verify-diagnostics
# ---------------------------------------------------------------------------

EXPECTING = """\
func.func @f(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{MESSAGE}}
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}
"""


def test_verify_diagnostics_passes_silently(capsys, tmp_path):
    path = write(tmp_path, EXPECTING.replace("MESSAGE", "'cortex.add' op shapes 4 and 5"))
    rc, out, err = run(capsys, path, "--verify-diagnostics")
    assert (rc, out, err) == (0, "", "")


def test_verify_diagnostics_fails_on_a_wrong_message(capsys, tmp_path):
    path = write(tmp_path, EXPECTING.replace("MESSAGE", "shapes 4 and 6"))
    rc, _, err = run(capsys, path, "--verify-diagnostics")
    assert rc == 1
    assert f"{path}:3:8: error: unexpected error: 'cortex.add' op shapes 4 and 5 do not broadcast" in err
    assert f'{path}:2:6: error: expected error "shapes 4 and 6" was not produced' in err


def test_verify_diagnostics_fails_when_nothing_is_produced(capsys, tmp_path):
    path = write(tmp_path, SOFTMAX.replace("  %y", "  // expected-error@+1 {{no}}\n  %y"))
    rc, out, err = run(capsys, path, "--verify-diagnostics")
    assert rc == 1
    assert 'expected error "no" was not produced' in err
    assert "cortex.softmax" in out  # the chunk itself succeeded and is printed


def test_verify_diagnostics_fails_on_an_unexpected_error(capsys, tmp_path):
    path = write(tmp_path, EXPECTING.replace("  // expected-error@+1 {{MESSAGE}}\n", ""))
    rc, _, err = run(capsys, path, "--verify-diagnostics")
    assert rc == 1
    assert f"{path}:2:8: error: unexpected error: 'cortex.add' op" in err


def test_verify_diagnostics_fails_on_the_right_message_at_another_line(capsys, tmp_path):
    path = write(tmp_path, EXPECTING.replace("@+1 {{MESSAGE}}", "@+2 {{do not broadcast}}"))
    rc, _, err = run(capsys, path, "--verify-diagnostics")
    assert rc == 1
    assert f"{path}:3:8: error: unexpected error: 'cortex.add' op shapes 4 and 5 do not broadcast" in err
    assert f'{path}:2:6: error: expected error "do not broadcast" was not produced' in err


def test_expectation_designators():
    text = "\n".join(
        [
            "op_a  // expected-error {{same}}",  # 1
            "// expected-error@+2 {{plus}}",  # 2
            "// expected-error@below {{below}}",  # 3
            "op_b",  # 4
            "// a comment line is not a target",  # 5
            "// expected-error@above {{above}}",  # 6
            "// expected-error@-6 {{minus}}",  # 7
            "// expected-warning-re@above {{a {{[0-9]+}} b}}",  # 8
        ]
    )
    expected, problems = parse_expectations(text, "f.mlir")
    assert problems == []
    lines = {e.message: e.line for e in expected}
    assert lines == {"same": 1, "plus": 4, "below": 4, "above": 4, "minus": 1, "a {{[0-9]+}} b": 4}
    regex = next(e for e in expected if e.regex is not None)
    assert regex.severity == "warning"
    assert regex.matches(Diagnostic("x a 42 b y", "warning", "f.mlir", 4, 1))
    assert not regex.matches(Diagnostic("x a b y", "warning", "f.mlir", 4, 1))
    assert not regex.matches(Diagnostic("x a 42 b y", "error", "f.mlir", 4, 1))


def test_expectations_match_each_diagnostic_once():
    expected, _ = parse_expectations("op // expected-error {{boom}}\n", "f.mlir")
    one = Diagnostic("it went boom", "error", "f.mlir", 1, 1)
    assert check_expectations(expected, [one]) == []
    expected, _ = parse_expectations("op // expected-error {{boom}}\n", "f.mlir")
    mismatches = check_expectations(expected, [one, one])
    assert [m.message for m in mismatches] == ["unexpected error: it went boom"]


def test_malformed_directives_are_reported():
    _, problems = parse_expectations("// expected-error@+1 no braces\n// expected-error@left {{x}}\nop\n", "f.mlir")
    assert [p.line for p in problems] == [1, 2]
    assert "malformed expected-* directive" in problems[0].message
    assert "unknown designator '@left'" in problems[1].message


# ---------------------------------------------------------------------------
# Failures during the pipeline: attributed to the pass.
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class BreakIRPass(ModulePass):
    """Leaves an op that no longer verifies (softmax axis out of range)."""

    name = "test-break-ir"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for softmax in op.walk():
            if isinstance(softmax, SoftmaxOp):
                softmax.axis = IntegerAttr(7, i64)


@dataclass(frozen=True)
class ChangeAxisPass(ModulePass):
    """Keeps the IR valid but changes what it computes (softmax over the other axis)."""

    name = "test-change-axis"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for softmax in op.walk():
            if isinstance(softmax, SoftmaxOp):
                softmax.axis = IntegerAttr(1, i64)


@dataclass(frozen=True)
class RefusePass(ModulePass):
    name = "test-refuse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise PassFailedException("nothing to do with this module")


@dataclass(frozen=True)
class CrashPass(ModulePass):
    name = "test-crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("a bug in the pass")


class FaultyPassDriver(CortexOptMain):
    def register_all_passes(self):
        super().register_all_passes()
        for cls in (BreakIRPass, ChangeAxisPass, RefusePass, CrashPass):
            self.register_pass(cls.name, lambda cls=cls: cls)


def test_ir_that_stops_verifying_names_the_pass(capsys, tmp_path):
    path = write(tmp_path, SOFTMAX)
    rc, out, err = run(capsys, path, "-p", "cse,test-break-ir,canonicalize", driver=FaultyPassDriver)
    assert rc == 1 and out == ""
    assert err.startswith(
        f"{path}:2:8: error: IR does not verify after pass 'test-break-ir': "
        "'cortex.softmax' op axis 7 is out of range for rank 2"
    )


def test_a_failing_pass_is_a_diagnostic(capsys, tmp_path):
    rc, _, err = run(capsys, write(tmp_path, SOFTMAX), "-p", "cse,test-refuse", driver=FaultyPassDriver)
    assert rc == 1
    assert err == "error: pass 'test-refuse' failed: nothing to do with this module\n"


def test_a_crashing_pass_is_an_internal_error(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("CORTEX_DEBUG", raising=False)
    rc, _, err = run(capsys, write(tmp_path, SOFTMAX), "-p", "test-crash", driver=FaultyPassDriver)
    assert rc == 2
    assert err.startswith("error: internal error: pass 'test-crash' crashed: RuntimeError: a bug in the pass\n")
    assert "Traceback" not in err


def test_cortex_debug_shows_the_traceback(tmp_path, monkeypatch):
    monkeypatch.setenv("CORTEX_DEBUG", "1")
    with pytest.raises(Exception, match="a bug in the pass"):
        main([write(tmp_path, SOFTMAX), "-p", "test-crash"], driver=FaultyPassDriver)


def test_semantics_check_names_the_pass_that_changed_results(capsys, tmp_path):
    path = write(tmp_path, SOFTMAX)
    argv = [path, "-p", "cse,test-change-axis", "--verify-each-pass-semantics=1"]
    rc, out, err = run(capsys, *argv, driver=FaultyPassDriver)
    assert rc == 1 and out == ""
    assert err.startswith("error: pass 'test-change-axis' changed the results of @graph"), err
    # The same pipeline without the faulty pass goes through.
    rc, out, err = run(capsys, path, "-p", "cse,canonicalize", "--verify-each-pass-semantics", driver=FaultyPassDriver)
    assert (rc, err) == (0, "") and "cortex.softmax" in out


@pytest.mark.parametrize("frames, words", [("0", "got 0"), ("-2", "got -2"), ("two", "got 'two'")])
def test_semantics_check_takes_a_positive_number_of_frames(capsys, tmp_path, frames, words):
    rc, out, err = run(capsys, write(tmp_path, SOFTMAX), "-p", "cse", f"--verify-each-pass-semantics={frames}")
    assert rc == 2 and out == ""
    assert f"--verify-each-pass-semantics: expected a positive number of frames, {words}" in err


def test_ir_dumps_only_after_changes(capsys, tmp_path):
    path = write(tmp_path, SOFTMAX)
    rc, out, err = run(capsys, path, "-p", "cse,test-change-axis,cse", "--mlir-print-ir-after-change", driver=FaultyPassDriver)
    assert rc == 0
    assert re.findall(r"IR Dump After (\S+)", err) == ["ChangeAxisPass"]
    assert "axis = 1" in err and "axis = 1" in out
    rc, _, err = run(capsys, path, "-p", "cse,test-change-axis,cse", "--mlir-print-ir-after-all", driver=FaultyPassDriver)
    assert re.findall(r"IR Dump After \S+ \((\S+)\)", err) == ["cse", "test-change-axis", "cse"]


# ---------------------------------------------------------------------------
# Robustness: mangled versions of a real program never crash the driver.
# ---------------------------------------------------------------------------

SOURCE = (ROOT / "lit" / "dialect" / "vision_roundtrip.mlir").read_text()
BODY = SOURCE[SOURCE.index("func.func") : SOURCE.index("// CHECK-LABEL")]


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    edits=st.lists(
        st.tuples(st.integers(0, len(BODY) - 1), st.sampled_from(['', '"', "%", "{", "}", "(", ")", "<", ">", ":", ",", "x", "0", "\n"])),
        min_size=1,
        max_size=3,
    )
)
def test_mangled_input_never_crashes(capsys, tmp_path, edits):
    text = BODY
    for position, replacement in sorted(edits, reverse=True):
        text = text[:position] + replacement + text[position + 1 :]
    rc, _, err = run(capsys, write(tmp_path, text))
    assert rc in (0, 1), err
    assert "Traceback" not in err and "internal error" not in err
    if rc == 1:
        assert err.count("error:") == 1 and LOCATED.match(err), err


# ---------------------------------------------------------------------------
# The installed console script.
# ---------------------------------------------------------------------------

needs_script = pytest.mark.skipif(shutil.which("cortex-opt") is None, reason="cortex-opt is not installed")


@pytest.mark.slow
@needs_script
@pytest.mark.parametrize(
    "argv, stdin, expected",
    [
        ([], "this is not mlir\n", "<stdin>:1:1: error: unknown operation 'this'"),
        (["-p", "no-such-pass", str(EXAMPLE)], None, "error: unknown pass 'no-such-pass'"),
        (["/nonexistent/input.mlir"], None, "error: could not open input file '/nonexistent/input.mlir'"),
    ],
)
def test_console_script_errors(argv, stdin, expected):
    # waits for the process's exit, however loaded the machine (pytest-timeout is the net for a hang)
    proc = subprocess.run(["cortex-opt", *argv], input=stdin, capture_output=True, text=True)
    assert proc.returncode == 1
    assert proc.stderr.startswith(expected)
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
@needs_script
def test_console_script_round_trips_the_l2_pipeline():
    first = subprocess.run(["cortex-opt", str(EXAMPLE)], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    again = subprocess.run(["cortex-opt"], input=first.stdout, capture_output=True, text=True)
    assert again.returncode == 0 and again.stdout == first.stdout


def test_a_missing_optional_module_is_reported_not_raised():
    with pytest.raises(UsageError, match=r"--view-graph is not available: cortex.passes.no_such_view is not part"):
        load_optional("--view-graph", "cortex.passes.no_such_view", ["render_table"])
    with pytest.raises(UsageError, match=r"cortex.registry does not define render_table"):
        load_optional("--view-graph", "cortex.registry", ["render_table"])


def test_list_passes(capsys):
    rc, out, _ = run(capsys, "--list-passes")
    assert rc == 0
    cortex_part, xdsl_part = out.split("xDSL passes:")
    lines = {line.split()[0]: line for line in cortex_part.splitlines()[1:]}
    for name in cortex_passes():  # a one-line description (the docstring's first sentence), then the options
        assert re.fullmatch(rf"  {re.escape(name)}  [^ (].+ \((it takes no options|its options are .+)\)", lines[name]), lines[name]
    assert "  cortex-frame-split  the entry becomes its delayed, parallel, recurrence and tail parts (" in cortex_part
    assert "\n  canonicalize  Applies all canonicalization patterns\n" in xdsl_part and "\n  cse\n" in xdsl_part


def test_mlir_timing_counts_the_start_up_from_the_process_start(monkeypatch, tmp_path, capsys):
    """As a program, --mlir-timing's clock starts with the process (the interpreter and the imports count);
    called from Python with arguments, with the call."""
    import time

    import cortex.tools.cortex_opt as opt

    source = tmp_path / "f.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    monkeypatch.setattr(opt, "process_start", lambda: time.perf_counter() - 100.0)  # a process 100 s old
    monkeypatch.setattr(sys, "argv", ["cortex-opt", str(source), "--mlir-timing"])
    assert opt.main() == 0
    row = next(line for line in capsys.readouterr().err.splitlines() if "Start-up" in line)
    assert row.endswith("Start-up (interpreter, imports, registration, pass set-up)")
    assert float(row.split()[0]) >= 100.0
    assert opt.main([str(source), "--mlir-timing"]) == 0
    row = next(line for line in capsys.readouterr().err.splitlines() if "Start-up" in line)
    assert row.endswith("Start-up (registration, pass set-up)") and float(row.split()[0]) < 100.0
