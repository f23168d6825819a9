// saliency_dft as matmuls by compile-time matrices: pool by `scale`
// (expand_shape + reduce), the forward DFT (6 matmuls: Ch·A, Sh·A, then
// accumulated pairs for Re and Im), |F|, log, the 3×3 box as two band
// matrices, the phase step, the inverse DFT (8 matmuls), the power, the
// 5×5 Gaussian (two band matrices), max normalisation, pool to the grid.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s --check-prefix=COUNT

// CHECK-LABEL: func.func @saliency(%gray: tensor<64x96xf32>) -> tensor<4x6xf32>
// CHECK:         tensor.expand_shape %gray {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [16, 4, 24, 4] {cortex.origin = "s"} : tensor<64x96xf32> into tensor<16x4x24x4xf32>
// CHECK:         linalg.reduce ins(%{{.*}}:tensor<16x4x24x4xf32>) outs(%{{.*}}:tensor<16x24xf32>) dimensions = [1, 3]
// CHECK:           arith.constant 6.250000e-02 : f32
// CHECK:         arith.constant {cortex.origin = "s"} dense<{{.*}}> : tensor<16x16xf32>
// CHECK:         linalg.matmul {cortex.origin = "s"} ins(%{{.*}}, %{{.*}} : tensor<16x16xf32>, tensor<16x24xf32>)
// CHECK:           math.sqrt
// CHECK:           arith.constant 1.000000e-09 : f32
// CHECK-NEXT:      arith.addf
// CHECK-NEXT:      math.log
// CHECK:           arith.subf
// CHECK-NEXT:      math.exp
// CHECK:           arith.cmpf ogt
// CHECK:           arith.divf
// CHECK:           arith.select
// CHECK:         linalg.reduce ins(%{{.*}}:tensor<16x24xf32>) outs(%{{.*}}:tensor<f32>) dimensions = [0, 1]
// CHECK:           arith.maximumf
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK:           arith.cmpf ogt
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [4, 4, 6, 4] {cortex.origin = "s"} : tensor<16x24xf32> into tensor<4x4x6x4xf32>
// CHECK:         %s = linalg.generic
// CHECK:         func.return %s : tensor<4x6xf32>

// 6 (forward) + 2 (box) + 8 (inverse) + 2 (Gaussian) matrix products.
// COUNT-COUNT-18: linalg.matmul
// COUNT-NOT:      linalg.matmul
// COUNT-NOT:      cortex.saliency_dft
func.func @saliency(%gray: tensor<64x96xf32>) -> tensor<4x6xf32> {
  %s = cortex.saliency_dft %gray {block = 16 : i64, scale = 4 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  func.return %s : tensor<4x6xf32>
}
