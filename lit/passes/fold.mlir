// Constant folding: any cortex op whose operands are all constants is
// evaluated by its reference kernel and becomes a cortex.constant (or an
// arith.constant for f32 scalars). center_crop folds from its operand's shape.
// RUN: cortex-opt %s -p canonicalize | filecheck %s
// RUN: cortex-opt %s -p cortex-canonicalize | filecheck %s

// CHECK-LABEL: func.func @tensor_ops()
// CHECK-NEXT:    %[[S:.*]] = cortex.constant dense<[4.000000e+00, 6.000000e+00]> : tensor<2xf32>
// CHECK-NEXT:    %[[P:.*]] = cortex.constant dense<{{\[\[}}7.000000e+00, 1.000000e+01], [1.500000e+01, 2.200000e+01]]> : tensor<2x2xf32>
// CHECK-NEXT:    %[[Q:.*]] = cortex.constant dense<0.000000e+00> : tensor<2xf32>
// CHECK-NEXT:    func.return %[[S]], %[[P]], %[[Q]]
func.func @tensor_ops() -> (tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>) {
  %a = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %b = cortex.constant dense<[3.0, 4.0]> : tensor<2xf32>
  %m = cortex.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %s = cortex.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %p = "cortex.matmul"(%m, %m) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = cortex.neg %s : tensor<2xf32> -> tensor<2xf32>
  %q = cortex.relu %r : tensor<2xf32> -> tensor<2xf32>
  func.return %s, %p, %q : tensor<2xf32>, tensor<2x2xf32>, tensor<2xf32>
}

// The centre prior depends on the shape alone: exp(-(0.25² + 0.25²) / (2·0.3²)) in every cell.
// CHECK-LABEL: func.func @center(
// CHECK-NEXT:    %[[C:.*]] = cortex.constant dense<0.49935{{[0-9]*}}> : tensor<2x2xf32>
// CHECK-NEXT:    func.return %[[C]]
func.func @center(%gray: tensor<64x64xf32>) -> tensor<2x2xf32> {
  %c = cortex.center_crop %gray : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return %c : tensor<2x2xf32>
}

// Vision stages fold too (f32 weights and scene from arith.constant), but an
// external (OpenCV) op never does, even on constants.
// fused = 0.5·[1, 0.5] + 0.25·[0, 1]; smooth = 0.6·prev + 0.4·fused (scene below the reset threshold).
// CHECK-LABEL: func.func @vision()
// CHECK-DAG:     %[[G:.*]] = cortex.constant dense<2.000000e+02> : tensor<32x64xf32>
// CHECK-DAG:     %[[F:.*]] = cortex.constant dense<5.000000e-01> : tensor<1x2xf32>
// CHECK-DAG:     %[[T:.*]] = cortex.constant dense<{{\[\[}}0.19999{{[0-9]*}}, 8.000000e-01]]> : tensor<1x2xf32>
// CHECK:         %[[B:.*]] = cortex.blur_detector %[[G]]
// CHECK:         func.return %[[F]], %[[T]], %[[B]], %[[G]]
func.func @vision() -> (tensor<1x2xf32>, tensor<1x2xf32>, f32, tensor<32x64xf32>) {
  %f = cortex.constant dense<200> : tensor<32x64x3xui8>
  %g = cortex.gray %f : tensor<32x64x3xui8> -> tensor<32x64xf32>
  %m1 = cortex.constant dense<[[1.0, 0.5]]> : tensor<1x2xf32>
  %m2 = cortex.constant dense<[[0.0, 1.0]]> : tensor<1x2xf32>
  %w1 = arith.constant 0.5 : f32
  %w2 = arith.constant 0.25 : f32
  %fused = cortex.score_fusion(%m1, %m2) weights(%w1, %w2) {terms = ["a", "b"]} : tensor<1x2xf32>, tensor<1x2xf32> -> tensor<1x2xf32>
  %scene = arith.constant 0.0 : f32
  %smooth = cortex.temporal_smooth %fused, %m2, %scene : (tensor<1x2xf32>, tensor<1x2xf32>, f32) -> tensor<1x2xf32>
  %sharp = cortex.blur_detector %g : tensor<32x64xf32> -> f32
  func.return %fused, %smooth, %sharp, %g : tensor<1x2xf32>, tensor<1x2xf32>, f32, tensor<32x64xf32>
}

// What does not fold: state (a value from the previous frame, not a constant),
// a state write, a result with a dynamic dimension, a result over the
// 1 Mi-element limit, and an op with a non-constant operand.
// CHECK-LABEL: func.func @no_fold(
// CHECK:         cortex.state "s"
// CHECK:         cortex.add {{.*}} -> tensor<?xf32>
// CHECK:         cortex.add {{.*}} -> tensor<1025x1024xf32>
// CHECK:         cortex.center_crop {{.*}} : tensor<?x64xf32> -> tensor<?x2xf32>
// CHECK:         cortex.mul
// CHECK:         cortex.update_state "s"
func.func @no_fold(%x: tensor<2xf32>, %dyn: tensor<?x64xf32>) -> (tensor<2xf32>, tensor<?xf32>, tensor<1025x1024xf32>, tensor<?x2xf32>, tensor<2xf32>) {
  %s = cortex.state "s" : tensor<2xf32>
  %a = cortex.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %d = cortex.add %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<?xf32>
  %big = cortex.constant dense<1.0> : tensor<1025x1024xf32>
  %e = cortex.add %big, %big : (tensor<1025x1024xf32>, tensor<1025x1024xf32>) -> tensor<1025x1024xf32>
  %c = cortex.center_crop %dyn : tensor<?x64xf32> -> tensor<?x2xf32>
  %m = cortex.mul %x, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  cortex.update_state "s" = %a : tensor<2xf32>
  func.return %s, %d, %e, %c, %m : tensor<2xf32>, tensor<?xf32>, tensor<1025x1024xf32>, tensor<?x2xf32>, tensor<2xf32>
}
