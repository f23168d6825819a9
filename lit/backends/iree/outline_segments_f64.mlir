// cortex-outline-segments keeps on the host a run holding an f64 math op IREE's CPU backend cannot compile
// (f64 math.tanh links to a libm `tanh` IREE lacks; math.erf does not legalise): the same ops on f32, and f64
// exp/log/sqrt/floor..., are outlined.
// RUN: cortex-opt %s -p "convert-cortex-to-linalg,cortex-outline-segments{min-intensity=0 min-work=0}" | filecheck %s

// CHECK-LABEL: func.func @f(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>, tensor<4xf64>) {
// CHECK-NEXT:    %t32 = func.call @f__seg0(%x) {cortex.origin = "t32"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %[[E:.*]] = tensor.empty() : tensor<4xf64>
// CHECK-NEXT:    %t64 = linalg.generic
// CHECK:           math.tanh %{{.*}} : f64
// CHECK:         %e64 = func.call @f__seg1(%y) {cortex.origin = "e64"} : (tensor<4xf64>) -> tensor<4xf64>
// CHECK:       func.func private @f__seg0
// CHECK:         math.tanh %{{.*}} : f32
// CHECK:       func.func private @f__seg1
// CHECK:         math.exp %{{.*}} : f64
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xf64>, tensor<4xf64>) {
  %t32 = cortex.tanh %x : tensor<4xf32> -> tensor<4xf32>
  %t64 = cortex.tanh %y : tensor<4xf64> -> tensor<4xf64>
  %e64 = cortex.exp %y : tensor<4xf64> -> tensor<4xf64>
  func.return %t32, %t64, %e64 : tensor<4xf32>, tensor<4xf64>, tensor<4xf64>
}
