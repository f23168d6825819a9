// convert-cortex-frame-boundary alone: state reads and runtime weights become
// the entry's trailing arguments ({cortex.state}/{cortex.weight}, in order of
// first use), the last update of each state a trailing result; every other op
// (here cortex.add, cortex.mul) is left for the other lowering passes.
// RUN: cortex-opt %s -p convert-cortex-frame-boundary | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-frame-boundary,convert-cortex-frame-boundary | filecheck %s

// CHECK:      func.func @f(%x: tensor<4xf32>, %prev: tensor<4xf32> {cortex.state = "acc"}, %w: f32 {cortex.weight = "gain"}) -> (tensor<4xf32>, tensor<4xf32> {cortex.state = "acc"})
// CHECK-NEXT:   %s = cortex.add %prev, %x
// CHECK-NEXT:   %t = cortex.mul %s, %s
// CHECK-NEXT:   func.return %t, %t : tensor<4xf32>, tensor<4xf32>
// CHECK-NOT:  cortex.state "
// CHECK-NOT:  cortex.weight "
// CHECK-NOT:  cortex.update_state
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %prev = cortex.state "acc" : tensor<4xf32>
  %w = cortex.weight "gain" : f32
  %s = cortex.add %prev, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  cortex.update_state "acc" = %s : tensor<4xf32>
  %t = cortex.mul %s, %s : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  cortex.update_state "acc" = %t : tensor<4xf32>
  func.return %t : tensor<4xf32>
}
