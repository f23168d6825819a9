// cortex-unroll-pooling: a pooling generic with a small window becomes one
// strided tensor.extract_slice of x per window cell and an elementwise generic
// combining them with maximumf / addf; a window above max-window cells keeps
// its reduction loops.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-unroll-pooling | filecheck %s
// RUN: cortex-opt %s -p 'convert-cortex-to-linalg,cortex-unroll-pooling{max_window=4}' | filecheck %s --check-prefix=SMALL
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-unroll-pooling --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @max_pool
// CHECK:         %[[A:.*]] = tensor.extract_slice %x[0, 0, 0, 0] [1, 2, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    %[[B:.*]] = tensor.extract_slice %x[0, 0, 0, 1] [1, 2, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    %[[C:.*]] = tensor.extract_slice %x[0, 0, 1, 0] [1, 2, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    %[[D:.*]] = tensor.extract_slice %x[0, 0, 1, 1] [1, 2, 2, 2] [1, 1, 2, 2]
// CHECK:         %y = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[A]], %[[B]], %[[C]], %[[D]] :
// CHECK-NEXT:    ^{{.*}}(%[[A1:.*]]: f32, %[[B1:.*]]: f32, %[[C1:.*]]: f32, %[[D1:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M1:.*]] = arith.maximumf %[[A1]], %[[B1]] : f32
// CHECK-NEXT:      %[[M2:.*]] = arith.maximumf %[[M1]], %[[C1]] : f32
// CHECK-NEXT:      %[[M3:.*]] = arith.maximumf %[[M2]], %[[D1]] : f32
// CHECK-NEXT:      linalg.yield %[[M3]] : f32
// SMALL-LABEL: func.func @max_pool
// SMALL:         iterator_types = ["parallel", "parallel", "parallel", "parallel"]
func.func @max_pool(%x: tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x4x4xf32> -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// The 3x3 sum of avg_pool is unrolled too (9 reads, 8 addf); the count division follows.
// CHECK-LABEL: func.func @avg_pool
// CHECK-COUNT-9: tensor.extract_slice %x
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
// CHECK-COUNT-8:   arith.addf
// CHECK:         arith.divf
// SMALL-LABEL: func.func @avg_pool
// SMALL:         iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
func.func @avg_pool(%x: tensor<1x2x5x6xf32>) -> tensor<1x2x3x4xf32> {
  %y = cortex.avg_pool %x {kernel_shape = array<i64: 3, 3>} : tensor<1x2x5x6xf32> -> tensor<1x2x3x4xf32>
  func.return %y : tensor<1x2x3x4xf32>
}

// Dilated windows (ONNX pooling's dilations): the slices start i*dh, j*dw apart.
// CHECK-LABEL: func.func @dilated_max_pool
// CHECK:         tensor.extract_slice %x[0, 0, 0, 0] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 0, 3] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 2, 0] [1, 1, 2, 2] [1, 1, 2, 2]
// CHECK-NEXT:    tensor.extract_slice %x[0, 0, 2, 3] [1, 1, 2, 2] [1, 1, 2, 2]
func.func @dilated_max_pool(%x: tensor<1x1x5x6xf32>) -> tensor<1x1x2x2xf32> {
  %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 2, 3>} : tensor<1x1x5x6xf32> -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}
