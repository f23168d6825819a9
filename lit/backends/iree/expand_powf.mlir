// cortex-expand-powf (the IREE backend's hand-over): math.powf as exp(y·log|x|), computed in f64 (f32 operands
// widened, the result truncated once), with C99 pow's cases spelt out: the sign of x when y is an odd integer
// (copysign, so (-0)^-1 = -inf), NaN for a finite negative x and a non-integral y, 1 for y = 0, x = 1, or
// |x| = 1 and y = ±inf. IREE's own expansion of math.powf is NaN for every negative base.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-expand-powf | filecheck %s
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-expand-powf --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @pow32
// CHECK:         ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[XW:.*]] = arith.extf %[[X]] : f32 to f64
// CHECK-NEXT:      %[[YW:.*]] = arith.extf %[[Y]] : f32 to f64
// CHECK-NEXT:      %[[AX:.*]] = math.absf %[[XW]] : f64
// CHECK-NEXT:      %[[LOG:.*]] = math.log %[[AX]] : f64
// CHECK-NEXT:      %[[PROD:.*]] = arith.mulf %[[YW]], %[[LOG]] : f64
// CHECK-NEXT:      %[[MAG:.*]] = math.exp %[[PROD]] : f64
// CHECK-NEXT:      %[[FY:.*]] = math.floor %[[YW]] : f64
// CHECK-NEXT:      %[[INT:.*]] = arith.cmpf oeq, %[[FY]], %[[YW]] : f64
// CHECK:           %[[ODD:.*]] = arith.andi %[[INT]], %{{.*}} : i1
// CHECK-NEXT:      %[[SIGNED:.*]] = math.copysign %[[MAG]], %[[XW]] : f64
// CHECK-NEXT:      arith.select %[[ODD]], %[[SIGNED]], %[[MAG]] : f64
// CHECK:           arith.cmpf une, %[[FY]], %[[YW]] : f64
// CHECK:           arith.constant 0x7ff8000000000000 : f64
// CHECK:           arith.cmpf oeq, %[[YW]], %{{.*}} : f64
// CHECK:           %[[R:.*]] = arith.truncf %{{.*}} : f64 to f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NOT:   math.powf
func.func @pow32(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %r = cortex.pow %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// f64 operands are not widened and nothing is truncated.
// CHECK-LABEL: func.func @pow64
// CHECK:         ^bb0(%[[X:.*]]: f64, %[[Y:.*]]: f64, %{{.*}}: f64):
// CHECK-NEXT:      math.absf %[[X]] : f64
// CHECK-NOT:       arith.truncf
// CHECK:           linalg.yield %{{.*}} : f64
// CHECK-NOT:   math.powf
func.func @pow64(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xf64> {
  %r = cortex.pow %x, %y : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  func.return %r : tensor<4xf64>
}
