// Conversions that cancel: quantize(dequantize(q)) with equal parameters is q;
// with other parameters one requantize; requantize pairs fold into one; a
// requantize to its own parameters disappears. dequantize(quantize(x)) is not
// x (it rounds) and stays.
// RUN: cortex-opt %s -p canonicalize | filecheck %s

// CHECK-LABEL: func.func @same_params_cancel(
// CHECK-SAME:      %[[Q:.*]]: tensor<4xi8>
// CHECK-NEXT:    func.return %[[Q]]
func.func @same_params_cancel(%q: tensor<4xi8>) -> tensor<4xi8> {
  %d = cortex.dequantize %q {scale = 0.5 : f32, zero_point = 2 : i64} : tensor<4xi8> -> tensor<4xf32>
  %r = cortex.quantize %d {scale = 0.5 : f32, zero_point = 2 : i64} : tensor<4xf32> -> tensor<4xi8>
  func.return %r : tensor<4xi8>
}

// CHECK-LABEL: func.func @other_params_requantize(
// CHECK-SAME:      %[[Q:.*]]: tensor<4xi8>
// CHECK-NEXT:    %[[R:.*]] = cortex.requantize %[[Q]] {in_scale = 5.000000e-01 : f32, in_zero_point = 2 : i64, scale = 2.500000e-01 : f32, zero_point = -1 : i64}
// CHECK-NEXT:    func.return %[[R]]
func.func @other_params_requantize(%q: tensor<4xi8>) -> tensor<4xi8> {
  %d = cortex.dequantize %q {scale = 0.5 : f32, zero_point = 2 : i64} : tensor<4xi8> -> tensor<4xf32>
  %r = cortex.quantize %d {scale = 0.25 : f32, zero_point = -1 : i64} : tensor<4xf32> -> tensor<4xi8>
  func.return %r : tensor<4xi8>
}

// CHECK-LABEL: func.func @requantize_chain(
// CHECK-SAME:      %[[Q:.*]]: tensor<4xi8>
// CHECK-NEXT:    %[[R:.*]] = cortex.requantize %[[Q]] {in_scale = 5.000000e-01 : f32, scale = 2.000000e+00 : f32}
// CHECK-NEXT:    func.return %[[R]]
func.func @requantize_chain(%q: tensor<4xi8>) -> tensor<4xi8> {
  %a = cortex.requantize %q {in_scale = 0.5 : f32, scale = 1.0 : f32} : tensor<4xi8> -> tensor<4xi8>
  %b = cortex.requantize %a {in_scale = 1.0 : f32, scale = 2.0 : f32} : tensor<4xi8> -> tensor<4xi8>
  func.return %b : tensor<4xi8>
}

// CHECK-LABEL: func.func @requantize_to_same(
// CHECK-SAME:      %[[Q:.*]]: tensor<4xi8>
// CHECK-NEXT:    func.return %[[Q]]
func.func @requantize_to_same(%q: tensor<4xi8>) -> tensor<4xi8> {
  %a = cortex.requantize %q {in_scale = 0.5 : f32, in_zero_point = 1 : i64, scale = 0.5 : f32, zero_point = 1 : i64} : tensor<4xi8> -> tensor<4xi8>
  func.return %a : tensor<4xi8>
}

// CHECK-LABEL: func.func @round_trip_through_i8_stays(
// CHECK:         cortex.quantize
// CHECK:         cortex.dequantize
func.func @round_trip_through_i8_stays(%x: tensor<4xf32>) -> tensor<4xf32> {
  %q = cortex.quantize %x {scale = 0.5 : f32} : tensor<4xf32> -> tensor<4xi8>
  %d = cortex.dequantize %q {scale = 0.5 : f32} : tensor<4xi8> -> tensor<4xf32>
  func.return %d : tensor<4xf32>
}

// Weights are folded at compile time: quantize of a constant is an i8 constant.
// CHECK-LABEL: func.func @constant_weights_fold(
// CHECK-NEXT:    %[[C:.*]] = cortex.constant dense<[2, -4, 127, -128]> : tensor<4xi8>
// CHECK-NEXT:    func.return %[[C]]
func.func @constant_weights_fold() -> tensor<4xi8> {
  %c = cortex.constant dense<[1.0, -2.0, 100.0, -100.0]> : tensor<4xf32>
  %q = cortex.quantize %c {scale = 0.5 : f32} : tensor<4xf32> -> tensor<4xi8>
  func.return %q : tensor<4xi8>
}
