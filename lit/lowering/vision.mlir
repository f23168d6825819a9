// convert-cortex-to-linalg on the compilable vision stages: gray is a channel
// reduction of the uitofp'd i8 frame, center_crop a constant, motion_map a
// block sum through expand_shape + linalg.reduce, score_fusion and
// temporal_smooth one elementwise linalg.generic each.
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg | cortex-opt | filecheck %s

// CHECK-LABEL: func.func @gray(%frame: tensor<64x96x3xi8> {cortex.unsigned}) -> tensor<64x96xf32>
// CHECK:         %[[K:.*]] = arith.constant {cortex.origin = "y"} dense<[1.140000e-01, 5.870000e-01, 2.990000e-01]> : tensor<3xf32>
// CHECK:         %[[Z:.*]] = linalg.fill {cortex.origin = "y"} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<64x96xf32>)
// CHECK:         %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%frame, %[[K]] : tensor<64x96x3xi8>, tensor<3xf32>) outs(%[[Z]] : tensor<64x96xf32>) attrs = {cortex.origin = "y"}
// CHECK:           arith.uitofp %{{.*}} : i8 to f32
// CHECK:         func.return %y
func.func @gray(%frame: tensor<64x96x3xui8>) -> tensor<64x96xf32> {
  %y = cortex.gray %frame : tensor<64x96x3xui8> -> tensor<64x96xf32>
  func.return %y : tensor<64x96xf32>
}

// CHECK-LABEL: func.func @center_crop
// CHECK-NEXT:    %prior = arith.constant {cortex.origin = "prior"} dense<{{.*}}> : tensor<4x6xf32>
// CHECK-NEXT:    func.return %prior
func.func @center_crop(%g: tensor<64x96xf32>) -> tensor<4x6xf32> {
  %prior = cortex.center_crop %g {block = 16 : i64} : tensor<64x96xf32> -> tensor<4x6xf32>
  func.return %prior : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @motion_map
// CHECK:         linalg.generic {{.*}} ins(%g, %p : tensor<64x96xf32>, tensor<64x96xf32>)
// CHECK:           arith.subf
// CHECK:           math.absf
// CHECK:         tensor.expand_shape %{{.*}} {{\[}}[0 : i64, 1 : i64], [2 : i64, 3 : i64]] output_shape [4, 16, 6, 16] {cortex.origin = "m"} : tensor<64x96xf32> into tensor<4x16x6x16xf32>
// CHECK:         linalg.reduce ins(%{{.*}}:tensor<4x16x6x16xf32>) outs(%{{.*}}:tensor<4x6xf32>) dimensions = [1, 3]
// CHECK:           arith.constant 1.53186284e-05 : f32
// CHECK:         func.return %m
func.func @motion_map(%g: tensor<64x96xf32>, %p: tensor<64x96xf32>) -> tensor<4x6xf32> {
  %m = cortex.motion_map %g, %p {block = 16 : i64} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
  func.return %m : tensor<4x6xf32>
}

// The weights are scalar inputs of the generic, with the map (d0, d1) -> ().
// CHECK-LABEL: func.func @score_fusion
// CHECK:         %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a, %b, %wa, %wb : tensor<4x6xf32>, tensor<4x6xf32>, f32, f32)
// CHECK-NEXT:    ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[WA:.*]]: f32, %[[WB:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[X:.*]] = arith.mulf %[[A]], %[[WA]] : f32
// CHECK-NEXT:      %[[Y:.*]] = arith.mulf %[[B]], %[[WB]] : f32
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:      linalg.yield %[[S]] : f32
func.func @score_fusion(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>, %wa: f32, %wb: f32) -> tensor<4x6xf32> {
  %s = cortex.score_fusion(%a, %b) weights(%wa, %wb) {terms = ["center_crop", "motion_map"]} : tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>
  func.return %s : tensor<4x6xf32>
}

// The scene test is one scalar cmpf feeding a select in the body.
// CHECK-LABEL: func.func @temporal_smooth
// CHECK:         %[[T:.*]] = arith.constant {cortex.origin = "t"} 5.000000e-01 : f32
// CHECK-NEXT:    %[[R:.*]] = arith.cmpf ogt, %scene, %[[T]] : f32
// CHECK:         %t = linalg.generic {{.*}} ins(%s, %p, %[[R]] : tensor<4x6xf32>, tensor<4x6xf32>, i1)
// CHECK:           arith.constant 6.000000e-01 : f32
// CHECK:           arith.constant 0.399999976 : f32
// CHECK:           arith.select
// CHECK-NOT:   cortex.
func.func @temporal_smooth(%s: tensor<4x6xf32>, %p: tensor<4x6xf32>, %scene: f32) -> tensor<4x6xf32> {
  %t = cortex.temporal_smooth %s, %p, %scene : (tensor<4x6xf32>, tensor<4x6xf32>, f32) -> tensor<4x6xf32>
  func.return %t : tensor<4x6xf32>
}
