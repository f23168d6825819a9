// A verifier error carries the location of the failing op (xDSL's own
// module.verify() has none): file:line:col at the op name, as mlir-opt.
// RUN: not cortex-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not cortex-opt %s --split-input-file 2>&1 | not grep Traceback

func.func @shapes(%a: tensor<4xf32>, %b: tensor<5xf32>) -> tensor<4xf32> {
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: verify_errors.mlir:[[# @LINE - 3]]:8: error: 'cortex.add' op shapes 4 and 5 do not broadcast
// CHECK-NEXT: {{^}}  %0 = cortex.add %a, %b
// CHECK-NEXT: {{^}}       ^~~~~~~~~~

// -----

// In a nested region, and in the generic form.
func.func @nested(%c: i1, %g: tensor<50x64xf32>) {
  scf.if %c {
    %m = "cortex.center_crop"(%g) <{block = 32 : i64, sigma = 3.000000e-01 : f32}> : (tensor<50x64xf32>) -> tensor<1x2xf32>
    scf.yield
  }
  func.return
}
// CHECK: verify_errors.mlir:[[# @LINE - 5]]:10: error: 'cortex.center_crop' op image H=50 is not a multiple of block=32

// -----

// An upstream op's verifier is located the same way.
func.func @upstream() -> i32 {
  %0 = arith.constant 1 : i64
  func.return %0 : i64
}
// CHECK: verify_errors.mlir:[[# @LINE - 2]]:3: error: 'func.return' op Expected arguments to have the same types as the function output types
