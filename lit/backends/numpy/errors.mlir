// What the NumPy target cannot print is a one-line error, not a traceback.
// RUN: not cortex-opt %s -t numpy 2>&1 | filecheck %s
// RUN: not cortex-opt %s -p convert-cortex-to-linalg,convert-cortex-to-extern -t numpy --split-input-file 2>&1 | filecheck %s --check-prefix=LOWERED

// CHECK: error: {{.*}}numpy backend: the module still contains 'cortex.gray'; lower it first (-p convert-cortex-to-linalg,convert-cortex-to-extern)
// CHECK-NOT: Traceback
func.func @g(%frame: tensor<32x32x3xui8>) -> tensor<32x32xf32> {
  %gray = cortex.gray %frame : tensor<32x32x3xui8> -> tensor<32x32xf32>
  func.return %gray : tensor<32x32xf32>
}

// -----

// LOWERED: error: {{.*}}numpy backend: @mystery is a declaration without a 'cortex.extern' attribute: no kernel to call
// LOWERED-NOT: Traceback
func.func private @mystery(tensor<4xf32>) -> tensor<4xf32>
func.func @h(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = func.call @mystery(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
