// cortex.gaussian_blur (dialects/stencil.py) and the casts scene change's decomposition
// uses (cortex.cast, cortex.to_scalar): custom form round-trips, generic form parses,
// defaults print as omitted (verifier cases: stencil_invalid.mlir).
// RUN: cortex-opt %s --split-input-file | filecheck %s
// RUN: cortex-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: cortex-opt %s --split-input-file | cortex-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @one_blur
// CHECK:         %b = cortex.gaussian_blur %x : tensor<48x64xf64> -> tensor<48x64xf64>
// CHECK-NEXT:    %c = cortex.gaussian_blur %x {ksize = 5 : i64, sigma = 1.000000e+00 : f32} : tensor<48x64xf64> -> tensor<48x64xf64>
// GENERIC:       %b = "cortex.gaussian_blur"(%x) <{ksize = 11 : i64, sigma = 1.500000e+00 : f32}> : (tensor<48x64xf64>) -> tensor<48x64xf64>
func.func @one_blur(%x: tensor<48x64xf64>) -> (tensor<48x64xf64>, tensor<48x64xf64>) {
  %b = cortex.gaussian_blur %x : tensor<48x64xf64> -> tensor<48x64xf64>
  %c = cortex.gaussian_blur %x {ksize = 5 : i64, sigma = 1.0 : f32} : tensor<48x64xf64> -> tensor<48x64xf64>
  func.return %b, %c : tensor<48x64xf64>, tensor<48x64xf64>
}

// -----

// A stacked call: three images, three blurs, one OpenCV call.
// CHECK-LABEL: func.func @stacked
// CHECK:         %a, %b, %c = cortex.gaussian_blur %x, %y, %z : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
// GENERIC:       "cortex.gaussian_blur"(%x, %y, %z) <{ksize = 11 : i64, sigma = 1.500000e+00 : f32}> : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
func.func @stacked(%x: tensor<8x8xf32>, %y: tensor<8x8xf32>, %z: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a, %b, %c = cortex.gaussian_blur %x, %y, %z : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32> -> tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// CHECK-LABEL: func.func @casts
// CHECK:         %w = cortex.cast %x : tensor<4x4xf32> -> tensor<4x4xf64>
// CHECK-NEXT:    %m = cortex.reduce_mean %w {keepdims = 0 : i64} : tensor<4x4xf64> -> tensor<f64>
// CHECK-NEXT:    %s = cortex.to_scalar %m : tensor<f64> -> f32
// GENERIC:       "cortex.cast"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf64>
// GENERIC:       "cortex.to_scalar"(%m) : (tensor<f64>) -> f32
func.func @casts(%x: tensor<4x4xf32>) -> f32 {
  %w = cortex.cast %x : tensor<4x4xf32> -> tensor<4x4xf64>
  %m = cortex.reduce_mean %w {keepdims = 0 : i64} : tensor<4x4xf64> -> tensor<f64>
  %s = cortex.to_scalar %m : tensor<f64> -> f32
  func.return %s : f32
}
