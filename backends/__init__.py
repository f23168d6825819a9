"""The compiler side of each backend, one folder each: a lowered module in, an `Executable` out.

- `numpy/`: the NumPy emitter (a lowered module as readable Python source; the default backend, and the
  host code of every other backend).
- `iree/`: the IREE backend: its legalisation passes (segments outlined, pooling raised, pads as
  `tensor.pad`, `powf` expanded, ...), the `iree-compile` wrapper and the program that binds the
  compiled segments into the NumPy host code.
- `mlir/`: the upstream MLIR harness (`mlir-opt` verification, `mlir-runner` execution) the tests
  cross-check lowered modules with; not a backend a compile can target.

`backend.py` is the table of backends a compile can target (`BACKENDS`).
"""
