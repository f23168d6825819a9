"""Progressive lowering of cortex IR to upstream MLIR, and the lowered-module contract.

`cortex.lower(module)` (in `cortex.driver`) runs `convert-cortex-to-linalg` then `convert-cortex-to-extern`
on a copy of `module` (the two passes are independent; either order gives
the same module). The result holds no cortex op and is valid for upstream
`mlir-opt` 22 in both the custom and the generic printed form.

The lowered-module contract (dialects, provenance, externs, frame boundary,
unsigned data) is `cortex.dialects.abi`.

Cross-checking. `cortex.backends.mlir.upstream` verifies lowered modules with
`mlir-opt` and runs extern-free functions natively (`mlir-opt` to LLVM, then
`mlir-runner`), which tests/test_mlir_opt.py compares with the reference.
"""

POST_LOWERING_PASSES = "cortex-fuse-linalg-elementwise"
"""What `cortex.compile` and `cortex-run` run on the lowered module by default (the post-lowering slot)."""

__all__ = ["POST_LOWERING_PASSES"]
