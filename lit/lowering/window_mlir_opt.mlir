// Upstream mlir-opt 22 parses and verifies the lowered window ops.
// REQUIRES: mlir-opt
// RUN: cortex-opt %S/window.mlir -p convert-cortex-to-linalg | %mlir-opt | filecheck %s
// RUN: cortex-opt %S/window.mlir -p convert-cortex-to-linalg --print-op-generic | %mlir-opt | filecheck %s

// CHECK-LABEL: func.func @push
// CHECK:         tensor.insert
// CHECK-LABEL: func.func @median
// CHECK:         tensor.extract
