"""The NumPy backend: a lowered module as a readable Python module (`emitter.emit_numpy`), one translator
module per dialect family (`arith`, `linalg` with `access`/`bodies`/`contraction`, `tensor`, `control`),
the syntax-tree helpers (`syntax`), the emitter's shared state (`codegen`) and dead-array release
(`release`)."""

from __future__ import annotations

from cortex.backends.record import Backend

BACKEND = Backend(
    "numpy", ("cpu",), ("cortex.backends.numpy.emitter", "numpy_executable"), kind="numpy",
    target=("cortex.backends.numpy.emitter", "NumpyTarget"),
)
"""The NumPy backend's record (`cortex.backends.record`): its calls reach BLAS where the emitter recorded a
matrix product or an extern call (`meta["calls_blas"]` of its executables)."""
