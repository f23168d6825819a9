// --verify-diagnostics passes, silently and with exit status 0, when every
// expected diagnostic is produced on its line and nothing else is: every
// designator, regexes, parse errors, and chunks with no error at all.
// RUN: cortex-opt %s --split-input-file --verify-diagnostics > %t.out 2> %t.err
// RUN: not grep . %t.err
// RUN: filecheck %s --input-file %t.out

func.func @same_line(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  %0 = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32> // expected-error {{do not broadcast}}
  func.return
}

// -----

func.func @relative(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error@+2 {{'cortex.sub' op shapes 4 and 5 do not broadcast}}

  %0 = cortex.sub %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @backwards(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  %0 = cortex.mul %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  // expected-error@-1 {{shapes 4 and 5}}
  func.return
}

// -----

func.func @above(%a: tensor<4xf32>) {
  %0 = cortex.softmax %a {axis = 1 : i64} : tensor<4xf32> -> tensor<4xf32>
  // A comment between the op and the directive does not count as a line.
  // expected-error@above {{axis 1 is out of range for rank 1}}
  func.return
}

// -----

func.func @below(%a: tensor<4xf32>) {
  // expected-error@below {{keepdims must be 0 or 1, got 3}}
  // (this comment is skipped too)
  %0 = cortex.reduce_sum %a {keepdims = 3 : i64} : tensor<4xf32> -> tensor<1xf32>
  func.return
}

// -----

func.func @regex(%g: tensor<64x64xf32>) {
  // expected-error-re@+1 {{image H={{[0-9]+}} is not a multiple of block={{[0-9]+}}}}
  %m = cortex.center_crop %g {block = 48 : i64} : tensor<64x64xf32> -> tensor<1x1xf32>
  func.return
}

// -----

func.func @parse_error() {
  // expected-error@+1 {{unknown operation 'cortex.frobnicate'}}
  %0 = cortex.frobnicate : f32
  func.return
}

// -----

func.func @no_error_here(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cortex.neg %a : tensor<4xf32> -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// The chunks that verify are printed, as mlir-opt does.
// CHECK: func.func @no_error_here
