// cortex-expose-blur-gate: the entry also returns its blur gate's sharpness, condition and threshold
// (what cortex-run logs per frame), after its own results; a pipeline without a gate is left as it is.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p cortex-expose-blur-gate | filecheck %s
// RUN: cortex-opt %s -p cortex-expose-blur-gate | filecheck %s --check-prefix=NOGATE

// CHECK:      func.func @l2_frame(%frame: tensor<?x?x3xui8>) -> (tensor<?xui8>, tensor<?x?xf32>, f32, i1, f32) {
// CHECK:        %sharpness = cortex.blur_detector %gray
// CHECK:        %blurred = arith.cmpf olt, %sharpness, %threshold : f32
// CHECK:        func.return %encoded, %score, %sharpness, %blurred, %threshold : tensor<?xui8>, tensor<?x?xf32>, f32, i1, f32

// NOGATE:      func.func @l2_frame(%f: tensor<32x32x3xui8>) -> tensor<1x1xf32> {
// NOGATE:        func.return %c : tensor<1x1xf32>
func.func @l2_frame(%f: tensor<32x32x3xui8>) -> tensor<1x1xf32> {
  %g = cortex.gray %f : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %c = cortex.center_crop %g : tensor<32x32xf32> -> tensor<1x1xf32>
  func.return %c : tensor<1x1xf32>
}
