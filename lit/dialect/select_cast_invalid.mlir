// cortex.select needs an i1 condition and one element type for x and y; cortex.cast moves floats,
// signless integers and i1 only.
// RUN: cortex-opt %s --verify-diagnostics --split-input-file

func.func @float_condition(%c: tensor<2xf32>, %x: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.select' op cond must be an i1 (boolean) tensor, got tensor<2xf32>}}
  %z = cortex.select %c, %x, %x : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @mixed(%c: tensor<2xi1>, %x: tensor<2xf32>, %y: tensor<2xi32>) {
  // expected-error@+1 {{'cortex.select' op x and y must share one element type, got f32 and i32}}
  %z = cortex.select %c, %x, %y : (tensor<2xi1>, tensor<2xf32>, tensor<2xi32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @unsigned(%x: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.cast' op the result must have a float, signless integer or i1 element type, got tensor<2xui8>}}
  %z = cortex.cast %x : tensor<2xf32> -> tensor<2xui8>
  func.return
}
