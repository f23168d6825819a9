// Whole-module rules (dialects/structure.py): dominance, region yields,
// one type per state name, and finite/positive properties and image sides.
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @use_before_definition(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'cortex.add' op operand #1 (%b) is used before it is defined}}
  %a = cortex.add %x, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = cortex.add %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

func.func @value_of_another_region(%c: i1, %x: f32) -> f32 {
  scf.if %c {
    %inner = arith.addf %x, %x : f32
    scf.yield
  }
  // The parser scopes names by region (the verifier checks IR built in Python).
  // expected-error@+1 {{use of undeclared SSA value name '%inner'}}
  %r = arith.mulf %inner, %x : f32
  func.return %r : f32
}

// -----

func.func @else_yields_nothing(%c: i1, %x: f32) -> f32 {
  %r = scf.if %c -> (f32) {
    scf.yield %x : f32
  } else {
    // expected-error@+1 {{'scf.yield' op yields nothing, but the parent 'scf.if' expects (f32)}}
    scf.yield
  }
  func.return %r : f32
}

// -----

func.func @if_without_else_has_results(%c: i1, %x: f32) -> f32 {
  // expected-error@+1 {{'scf.if' op has results but no else region: both branches must yield (f32)}}
  %r = scf.if %c -> (f32) {
    scf.yield %x : f32
  }
  func.return %r : f32
}

// -----

func.func @then_yields_wrong_type(%c: i1, %x: f32, %i: i32) -> f32 {
  %r = scf.if %c -> (f32) {
    // expected-error@+1 {{'scf.yield' op yields (i32), but the parent 'scf.if' expects (f32)}}
    scf.yield %i : i32
  } else {
    scf.yield %x : f32
  }
  func.return %r : f32
}

// -----

#id = affine_map<(d0) -> (d0)>
func.func @generic_yields_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    // expected-error@+1 {{'linalg.yield' op yields (f32, f32), but the parent 'linalg.generic' expects (f32)}}
    linalg.yield %a, %a : f32, f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// -----

func.func @two_updates_two_types(%x: tensor<4xf32>, %y: f32) {
  cortex.update_state "s" = %x : tensor<4xf32>
  // expected-error@+1 {{'cortex.update_state' op state 's' has type f32 here but is updated as tensor<4xf32> earlier in @two_updates_two_types}}
  cortex.update_state "s" = %y : f32
  func.return
}

// -----

func.func @state_name_not_ascii(%x: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.update_state' op the 'name' property must be printable ASCII without quotes or backslashes}}
  cortex.update_state "sé" = %x : tensor<4xf32>
  func.return
}

// -----

func.func @threshold_nan(%frame: tensor<64x64x3xui8>, %score: tensor<2x2xf32>) -> tensor<?xui8> {
  // expected-error@+1 {{'cortex.encoder' op property 'threshold' must be a finite number, got nan}}
  %e = cortex.encoder %frame, %score {threshold = 0x7FC00000 : f32} : (tensor<64x64x3xui8>, tensor<2x2xf32>) -> tensor<?xui8>
  func.return %e : tensor<?xui8>
}

// -----

func.func @sigma_inf(%g: tensor<64x64xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'cortex.center_crop' op property 'sigma' must be a finite number, got inf}}
  %c = cortex.center_crop %g {sigma = 0x7F800000 : f32} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}

// -----

func.func @frame_zero_rows(%frame: tensor<0x64x3xui8>) -> tensor<0x64xf32> {
  // expected-error@+1 {{'cortex.gray' op image H=0 must be positive}}
  %g = cortex.gray %frame : tensor<0x64x3xui8> -> tensor<0x64xf32>
  func.return %g : tensor<0x64xf32>
}

// -----

func.func @frame_too_wide(%frame: tensor<32x65536x3xui8>) -> tensor<32x65536xf32> {
  // expected-error@+1 {{'cortex.gray' op image W=65536 exceeds the largest supported side, 8192}}
  %g = cortex.gray %frame : tensor<32x65536x3xui8> -> tensor<32x65536xf32>
  func.return %g : tensor<32x65536xf32>
}
