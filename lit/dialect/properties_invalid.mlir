// Properties a cortex op does not define, or of the wrong kind, are refused
// at their op, for every cortex op alike (dialects/base.py: attribute_problem);
// a dialect-prefixed attribute (`foo.bar`) is discardable and stays allowed.
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @misspelt_property(%frame: tensor<64x96x3xui8>, %s: tensor<4x6xf32>) -> tensor<?xui8> {
  // expected-error@+1 {{'cortex.encoder' op unknown property 'qualty' (defined: 'block', 'crop', 'quality', 'threshold'); did you mean 'quality'?}}
  %b = cortex.encoder %frame, %s {qualty = 20 : i64} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  func.return %b : tensor<?xui8>
}

// -----

func.func @plural_block(%gray: tensor<64x96xf32>, %prev: tensor<64x96xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'cortex.motion_map' op unknown property 'blocks' (defined: 'block'); did you mean 'block'?}}
  %m = cortex.motion_map %gray, %prev {blocks = 16} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
  func.return %m : tensor<4x6xf32>
}

// -----

func.func @misspelt_generic(%frame: tensor<64x96x3xui8>, %s: tensor<4x6xf32>) -> tensor<?xui8> {
  // expected-error@+1 {{'cortex.encoder' op unknown property 'qualty'}}
  %b = "cortex.encoder"(%frame, %s) <{block = 16 : i64, qualty = 3 : i64}> : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  func.return %b : tensor<?xui8>
}

// -----

func.func @nothing_close(%gray: tensor<64x96xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'cortex.saliency_dft' op unknown property 'zzz' (defined: 'block', 'scale')}}
  %s = cortex.saliency_dft %gray {block = 16 : i64, zzz = 4 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  func.return %s : tensor<4x6xf32>
}

// -----

func.func @integer_for_a_float(%frame: tensor<64x96x3xui8>, %s: tensor<4x6xf32>) -> tensor<?xui8> {
  // expected-error@+1 {{'cortex.encoder' op property 'threshold' must be an f32 float, e.g. `0.5 : f32`; got `1 : i64`}}
  %b = cortex.encoder %frame, %s {threshold = 1} : (tensor<64x96x3xui8>, tensor<4x6xf32>) -> tensor<?xui8>
  func.return %b : tensor<?xui8>
}

// -----

func.func @float_for_an_integer(%gray: tensor<64x96xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'cortex.center_crop' op property 'block' must be an i64 integer, e.g. `16 : i64`; got `1.600000e+01 : f64`}}
  %c = cortex.center_crop %gray {block = 16.0} : tensor<64x96xf32> -> tensor<4x6xf32>
  func.return %c : tensor<4x6xf32>
}
