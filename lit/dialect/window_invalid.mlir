// RUN: cortex-opt %s --split-input-file --verify-diagnostics
// One case per verifier rule of the window ops (dialects/window.py).

func.func @median_of_a_matrix(%w: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.window_median' op the window must be a tensor<Nxf32>, got tensor<2x3xf32>}}
  %m = "cortex.window_median"(%w) : (tensor<2x3xf32>) -> f32
  func.return
}

// -----

func.func @median_of_a_dynamic_window(%w: tensor<?xf32>) {
  // expected-error@+1 {{'cortex.window_median' op the window must have a static length >= 1, got tensor<?xf32>}}
  %m = cortex.window_median %w : tensor<?xf32>
  func.return
}

// -----

func.func @push_into_an_empty_window(%w: tensor<0xf32>, %x: f32) {
  // expected-error@+1 {{'cortex.window_push' op the window must have a static length >= 1, got tensor<0xf32>}}
  %p = cortex.window_push %w, %x : tensor<0xf32>
  func.return
}

// -----

func.func @push_changes_the_type(%w: tensor<4xf32>, %x: f32) {
  // expected-error@+1 {{'cortex.window_push' op}}
  %p = "cortex.window_push"(%w, %x) : (tensor<4xf32>, f32) -> tensor<5xf32>
  func.return
}

// -----

func.func @push_of_integers(%w: tensor<4xi32>, %x: f32) {
  // expected-error@+1 {{'cortex.window_push' op the window must be a tensor<Nxf32>, got tensor<4xi32>}}
  %p = cortex.window_push %w, %x : tensor<4xi32>
  func.return
}
