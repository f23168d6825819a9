"""cortex-opt's command line: its help, its own flags, and mlir-opt's spellings read as cortex-opt's.

`normalise_argv` runs on the raw arguments before argparse sees them:

- a single-dash long flag (`-split-input-file`, `-mlir-print-ir-after-all`, `-canonicalize`), as
  mlir-opt's command-line library accepts it, is the double-dash one;
- `--pass-pipeline='builtin.module(a,b)'` (or `--pass-pipeline X`) is `-p`, anchors and all
  (`cortex.registry.parse_pipeline` reads them);
- a pass as a flag (`--canonicalize`, `--cortex-dce=mode=power_save`) joins a pipeline in
  command-line order;
- the pipeline is given once: `-p` with `--pass-pipeline`, `-p` twice, or `-p` beside pass flags is
  refused, as mlir-opt refuses an option given twice, rather than one silently dropped;
- `--verify-each-pass-semantics` stands alone (`=3`): argparse would take the input file after it as N.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping, Sequence
from typing import NoReturn

from cortex.registry import all_passes

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
As in mlir-opt, --pass-pipeline='builtin.module(func.func(canonicalize),cse)'
is -p (every pass runs on the whole module, so func.func(...) anchors change
nothing), single-dash long flags work (-split-input-file), and each pass is
also a flag: --canonicalize --cse --cortex-dce='mode=power_save'. The
pipeline is given once: -p with --pass-pipeline or with pass flags is refused.
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

OPTION_NAMES = frozenset({"help", "version", "passes", "target", "output-file", "list-passes"})
"""cortex-opt options a pass of the same name must never shadow (no pass is named so today)."""

PIPELINE_FLAGS = ("-p", "--passes", "--pass-pipeline")


def one_line_usage_error(message: str) -> NoReturn:
    """argparse's usage errors as one line (no usage dump): `cortex-opt: error: ...`, exit 2."""
    sys.stderr.write(f"cortex-opt: error: {message} (cortex-opt --help lists the options)\n")
    raise SystemExit(2)


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive number of frames, got '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of frames, got {value}")
    return value


def option_arity(parser: argparse.ArgumentParser) -> dict[str, bool]:
    """Every option string of `parser` → whether it takes a value (`-p X`), for `normalise_argv`."""
    return {flag: action.nargs != 0 for action in parser._actions for flag in action.option_strings}


def long_spelling(arg: str, options: Mapping[str, bool], passes: set[str]) -> str:
    """`-split-input-file` → `--split-input-file`, `-canonicalize` → `--canonicalize`; anything else as is."""
    if not arg.startswith("-") or arg.startswith("--") or len(arg) <= 2:
        return arg
    name = arg[1:].partition("=")[0]
    known = f"--{name}" in options or name in passes or name in ("pass-pipeline", "verify-each-pass-semantics")
    return "-" + arg if known else arg


def pipeline_flag(arg: str) -> str | None:
    """Which pipeline flag `arg` is (`-p`, `--passes` or `--pass-pipeline`, in any spelling), or None."""
    for flag in PIPELINE_FLAGS:
        if arg == flag or arg.startswith(flag + "=") or (flag == "-p" and arg.startswith("-p") and arg[2:3] != "-"):
            return flag
    return None


def normalise_argv(argv: Sequence[str], options: Mapping[str, bool] | None = None) -> list[str]:
    """mlir-opt's spellings as cortex-opt's (see the module docstring). `options`: the parser's option
    strings and whether each takes a value (`option_arity`); without them single-dash long flags stay."""
    options = options or {}
    out: list[str] = []
    pass_flags: list[str] = []
    given: list[str] = []  # the pipeline flags, in order
    passes: set[str] | None = None
    args = list(argv)
    i = 0
    while i < len(args):
        passes = passes if passes is not None else set(all_passes())
        arg = long_spelling(args[i], options, passes)
        flag = pipeline_flag(arg)
        name, eq, value = arg[2:].partition("=")
        if arg == "--":
            out += args[i:]
            break
        if name == "verify-each-pass-semantics" and not eq:
            # `--verify-each-pass-semantics 2`, as the usage line spells it; a number never names the input
            if i + 1 < len(args) and args[i + 1].isdigit() and args[i + 1].isascii():
                i += 1
                out.append(f"--{name}={args[i]}")
            else:
                out.append(f"--{name}={DEFAULT_SEMANTIC_FRAMES}")
        elif flag is not None:
            given.append(flag)
            if arg in PIPELINE_FLAGS:  # its value is the next argument, whatever it looks like
                if i + 1 >= len(args):
                    one_line_usage_error(f"argument {arg}: expected one argument")
                i += 1
                value = args[i]
            elif flag == "-p":
                value = arg[2:].removeprefix("=")
            out += ["-p", value]
        elif arg.startswith("--") and len(arg) > 2 and name in passes and name not in OPTION_NAMES:
            pass_flags.append(f"{name}{{{value.strip(chr(39) + chr(34))}}}" if eq and value else name)
        else:
            out.append(arg)
            if options.get(arg) and i + 1 < len(args):  # an option's value is never a flag of ours
                i += 1
                out.append(args[i])
        i += 1
    if pass_flags:
        given.append("pass flags (" + " ".join(f"--{p}" for p in pass_flags) + ")")
        out += ["-p", ",".join(pass_flags)]
    if len(given) > 1:
        one_line_usage_error(f"the pass pipeline is given {len(given)} times ({', '.join(given)}): give it once, "
                             "as -p, as --pass-pipeline or as pass flags (--canonicalize)")
    return out


__all__ = [
    "DEFAULT_SEMANTIC_FRAMES",
    "DESCRIPTION",
    "EPILOG",
    "HELP_OVERRIDES",
    "normalise_argv",
    "one_line_usage_error",
    "option_arity",
    "positive_int",
]
