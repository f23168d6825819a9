// xDSL's cse on cortex IR: identical pure ops merge (same operands, same
// properties); state writes never do (MemoryWriteEffect).
// RUN: cortex-opt %s -p cse | filecheck %s

// CHECK-LABEL: func.func @merge(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>, %[[F:.*]]: tensor<32x32x3xui8>)
// CHECK:         %[[R:.*]] = cortex.relu %[[X]]
// CHECK-NOT:     cortex.relu
// CHECK:         %[[G:.*]] = cortex.gray %[[F]]
// CHECK-NOT:     cortex.gray
// CHECK:         %[[S:.*]] = cortex.add %[[R]], %[[R]]
// CHECK:         %[[M1:.*]] = cortex.motion_map %[[G]], %[[G]] {block = 8 : i64}
// CHECK:         %[[M2:.*]] = cortex.motion_map %[[G]], %[[G]] {block = 16 : i64}
// CHECK:         cortex.update_state "s" = %[[S]]
// CHECK-NEXT:    cortex.update_state "s" = %[[S]]
// CHECK-NEXT:    func.return %[[S]], %[[G]], %[[M1]], %[[M2]]
func.func @merge(%x: tensor<4xf32>, %f: tensor<32x32x3xui8>) -> (tensor<4xf32>, tensor<32x32xf32>, tensor<4x4xf32>, tensor<2x2xf32>) {
  %r1 = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %r2 = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %g1 = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %g2 = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %s = cortex.add %r1, %r2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  // Different properties: not the same computation.
  %m1 = cortex.motion_map %g1, %g2 {block = 8 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<4x4xf32>
  %m2 = cortex.motion_map %g1, %g2 {block = 16 : i64} : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<2x2xf32>
  cortex.update_state "s" = %s : tensor<4xf32>
  cortex.update_state "s" = %s : tensor<4xf32>
  func.return %s, %g2, %m1, %m2 : tensor<4xf32>, tensor<32x32xf32>, tensor<4x4xf32>, tensor<2x2xf32>
}
