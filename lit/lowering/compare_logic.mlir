// cortex.compare (ONNX Equal, Greater, Less, GreaterOrEqual, LessOrEqual) and cortex.not/and/or/xor (ONNX Not,
// And, Or, Xor): each one elementwise linalg.generic to an i1 tensor, broadcasting both operands — ordered
// arith.cmpf on floats (false with nan), signed arith.cmpi on integers, arith.andi/ori/xori on i1, Not as
// xori with true — which upstream mlir-opt accepts. The ops round-trip (refusals: dialect/compare_logic_invalid.mlir),
// and canonicalize folds them on constants through their reference kernels (nan compares false).
// RUN: cortex-opt %s | cortex-opt | filecheck %s --check-prefix=ROUND
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg --print-op-generic | %mlir-opt > /dev/null
// RUN: cortex-opt %s -p canonicalize | filecheck %s --check-prefix=FOLD
// REQUIRES: mlir-opt

// ROUND: cortex.compare %{{.*}}, %{{.*}} {predicate = "eq"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
// ROUND: cortex.not %{{.*}} : tensor<2x3x4xi1> -> tensor<2x3x4xi1>
// ROUND: cortex.and %{{.*}}, %{{.*}} : (tensor<2x3x4xi1>, tensor<4xi1>) -> tensor<2x3x4xi1>

// CHECK-LABEL: func.func @float_mask
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x1x4xf32>, tensor<3x1xf32>) outs(%{{.*}} : tensor<2x3x4xi1>)
// CHECK:           arith.cmpf oeq, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.cmpf ogt
// CHECK:         arith.cmpf olt
// CHECK:         arith.cmpf oge
// CHECK:         arith.cmpf ole
// CHECK:         linalg.generic
// CHECK:           %[[TRUE:.*]] = arith.constant true
// CHECK:           arith.xori %{{.*}}, %[[TRUE]] : i1
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x3x4xi1>, tensor<4xi1>) outs(%{{.*}} : tensor<2x3x4xi1>)
// CHECK:           arith.andi %{{.*}}, %{{.*}} : i1
// CHECK:         arith.ori %{{.*}}, %{{.*}} : i1
// CHECK:         arith.xori %{{.*}}, %{{.*}} : i1
func.func @float_mask(%x: tensor<2x1x4xf32>, %y: tensor<3x1xf32>, %m: tensor<4xi1>) -> tensor<2x3x4xi1> {
  %eq = cortex.compare %x, %y {predicate = "eq"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
  %gt = cortex.compare %x, %y {predicate = "gt"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
  %lt = cortex.compare %x, %y {predicate = "lt"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
  %ge = cortex.compare %x, %y {predicate = "ge"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
  %le = cortex.compare %x, %y {predicate = "le"} : (tensor<2x1x4xf32>, tensor<3x1xf32>) -> tensor<2x3x4xi1>
  %n = cortex.not %eq : tensor<2x3x4xi1> -> tensor<2x3x4xi1>
  %a = cortex.and %n, %m : (tensor<2x3x4xi1>, tensor<4xi1>) -> tensor<2x3x4xi1>
  %o = cortex.or %a, %gt : (tensor<2x3x4xi1>, tensor<2x3x4xi1>) -> tensor<2x3x4xi1>
  %r = cortex.xor %o, %lt : (tensor<2x3x4xi1>, tensor<2x3x4xi1>) -> tensor<2x3x4xi1>
  func.return %r : tensor<2x3x4xi1>
}

// CHECK-LABEL: func.func @int_compare
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i64
// CHECK:         arith.cmpi sgt, %{{.*}}, %{{.*}} : i8
// CHECK:         arith.cmpi slt
// CHECK:         arith.cmpi sge
// CHECK:         arith.cmpi sle
// CHECK:         arith.cmpi eq, %{{.*}}, %{{.*}} : i1
func.func @int_compare(%i: tensor<5xi64>, %j: tensor<i64>, %b: tensor<5xi8>, %p: tensor<5xi1>) -> tensor<5xi1> {
  %eq = cortex.compare %i, %j {predicate = "eq"} : (tensor<5xi64>, tensor<i64>) -> tensor<5xi1>
  %gt = cortex.compare %b, %b {predicate = "gt"} : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi1>
  %lt = cortex.compare %b, %b {predicate = "lt"} : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi1>
  %ge = cortex.compare %b, %b {predicate = "ge"} : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi1>
  %le = cortex.compare %b, %b {predicate = "le"} : (tensor<5xi8>, tensor<5xi8>) -> tensor<5xi1>
  %same = cortex.compare %eq, %p {predicate = "eq"} : (tensor<5xi1>, tensor<5xi1>) -> tensor<5xi1>
  func.return %same : tensor<5xi1>
}

// FOLD-LABEL: func.func @folded
// FOLD-NEXT:    %[[C:.*]] = cortex.constant dense<[false, true, false]> : tensor<3xi1>
// FOLD-NEXT:    %[[N:.*]] = cortex.constant dense<[true, false, true]> : tensor<3xi1>
// FOLD-NEXT:    func.return %[[C]], %[[N]]
func.func @folded() -> (tensor<3xi1>, tensor<3xi1>) {
  %a = cortex.constant dense<[1.0, 2.0, 0x7FC00000]> : tensor<3xf32>
  %b = cortex.constant dense<2.0> : tensor<f32>
  %c = cortex.compare %a, %b {predicate = "ge"} : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  %n = cortex.not %c : tensor<3xi1> -> tensor<3xi1>
  func.return %c, %n : tensor<3xi1>, tensor<3xi1>
}
