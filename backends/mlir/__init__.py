"""The upstream MLIR harness (`upstream`): `mlir-opt` verifies lowered modules and `mlir-runner`
runs their extern-free functions natively, for tests and benchmarks to cross-check against."""
