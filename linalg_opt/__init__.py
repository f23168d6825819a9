"""Optimisation passes on the lowered module: linalg/arith/tensor in, the same dialects out.

The lowering (`cortex.lowering`) turns cortex ops into upstream MLIR; these
passes then rewrite that upstream IR for speed, each keeping the values the
module computes: elementwise fusion (`fuse_elementwise`, the default
post-lowering pass, `cortex.lowering.POST_LOWERING_PASSES`), convolution as
im2col + matmul (`conv_im2col`), small pooling windows unrolled
(`unroll_pooling`), layout transposes of constants folded
(`fold_constant_layouts`). They are registered by name in `cortex.registry`.
"""
