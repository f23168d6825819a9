// cortex.compare needs a known predicate and one float, signless integer or i1 element type for both operands;
// cortex.not/and/or/xor take i1 (boolean) tensors only; shapes must broadcast.
// RUN: cortex-opt %s --verify-diagnostics --split-input-file

func.func @unknown_predicate(%x: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.compare' op predicate must be one of eq, gt, lt, ge, le, got "ne"}}
  %z = cortex.compare %x, %x {predicate = "ne"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  func.return
}

// -----

func.func @mixed(%x: tensor<2xf32>, %y: tensor<2xi32>) {
  // expected-error@+1 {{'cortex.compare' op lhs and rhs must share one element type, got f32 and i32}}
  %z = cortex.compare %x, %y {predicate = "lt"} : (tensor<2xf32>, tensor<2xi32>) -> tensor<2xi1>
  func.return
}

// -----

func.func @float_result(%x: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.compare' op result #0 has type tensor<2xf32>, but the operands imply tensor<2xi1>}}
  %z = cortex.compare %x, %x {predicate = "eq"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @not_of_float(%x: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.not' op the operand must be an i1 (boolean) tensor, got tensor<2xf32>}}
  %z = cortex.not %x : tensor<2xf32> -> tensor<2xf32>
  func.return
}

// -----

func.func @and_of_int(%x: tensor<2xi1>, %y: tensor<2xi8>) {
  // expected-error@+1 {{'cortex.and' op rhs must be an i1 (boolean) tensor, got tensor<2xi8>}}
  %z = cortex.and %x, %y : (tensor<2xi1>, tensor<2xi8>) -> tensor<2xi1>
  func.return
}

// -----

func.func @no_broadcast(%x: tensor<2xi1>, %y: tensor<3xi1>) {
  // expected-error@+1 {{'cortex.xor' op shapes 2 and 3 do not broadcast}}
  %z = cortex.xor %x, %y : (tensor<2xi1>, tensor<3xi1>) -> tensor<3xi1>
  func.return
}
