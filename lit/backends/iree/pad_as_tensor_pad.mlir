// cortex-pad-as-tensor-pad: a constant pad (linalg.fill of a fresh tensor, then tensor.insert_slice of the
// data at static offsets, unit strides) becomes one tensor.pad yielding the fill value; the fill and the
// empty tensor go. IREE 3.13's CPU codegen rejects the first form feeding an NCHW convolution
// ("slice along dimension 3 runs out-of-bounds"); the IREE backend runs this pass before handing over.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-pad-as-tensor-pad | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s --check-prefix=BEFORE
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-pad-as-tensor-pad --print-op-generic | %mlir-opt > /dev/null %}

// BEFORE-LABEL: func.func @conv
// BEFORE:         linalg.fill
// BEFORE:         tensor.insert_slice %x into %{{.*}}[0, 0, 1, 0] [2, 3, 7, 8] [1, 1, 1, 1]
// CHECK-LABEL: func.func @conv
// CHECK-NOT:     tensor.insert_slice
// CHECK:         %[[ZERO:.*]] = arith.constant {cortex.origin = "y"} 0.000000e+00 : f32
// CHECK-NOT:     linalg.fill
// CHECK:         %[[P:.*]] = tensor.pad %x low[0, 0, 1, 0] high[0, 0, 1, 2] {
// CHECK-NEXT:    ^{{.*}}(%{{.*}}: index, %{{.*}}: index, %{{.*}}: index, %{{.*}}: index):
// CHECK-NEXT:      tensor.yield %[[ZERO]] : f32
// CHECK-NEXT:    } {cortex.origin = "y"} : tensor<2x3x7x8xf32> to tensor<2x3x9x10xf32>
// CHECK:         linalg.conv_2d_nchw_fchw {{.*}} ins(%[[P]], %w :
func.func @conv(%x: tensor<2x3x7x8xf32>, %w: tensor<4x3x3x2xf32>, %b: tensor<4xf32>) -> tensor<2x4x4x5xf32> {
  %y = cortex.conv2d %x, %w, %b {pads = array<i64: 1, 0, 1, 2>, strides = array<i64: 2, 2>} : (tensor<2x3x7x8xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x5xf32>
  func.return %y : tensor<2x4x4x5xf32>
}

// A strided insert is not a pad: left alone.
// CHECK-LABEL: func.func @strided
// CHECK:         linalg.fill
// CHECK:         tensor.insert_slice %a into %{{.*}}[0, 0] [2, 2] [1, 2]
// CHECK-NOT:     tensor.pad
func.func @strided(%a: tensor<2x2xf32>) -> tensor<2x4xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %r = tensor.insert_slice %a into %f[0, 0] [2, 2] [1, 2] : tensor<2x2xf32> into tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
