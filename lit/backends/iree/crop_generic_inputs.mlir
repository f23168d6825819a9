// cortex-crop-generic-inputs: a ceil-mode pool pads its 2x2 input to 4x4 but its one 3x3 window
// (stride 3) reads rows and columns 0..2 only; MLIR's verifier (and IREE's) rejects the longer input.
// The pass cuts it to the extent read with a leading tensor.extract_slice; a generic whose inputs are
// read to the end is left alone.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-crop-generic-inputs | filecheck %s
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-crop-generic-inputs --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @ceil_pool
// CHECK:         %[[P:.*]] = tensor.insert_slice %x into %{{.*}}[0, 0, 1, 1] [1, 3, 2, 2] [1, 1, 1, 1]
// CHECK:         %[[C:.*]] = tensor.extract_slice %[[P]][0, 0, 0, 0] [1, 3, 3, 3] [1, 1, 1, 1] {cortex.origin = "y"} : tensor<1x3x4x4xf32> to tensor<1x3x3x3xf32>
// CHECK:         linalg.generic {{.*}} ins(%[[C]], %{{.*}} : tensor<1x3x3x3xf32>, tensor<3x3xf32>)
func.func @ceil_pool(%x: tensor<1x3x2x2xf32>) -> tensor<1x3x1x1xf32> {
  %y = cortex.avg_pool %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x3x2x2xf32> -> tensor<1x3x1x1xf32>
  func.return %y : tensor<1x3x1x1xf32>
}

// CHECK-LABEL: func.func @exact_pool
// CHECK-NOT:     tensor.extract_slice
func.func @exact_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}
