"""The NumPy backend: a lowered module as a readable Python module (`emitter.emit_numpy`), one translator
module per dialect family (`arith`, `linalg` with `access`/`bodies`/`contraction`, `tensor`, `control`),
the syntax-tree helpers (`syntax`), the emitter's shared state (`codegen`) and dead-array release
(`release`)."""
