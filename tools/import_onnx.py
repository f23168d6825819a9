"""cortex-import-onnx: print the cortex IR of an ONNX model (`cortex-opt model.onnx` reads it the same way).

    cortex-import-onnx model.onnx                  # custom form, to stdout
    cortex-import-onnx model.onnx -o model.mlir --print-op-generic

A model the dialect cannot express is one diagnostic naming the node, its
operator and the attribute, and exit status 1. Like the other tools it runs
under `cortex.tools.entry` (a Ctrl-C is exit 130 without a traceback) and never
shows a traceback: a bug is one `internal error` line and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from cortex.ir import CortexError, to_text
from cortex.tools.atomic import OutputError, detach_stdout, is_write_failure, write_bytes_atomic

INTERRUPTED = 130


def onnx_as_text(path: str, generic: bool = False) -> str:
    """The imported module of the ONNX model at `path`, as MLIR text."""
    from cortex.frontends.onnx import from_onnx

    return to_text(from_onnx(path), generic=generic)


def one_line(text: str, limit: int = 500) -> str:
    """A message as one line of at most `limit` characters (a hostile model can make them huge)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def convert(args: argparse.Namespace) -> int:
    try:
        text = onnx_as_text(args.model, args.print_op_generic)
    except CortexError as e:
        sys.stderr.write(f"{args.model}: error: {one_line(str(e))}\n")
        return 1
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()  # a full standard output fails here, inside the error handling
        return 0
    try:  # whole or absent; a device or FIFO is written into, a symlink's target replaced
        write_bytes_atomic(args.output, text.encode())
    except OutputError as e:
        sys.stderr.write(f"error: {e}\n")
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cortex-import-onnx", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="an ONNX model (.onnx)")
    parser.add_argument("-o", "--output", help="write the IR to this file instead of stdout")
    parser.add_argument("--print-op-generic", action="store_true", help="print the generic form")
    args = parser.parse_args(argv)
    try:
        return convert(args)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BrokenPipeError:  # `cortex-import-onnx m.onnx | head`: the reader has gone
        detach_stdout()
        return 0
    except OSError as e:
        if not is_write_failure(e):
            raise
        detach_stdout()
        sys.stderr.write(f"error: cannot write standard output: {e.strerror or e}\n")
        return 1
    except Exception as e:  # a bug, not bad input: one line (CORTEX_DEBUG=1 shows the traceback)
        if os.environ.get("CORTEX_DEBUG"):
            raise
        sys.stderr.write(f"error: internal error: {type(e).__name__}: {one_line(str(e))}\n")
        sys.stderr.write("(this is a bug in cortex-import-onnx; CORTEX_DEBUG=1 shows the traceback)\n")
        return 2


if __name__ == "__main__":
    sys.exit(main())
