// --verify-diagnostics fails (exit status 1) on every kind of mismatch and
// says which: an expectation that was not produced, an error nobody
// expected, an error on another line than expected, a malformed directive.
// RUN: not cortex-opt %s --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @wrong_message(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{shapes 4 and 6 do not broadcast}}
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 3]]:8: error: unexpected error: 'cortex.add' op shapes 4 and 5 do not broadcast
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 5]]:6: error: expected error "shapes 4 and 6 do not broadcast" was not produced

// -----

func.func @unexpected(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 3]]:8: error: unexpected error: 'cortex.add' op shapes 4 and 5 do not broadcast

// -----

func.func @wrong_line(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error@+2 {{do not broadcast}}
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 3]]:8: error: unexpected error: 'cortex.add' op shapes 4 and 5 do not broadcast
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 5]]:6: error: expected error "do not broadcast" was not produced

// -----

func.func @nothing_produced(%a: tensor<4xf32>) {
  // expected-error@+1 {{this never happens}}
  %0 = cortex.neg %a : tensor<4xf32> -> tensor<4xf32>
  func.return
}
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 4]]:6: error: expected error "this never happens" was not produced

// -----

func.func @malformed(%a: tensor<4xf32>) {
  // expected-error@+1 missing braces
  // expected-error@sideways {{no such designator}}
  // expected-error {{on a line of its own}}
  func.return
}
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 5]]:6: error: malformed expected-* directive
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 5]]:6: error: unknown designator '@sideways' (use @+N, @-N, @above or @below)
// CHECK: verify_diagnostics_mismatch.mlir:[[# @LINE - 5]]:6: error: expected-* directive on a line of its own needs @above, @below, @+N or @-N
