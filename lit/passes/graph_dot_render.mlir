// REQUIRES: dot
// The DOT text is valid Graphviz: --graph-dot renders .svg with `dot`.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p cortex-partition --graph-dot=%t.svg > /dev/null
// RUN: filecheck %s --input-file %t.svg
// CHECK: <svg
// CHECK: l2_frame_compiled_2
// CHECK: saliency_dft
