// --verify-each-pass-semantics on the bundled shape-generic pipeline: the reference is the input
// bound to the shapes the pipeline's cortex-specialize-shapes binds; the frame count may follow
// the flag as a separate word, as the usage line shows.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'canonicalize,cortex-specialize-shapes{shapes=64x96x3},canonicalize' --verify-each-pass-semantics 1 | filecheck %s
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p canonicalize --verify-each-pass-semantics 1 2>&1 | filecheck %s --check-prefix=UNBOUND

// CHECK: func.func @l2_frame(%frame: tensor<64x96x3xui8>)
// UNBOUND: error: --verify-each-pass-semantics: argument #0 has a dynamic shape (tensor<?x?x3xui8>): cannot make a sample input for it
// UNBOUND-SAME: ; @l2_frame is shape-generic: start the pipeline with cortex-specialize-shapes, e.g. -p 'cortex-specialize-shapes{entry=l2_frame shapes=480x640x3},...'

// The hint's own pipeline runs:
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-shapes{entry=l2_frame shapes=64x64x3},canonicalize' --verify-each-pass-semantics 1 | filecheck %s --check-prefix=HINTED
// HINTED: func.func @l2_frame(%frame: tensor<64x64x3xui8>)
