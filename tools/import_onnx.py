"""cortex-import-onnx: print the cortex IR of an ONNX model (`cortex-opt model.onnx` reads it the same way).

    cortex-import-onnx model.onnx                  # custom form, to stdout
    cortex-import-onnx model.onnx -o model.mlir --print-op-generic

A model the dialect cannot express is one diagnostic naming the node, its
operator and the attribute, and exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from cortex.ir import CortexError, to_text


def onnx_as_text(path: str, generic: bool = False) -> str:
    """The imported module of the ONNX model at `path`, as MLIR text."""
    from cortex.frontends.onnx import from_onnx

    return to_text(from_onnx(path), generic=generic)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="cortex-import-onnx", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="an ONNX model (.onnx)")
    parser.add_argument("-o", "--output", help="write the IR to this file instead of stdout")
    parser.add_argument("--print-op-generic", action="store_true", help="print the generic form")
    args = parser.parse_args(argv)
    try:
        text = onnx_as_text(args.model, args.print_op_generic)
    except CortexError as e:
        sys.stderr.write(f"{args.model}: error: {e}\n")
        return 1
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        with open(args.output, "w") as f:
            f.write(text)
    except OSError as e:
        sys.stderr.write(f"error: cannot write {args.output}: {e.strerror}\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
