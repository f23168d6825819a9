// The state and weight ops round-trip in the custom and the generic form.
// RUN: cortex-opt %s > %t.custom
// RUN: filecheck %s --input-file %t.custom
// RUN: cortex-opt %t.custom | diff %t.custom -
// RUN: cortex-opt %s --print-op-generic > %t.generic
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic
// RUN: cortex-opt %t.generic | diff %t.custom -

func.func @state(%x: tensor<2x3xf32>) -> f32 {
  %prev = cortex.state "prev_x" : tensor<2x3xf32>
  %count = cortex.state "count" : f32
  %w = cortex.weight "wc" : f32
  cortex.update_state "prev_x" = %x : tensor<2x3xf32>
  cortex.update_state "count" = %w : f32
  func.return %count : f32
}

// CHECK-LABEL: func.func @state
// CHECK-NEXT:    %prev = cortex.state "prev_x" : tensor<2x3xf32>
// CHECK-NEXT:    %count = cortex.state "count" : f32
// CHECK-NEXT:    %w = cortex.weight "wc" : f32
// CHECK-NEXT:    cortex.update_state "prev_x" = %x : tensor<2x3xf32>
// CHECK-NEXT:    cortex.update_state "count" = %w : f32
// CHECK-NEXT:    func.return %count : f32

// GENERIC:      %prev = "cortex.state"() <{name = "prev_x"}> : () -> tensor<2x3xf32>
// GENERIC-NEXT: %count = "cortex.state"() <{name = "count"}> : () -> f32
// GENERIC-NEXT: %w = "cortex.weight"() <{name = "wc"}> : () -> f32
// GENERIC-NEXT: "cortex.update_state"(%x) <{name = "prev_x"}> : (tensor<2x3xf32>) -> ()
// GENERIC-NEXT: "cortex.update_state"(%w) <{name = "count"}> : (f32) -> ()
