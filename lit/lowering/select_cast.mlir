// cortex.select (ONNX Where) and cortex.cast between floats, signless integers and i1 (ONNX Cast):
// each one elementwise linalg.generic — arith.select on a broadcast i1 condition; the conversion
// its types call for (fptosi, sitofp, extui/uitofp from i1, != 0 to i1, extsi/trunci, extf/truncf)
// — which upstream mlir-opt accepts. The ops round-trip (refusals: dialect/select_cast_invalid.mlir).
// RUN: cortex-opt %s | cortex-opt | filecheck %s --check-prefix=ROUND
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg --print-op-generic | %mlir-opt > /dev/null
// REQUIRES: mlir-opt

// ROUND: cortex.select %{{.*}}, %{{.*}}, %{{.*}} : (tensor<3x1xi1>, tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
// ROUND: cortex.cast %{{.*}} : tensor<3x4xf32> -> tensor<3x4xi32>

// CHECK-LABEL: func.func @where
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<3x1xi1>, tensor<3x4xi64>, tensor<4xi64>) outs(%{{.*}} : tensor<3x4xi64>)
// CHECK:           arith.select %{{.*}}, %{{.*}}, %{{.*}} : i64
func.func @where(%c: tensor<3x1xi1>, %x: tensor<3x4xi64>, %y: tensor<4xi64>) -> tensor<3x4xi64> {
  %z = cortex.select %c, %x, %y : (tensor<3x1xi1>, tensor<3x4xi64>, tensor<4xi64>) -> tensor<3x4xi64>
  func.return %z : tensor<3x4xi64>
}

// CHECK-LABEL: func.func @casts
// CHECK:         arith.fptosi %{{.*}} : f32 to i32
// CHECK:         arith.sitofp %{{.*}} : i32 to f64
// CHECK:         arith.cmpf une, %{{.*}}, %{{.*}} : f32
// CHECK:         arith.uitofp %{{.*}} : i1 to f16
// CHECK:         arith.extui %{{.*}} : i1 to i64
// CHECK:         arith.trunci %{{.*}} : i64 to i8
// CHECK:         arith.extsi %{{.*}} : i8 to i16
// CHECK:         arith.cmpi ne, %{{.*}}, %{{.*}} : i16
func.func @casts(%x: tensor<3x4xf32>) -> (tensor<3x4xf64>, tensor<3x4xi1>) {
  %i = cortex.cast %x : tensor<3x4xf32> -> tensor<3x4xi32>
  %d = cortex.cast %i : tensor<3x4xi32> -> tensor<3x4xf64>
  %b = cortex.cast %x : tensor<3x4xf32> -> tensor<3x4xi1>
  %h = cortex.cast %b : tensor<3x4xi1> -> tensor<3x4xf16>
  %l = cortex.cast %b : tensor<3x4xi1> -> tensor<3x4xi64>
  %s = cortex.cast %l : tensor<3x4xi64> -> tensor<3x4xi8>
  %w = cortex.cast %s : tensor<3x4xi8> -> tensor<3x4xi16>
  %n = cortex.cast %w : tensor<3x4xi16> -> tensor<3x4xi1>
  func.return %d, %n : tensor<3x4xf64>, tensor<3x4xi1>
}
