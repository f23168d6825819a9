// Inputs the lowering cannot handle get one located line each, no traceback.
// RUN: not cortex-opt %s --split-input-file -p convert-cortex-to-linalg,convert-cortex-to-extern 2>&1 | filecheck %s

// CHECK: error: {{.*}}convert-cortex-to-linalg: 'cortex.exp' op ({{.*}}errors.mlir:7:8, in @{{.*}}, defining %y) has the dynamic type tensor<?x4xf32>; run cortex-shape-inference first
// CHECK-NOT: Traceback
func.func @dynamic(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = cortex.exp %x : tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}

// -----

// CHECK: error: {{.*}}convert-cortex-frame-boundary: 'cortex.update_state' op ({{.*}}errors.mlir:16:5, in @{{.*}}) of state "s" is inside 'scf.if'; state updates must be at the top level of the function
func.func @nested_update(%c: i1, %x: tensor<4xf32>) {
  scf.if %c {
    cortex.update_state "s" = %x : tensor<4xf32>
  }
  func.return
}

// -----

// CHECK: error: {{.*}}convert-cortex-frame-boundary: @inner reads or writes frame state but is called from @outer; only an entry function may carry state
func.func @inner() -> tensor<4xf32> {
  %s = cortex.state "s" : tensor<4xf32>
  func.return %s : tensor<4xf32>
}
func.func @outer() -> tensor<4xf32> {
  %r = func.call @inner() : () -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}
