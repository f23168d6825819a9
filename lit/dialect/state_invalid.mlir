// One case per verifier rule of the state and weight ops (dialects/state.py).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @state_name_empty() {
  // expected-error@+1 {{'cortex.state' op the 'name' property must not be empty}}
  %s = cortex.state "" : tensor<2x2xf32>
  func.return
}

// -----

func.func @update_state_name_empty(%x: f32) {
  // expected-error@+1 {{'cortex.update_state' op the 'name' property must not be empty}}
  cortex.update_state "" = %x : f32
  func.return
}

// -----

func.func @weight_name_empty() {
  // expected-error@+1 {{'cortex.weight' op the 'name' property must not be empty}}
  %w = cortex.weight "" : f32
  func.return
}

// -----

func.func @update_state_type_differs_from_read(%x: tensor<2x3xf32>) {
  %prev = cortex.state "prev" : tensor<2x2xf32>
  // expected-error@+1 {{'cortex.update_state' op state 'prev' is read as tensor<2x2xf32> but updated with tensor<2x3xf32>}}
  cortex.update_state "prev" = %x : tensor<2x3xf32>
  func.return
}

// -----

// The read may come after the update, and sit in a nested region.
func.func @update_state_type_differs_from_nested_read(%x: f32, %c: i1) {
  // expected-error@+1 {{state 'count' is read as tensor<1xf32> but updated with f32}}
  cortex.update_state "count" = %x : f32
  %r = scf.if %c -> (tensor<1xf32>) {
    %s = cortex.state "count" : tensor<1xf32>
    scf.yield %s : tensor<1xf32>
  } else {
    %z = cortex.constant dense<0.0> : tensor<1xf32>
    scf.yield %z : tensor<1xf32>
  }
  func.return
}

// -----

func.func @state_type_not_a_value() {
  // expected-error@+1 {{'cortex.state' op result 'result' at position 0 does not verify}}
  %s = "cortex.state"() <{name = "n"}> : () -> i32
  func.return
}

// -----

func.func @update_state_value_not_a_value(%x: i32) {
  // expected-error@+1 {{'cortex.update_state' op operand 'value' at position 0 does not verify}}
  "cortex.update_state"(%x) <{name = "n"}> : (i32) -> ()
  func.return
}

// -----

func.func @weight_not_f32() {
  // expected-error@+1 {{'cortex.weight' op result 'result' at position 0 does not verify}}
  %w = "cortex.weight"() <{name = "wc"}> : () -> f64
  func.return
}

// -----

func.func @state_name_missing() {
  // expected-error@+1 {{'cortex.state' op property 'name' expected}}
  %s = "cortex.state"() : () -> f32
  func.return
}
