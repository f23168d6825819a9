// Upstream mlir-opt 22 parses and verifies the lowered L2 pipeline and the
// lowered tensor-graph examples, printed in the custom and the generic form.
// REQUIRES: mlir-opt
// RUN: cortex-opt %l2_static -p convert-cortex-to-linalg,convert-cortex-to-extern | %mlir-opt | filecheck %s
// RUN: cortex-opt %l2_static -p convert-cortex-to-linalg,convert-cortex-to-extern --print-op-generic | %mlir-opt | filecheck %s --check-prefixes=CHECK,GENERIC
// RUN: cortex-opt %examples/conv_bn.mlir -p convert-cortex-to-linalg,convert-cortex-to-extern --print-op-generic | %mlir-opt | filecheck %s --check-prefix=CONV

// xDSL prints a declaration's argument attributes only in the generic form.
// GENERIC: func.func private @cortex_encoder(tensor<480x640x3xi8> {cortex.unsigned}, tensor<15x20xf32>) -> (tensor<?xi8> {cortex.unsigned}) attributes {cortex.extern = "cortex.encoder"
// CHECK: func.func @l2_frame(%arg0: tensor<480x640x3xi8> {cortex.unsigned}
// CHECK: linalg.matmul {cortex.origin = "saliency"}

// CONV: linalg.conv_2d_nchw_fchw {cortex.origin = "y", dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}
