// RUN: cortex-opt %s --split-input-file --verify-diagnostics
// One case per verifier rule of cortex.gaussian_blur, cortex.cast and cortex.to_scalar.

func.func @even_window(%x: tensor<8x8xf64>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op ksize must be a positive odd number, got 4}}
  %b = cortex.gaussian_blur %x {ksize = 4 : i64} : tensor<8x8xf64> -> tensor<8x8xf64>
  func.return
}

// -----

func.func @no_sigma(%x: tensor<8x8xf64>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op sigma must be positive, got 0.0}}
  %b = cortex.gaussian_blur %x {sigma = 0.0 : f32} : tensor<8x8xf64> -> tensor<8x8xf64>
  func.return
}

// -----

func.func @colour_image(%x: tensor<8x8x3xf32>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op image #0 must be a 2-D f32 or f64 tensor (H x W), got tensor<8x8x3xf32>}}
  %b = cortex.gaussian_blur %x : tensor<8x8x3xf32> -> tensor<8x8x3xf32>
  func.return
}

// -----

func.func @integer_image(%x: tensor<8x8xi32>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op image #0 must be a 2-D f32 or f64 tensor (H x W), got tensor<8x8xi32>}}
  %b = cortex.gaussian_blur %x : tensor<8x8xi32> -> tensor<8x8xi32>
  func.return
}

// -----

func.func @mixed_stack(%x: tensor<8x8xf32>, %y: tensor<8x8xf64>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op every image must have one type, got tensor<8x8xf32> and tensor<8x8xf64> (image #1)}}
  %a, %b = cortex.gaussian_blur %x, %y : tensor<8x8xf32>, tensor<8x8xf64> -> tensor<8x8xf32>, tensor<8x8xf64>
  func.return
}

// -----

func.func @result_count(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op needs one result per image, got 2 images and 1 results}}
  %a = "cortex.gaussian_blur"(%x, %y) <{ksize = 11 : i64, sigma = 1.5 : f32}> : (tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<8x8xf32>
  func.return
}

// -----

func.func @result_type(%x: tensor<8x8xf32>) {
  // expected-error@+1 {{'cortex.gaussian_blur' op result #0 has type tensor<8x8xf64>, but the operands imply tensor<8x8xf32>}}
  %a = "cortex.gaussian_blur"(%x) <{ksize = 11 : i64, sigma = 1.5 : f32}> : (tensor<8x8xf32>) -> tensor<8x8xf64>
  func.return
}

// -----

func.func @no_image() {
  // expected-error@+1 {{'cortex.gaussian_blur' op needs at least one image}}
  "cortex.gaussian_blur"() <{ksize = 11 : i64, sigma = 1.5 : f32}> : () -> ()
  func.return
}

// -----

func.func @cast_changes_the_shape(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'cortex.cast' op result #0 has type tensor<4x5xf64>, but the operands imply tensor<4x4xf64>}}
  %w = cortex.cast %x : tensor<4x4xf32> -> tensor<4x5xf64>
  func.return
}

// -----

func.func @cast_to_unsigned(%x: tensor<4x4xf32>) {
  // expected-error@+1 {{'cortex.cast' op the result must have a float, signless integer or i1 element type, got tensor<4x4xui32>}}
  %w = cortex.cast %x : tensor<4x4xf32> -> tensor<4x4xui32>
  func.return
}

// -----

func.func @scalar_of_a_matrix(%x: tensor<4x4xf64>) {
  // expected-error@+1 {{'cortex.to_scalar' op the operand must be a rank-0 tensor, got tensor<4x4xf64>}}
  %s = cortex.to_scalar %x : tensor<4x4xf64> -> f32
  func.return
}
