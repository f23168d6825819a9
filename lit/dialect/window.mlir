// The window ops (dialects/window.py): custom form round-trips, generic form
// parses (verifier cases: window_invalid.mlir).
// RUN: cortex-opt %s --split-input-file | filecheck %s
// RUN: cortex-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: cortex-opt %s --split-input-file | cortex-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @gate
// CHECK:         %m = cortex.window_median %w : tensor<25xf32>
// CHECK-NEXT:    %p = cortex.window_push %w, %x : tensor<25xf32>
// GENERIC:       %m = "cortex.window_median"(%w) : (tensor<25xf32>) -> f32
// GENERIC-NEXT:  %p = "cortex.window_push"(%w, %x) : (tensor<25xf32>, f32) -> tensor<25xf32>
func.func @gate(%w: tensor<25xf32>, %x: f32) -> (f32, tensor<25xf32>) {
  %m = cortex.window_median %w : tensor<25xf32>
  %p = cortex.window_push %w, %x : tensor<25xf32>
  func.return %m, %p : f32, tensor<25xf32>
}
