// DCE respects state: xDSL's dce removes unused pure cortex ops, never a
// cortex.update_state (MemoryWriteEffect), at top level or inside scf.if.
// RUN: cortex-opt %s -p dce | filecheck %s

// CHECK-LABEL: func.func @state_kept(
// CHECK-NOT:     cortex.relu
// CHECK-NOT:     cortex.gray
// CHECK:         cortex.update_state "acc" = %{{.*}} : tensor<4xf32>
// CHECK:         scf.if
// CHECK-NOT:       cortex.exp
// CHECK:           cortex.update_state "flag" = %{{.*}} : tensor<4xf32>
// CHECK:         }
// CHECK-NOT:     cortex.state "unused"
// CHECK:         func.return
func.func @state_kept(%x: tensor<4xf32>, %f: tensor<32x32x3xui8>, %c: i1) -> tensor<4xf32> {
  %unused = cortex.relu %x : tensor<4xf32> -> tensor<4xf32>
  %g = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %s = cortex.state "unused" : tensor<4xf32>
  %n = cortex.neg %x : tensor<4xf32> -> tensor<4xf32>
  cortex.update_state "acc" = %n : tensor<4xf32>
  scf.if %c {
    %e = cortex.exp %x : tensor<4xf32> -> tensor<4xf32>
    %a = cortex.abs %x : tensor<4xf32> -> tensor<4xf32>
    cortex.update_state "flag" = %a : tensor<4xf32>
    scf.yield
  }
  func.return %x : tensor<4xf32>
}

// An scf.if whose only content is dead, and whose result is unused, goes entirely.
// CHECK-LABEL: func.func @dead_if(
// CHECK-NOT:     scf.if
// CHECK:         func.return
func.func @dead_if(%x: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %r = scf.if %c -> (tensor<4xf32>) {
    %e = cortex.exp %x : tensor<4xf32> -> tensor<4xf32>
    scf.yield %e : tensor<4xf32>
  } else {
    scf.yield %x : tensor<4xf32>
  }
  func.return %x : tensor<4xf32>
}
