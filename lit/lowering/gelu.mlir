// gelu lowers without the cancelling 1 + erf / 1 + tanh, so its negative tail keeps its digits (-6 → -5.9e-9):
// the exact form is x·Φ(x) with Φ(-|x|) = erfc(|x|/√2)/2 from a rational fit times exp(-h²/2)·exp(...)
// (h = ⌊64|x|⌋/64, so h² is exact), selected for x < 0, and x·(1 - Φ(-|x|)) otherwise; no math.erf (IREE has
// no f64 erf). The tanh form is x·σ(2u) with e = exp(-2|u|): x/(1 + e) for u ≥ 0, x·e/(1 + e) scaled by
// exp(16) and exp(-16) for u < 0 (no intermediate subnormal where the result is normal).
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @gelu
// CHECK:         %exact = linalg.generic
// CHECK:         ^bb0(%[[X:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[AX:.*]] = math.absf %[[X]] : f32
// CHECK-NEXT:      %[[LIMIT:.*]] = arith.constant 1.600000e+01 : f32
// CHECK-NEXT:      %[[A:.*]] = arith.minimumf %[[AX]], %[[LIMIT]] : f32
// CHECK:           arith.constant 0.353553385 : f32
// CHECK:           arith.constant 0.170872763 : f32
// CHECK:           arith.constant 6.400000e+01 : f32
// CHECK-NEXT:      %[[S:.*]] = arith.mulf %[[A]], %{{.*}} : f32
// CHECK-NEXT:      %[[FL:.*]] = math.floor %[[S]] : f32
// CHECK:           %[[H:.*]] = arith.mulf %[[FL]], %{{.*}} : f32
// CHECK-NEXT:      %[[H2:.*]] = arith.mulf %[[H]], %[[H]] : f32
// CHECK:           %[[BIG:.*]] = math.exp %{{.*}} : f32
// CHECK:           arith.constant -1.26551223 : f32
// CHECK:           math.exp
// CHECK-NEXT:      %[[F:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      %[[XF:.*]] = arith.mulf %[[X]], %[[F]] : f32
// CHECK-NEXT:      %[[NEG:.*]] = arith.mulf %[[XF]], %[[BIG]] : f32
// CHECK:           %[[POS:.*]] = arith.mulf %[[X]], %{{.*}} : f32
// CHECK:           %[[LT:.*]] = arith.cmpf olt, %[[X]], %{{.*}} : f32
// CHECK-NEXT:      %[[R:.*]] = arith.select %[[LT]], %[[NEG]], %[[POS]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK:         %approx = linalg.generic
// CHECK:           arith.constant 0.797884583 : f32
// CHECK:           arith.constant 4.471500e-02 : f32
// CHECK-NEXT:      arith.mulf
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      %[[U:.*]] = arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NEXT:      math.absf %[[U]] : f32
// CHECK:           math.exp
// CHECK:           arith.constant 1.600000e+01 : f32
// CHECK:           math.exp
// CHECK:           arith.constant 1.12535176e-07 : f32
// CHECK:           arith.cmpf olt, %[[U]], %{{.*}} : f32
// CHECK-NOT:   math.erf
// CHECK-NOT:   math.tanh
func.func @gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %exact = cortex.gelu %x : tensor<4xf32> -> tensor<4xf32>
  %approx = cortex.gelu %x {approximate = "tanh"} : tensor<4xf32> -> tensor<4xf32>
  func.return %exact, %approx : tensor<4xf32>, tensor<4xf32>
}

// f64: the clamp is where Φ underflows in f64.
// CHECK-LABEL: func.func @gelu64
// CHECK:         arith.constant 4.000000e+01 : f64
func.func @gelu64(%x: tensor<4xf64>) -> tensor<4xf64> {
  %r = cortex.gelu %x : tensor<4xf64> -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}
