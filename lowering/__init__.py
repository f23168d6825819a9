"""Progressive lowering of cortex IR to upstream MLIR, and the lowered-module contract.

`lower(module)` runs `convert-cortex-to-linalg` then `convert-cortex-to-extern`
on a copy of `module` (the two passes are independent; either order gives
the same module). The result holds no cortex op and is valid for upstream
`mlir-opt` 22 in both the custom and the generic printed form.

The lowered-module contract (what the NumPy backend and the runtime read)
--------------------------------------------------------------------------

Dialects. `func`, `arith`, `math`, `tensor`, `linalg`, `scf` on tensors,
plus `func.call`s to extern declarations. Shapes are static (run
`cortex-shape-inference` first; a dynamic shape is an error), except the
encoder's `tensor<?xi8>` result. Used ops:

- `arith.constant` (scalars and `dense<...>` tensors), scalar `arith`/`math`
  ops outside and inside linalg bodies (`addf subf mulf divf negf maximumf
  cmpf select uitofp`, `math.exp log sqrt absf tanh erf powf`);
- `tensor.empty`, `tensor.expand_shape`, `tensor.collapse_shape`,
  `tensor.insert_slice` (constant padding: fill, then insert);
- `linalg.fill`, `linalg.generic`, `linalg.matmul` (default maps only),
  `linalg.reduce` (add or maximumf), `linalg.transpose`, `linalg.broadcast`,
  `linalg.conv_2d_nchw_fchw`. Upstream's `batch_matmul`, `pooling_nchw_sum`
  and `pooling_nchw_max` are written as `linalg.generic` (xDSL 0.74 lacks
  the first two and builds the third with a wrong body). Generic indexing maps may hold the constant
  0 (a broadcast size-1 dim) and `d0 * s + d1` (strided windows); a scalar
  (non-tensor) input has the map `(...) -> ()`.

Provenance. Every op the lowering inserts at function level carries the
discardable attribute `cortex.origin = "<name>"`: the SSA name of the source
op's first result when it has one (`"saliency"`, `"gray"`, `"encoded"`),
else the source op's name (`"cortex.saliency_dft"`). Ops inside linalg
bodies belong to their linalg op and are not tagged. In-memory modules
(`lower()`) keep every origin; so does the generic printed form
(`--print-op-generic`). xDSL's custom printers of `tensor.empty`,
`arith.cmpf`, `linalg.transpose`, `linalg.broadcast` and `linalg.reduce`
drop discardable attributes, so text meant to be read back should be generic.

Externs. Each external op (blur_detector, scene_change, text_roi, encoder)
becomes `func.call @cortex_<op>(...) {cortex.origin = ...}` to a private
declaration with attributes `cortex.extern = "cortex.<op>"` and
`cortex.props = {<every property, defaults included>}`; one declaration per
distinct (op, properties, signature), named `@cortex_<op>`, `@cortex_<op>_1`, ...

Frame boundary. In each function definition (the entry):
- `cortex.state "x"` reads → extra arguments `{cortex.state = "x"}`, one per
  name, after the original arguments, in order of first read;
- unspecialised `cortex.weight "w"` → extra f32 arguments
  `{cortex.weight = "w"}` after the states, in order of first use;
- `cortex.update_state "x"` → extra results `{cortex.state = "x"}` after the
  original results, in order of first update (the last update of a name
  wins); updates must sit at the function's top level.
The runtime feeds each state result back as the same-named state argument
of the next frame (zeros before the first).

Unsigned data. uint8 travels as signless `i8` (MLIR's arith rejects `ui8`):
a ui8 frame argument becomes `tensor<HxWx3xi8> {cortex.unsigned}`, the
encoder's bytes `tensor<?xi8> {cortex.unsigned}` (results and extern
declarations alike); `arith.uitofp` reads the pixels. (xDSL prints the
argument attributes of a declaration only in the generic form.)

Cross-checking. `cortex.lowering.upstream` verifies lowered modules with
`mlir-opt` and runs extern-free functions natively (`mlir-opt` to LLVM, then
`mlir-runner`), which tests/test_mlir_opt.py compares with the reference.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from cortex.ir import make_context


POST_LOWERING_PASSES = "cortex-fuse-linalg-elementwise"
"""What `cortex.compile` and `cortex-run` run on the lowered module by default (the post-lowering slot)."""


def lower(module: ModuleOp, passes: str | None = None, post_passes: str | None = None) -> ModuleOp:
    """A lowered copy of `module`; `passes` (cortex-opt `-p` syntax) runs on the copy first,
    `post_passes` on the lowered module (e.g. POST_LOWERING_PASSES)."""
    from cortex.lowering.cortex_to_extern import ConvertCortexToExternPass
    from cortex.lowering.cortex_to_linalg import ConvertCortexToLinalgPass

    lowered = module.clone()
    if passes:
        from cortex.passes.pipeline import run_pipeline

        run_pipeline(lowered, passes)
    ctx = make_context()
    ConvertCortexToLinalgPass().apply(ctx, lowered)
    ConvertCortexToExternPass().apply(ctx, lowered)
    if post_passes:
        from cortex.passes.pipeline import run_pipeline

        run_pipeline(lowered, post_passes)
    lowered.verify()
    return lowered


__all__ = ["POST_LOWERING_PASSES", "lower"]
