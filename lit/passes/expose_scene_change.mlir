// cortex-expose-scene-change: the entry also returns its scene-change measure (what cortex-run's report
// plots), lifted out of the blur gate's scf.if (NaN on the gated side); a function without exactly one
// scene change is left as it is.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p cortex-expose-scene-change | filecheck %s
// RUN: cortex-opt %s -p cortex-expose-scene-change | filecheck %s --check-prefix=NONE

// CHECK:      func.func @l2_frame(%frame: tensor<?x?x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>, f32) {
// CHECK:        %score, %[[SCENE:.*]] = scf.if %blurred -> (tensor<?x?xf32>, f32) {
// CHECK-NEXT:     %[[NAN:.*]] = arith.constant 0x7fc00000 : f32
// CHECK-NEXT:     scf.yield %prev_score, %[[NAN]] : tensor<?x?xf32>, f32
// CHECK:          %scene = cortex.scene_change %gray, %prev_gray
// CHECK:          scf.yield %smoothed, %scene : tensor<?x?xf32>, f32
// CHECK:        func.return %encoded, %score, %[[SCENE]] : tensor<?xui8>, tensor<?x?xf32>, f32

// NONE:      func.func @l2_frame(%f: tensor<32x32x3xui8>) -> tensor<1x1xf32> {
// NONE:        func.return %c : tensor<1x1xf32>
func.func @l2_frame(%f: tensor<32x32x3xui8>) -> tensor<1x1xf32> {
  %g = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %c = cortex.center_crop %g : tensor<32x32xf32> -> tensor<1x1xf32>
  func.return %c : tensor<1x1xf32>
}
