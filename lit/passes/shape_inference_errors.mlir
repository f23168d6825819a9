// cortex-shape-inference stops at the first op whose shapes cannot agree
// once its operands are known, with one located line (no traceback).
// RUN: not cortex-opt %s --split-input-file -p cortex-shape-inference 2>&1 | filecheck %s

// Verifies as written (K is dynamic), but not once %a is known to be 2x3.
// CHECK: error: {{.*}}'cortex.matmul' op ({{.*}}shape_inference_errors.mlir:10:8, in @mismatch, defining %m): matmul contraction mismatch: 2x3 has K=3, 5x4 has K=5
// CHECK-NOT: Traceback
func.func @mismatch(%x: tensor<2x3xf32>, %w: tensor<5x4xf32>) -> tensor<?x?xf32> {
  %a = cortex.relu %x : tensor<2x3xf32> -> tensor<?x?xf32>
  %m = "cortex.matmul"(%a, %w) : (tensor<?x?xf32>, tensor<5x4xf32>) -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}

// -----

// Operands that stop broadcasting once %r is known to have 4 elements.
// CHECK: error: {{.*}}'cortex.add' op ({{.*}}shape_inference_errors.mlir:20:8, in @no_broadcast, defining %s): shapes 3x2 and 1x4 do not broadcast
func.func @no_broadcast(%x: tensor<3x2xf32>, %z: tensor<4xf32>) -> tensor<?x?xf32> {
  %r = cortex.relu %z : tensor<4xf32> -> tensor<?xf32>
  %s = cortex.add %x, %r : (tensor<3x2xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  func.return %s : tensor<?x?xf32>
}

// -----

// A declared static dimension that the operands contradict once known.
// CHECK: error: {{.*}}'cortex.add' op ({{.*}}shape_inference_errors.mlir:30:8, in @declared, defining %s): result #0 is declared tensor<5xf32>, but the operands imply tensor<4xf32>
func.func @declared(%z: tensor<4xf32>, %one: tensor<1xf32>) -> tensor<5xf32> {
  %r = cortex.relu %z : tensor<4xf32> -> tensor<?xf32>
  %s = cortex.add %r, %one : (tensor<?xf32>, tensor<1xf32>) -> tensor<5xf32>
  func.return %s : tensor<5xf32>
}
