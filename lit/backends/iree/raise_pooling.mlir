// cortex-raise-pooling: the NHWC pooling generics convert-cortex-to-linalg writes (a windowed maximumf/addf
// over (n, oh, ow, c, kh, kw) with an empty window operand) become upstream's named
// linalg.pooling_nhwc_max / linalg.pooling_nhwc_sum with the strides and dilations read off the input map;
// IREE 3.13 runs the named ops 4-6x faster than the generic. NCHW pools, a body that reads the window,
// fast-math bodies and integer pools are left alone.
// RUN: cortex-opt %s -p convert-cortex-to-linalg,cortex-raise-pooling | filecheck %s
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s --check-prefix=BEFORE
// mlir-opt reads the raised ops and, generalised back, they have the generic's maps and bodies:
// RUN: %if mlir-opt %{ cortex-opt %s -p convert-cortex-to-linalg,cortex-raise-pooling --print-op-generic | %mlir-opt --linalg-generalize-named-ops | filecheck %s --check-prefix=GENERAL %}

// GENERAL-DAG: #[[IN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>
// GENERAL-DAG: #[[WIN:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>
// GENERAL-DAG: #[[OUT:map[0-9]*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>
// BEFORE-LABEL: func.func @nhwc
// BEFORE:         linalg.generic {{.*}}(d0, ((d1 * 2) + d4), ((d2 * 2) + d5), d3)
// BEFORE:           arith.maximumf
// BEFORE:         linalg.generic {{.*}}(d0, ((d1 * 2) + d4), ((d2 * 2) + d5), d3)
// BEFORE:           arith.addf
// CHECK-LABEL: func.func @nhwc
// CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:         %y = linalg.pooling_nhwc_max {cortex.origin = "y", strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%x, %[[WIN]] : tensor<1x9x9x4xf32>, tensor<2x2xf32>) outs(%{{.*}} : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
// CHECK:         %[[SUM:.*]] = linalg.pooling_nhwc_sum {cortex.origin = "z", strides = dense<2> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%{{.*}}, %{{.*}} : tensor<1x11x11x4xf32>, tensor<3x3xf32>) outs(%{{.*}} : tensor<1x5x5x4xf32>) -> tensor<1x5x5x4xf32>
// CHECK:         arith.divf
// CHECK-NOT:     linalg.pooling
// GENERAL-LABEL: func.func @nhwc
// GENERAL:         linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// GENERAL:           arith.maximumf
// GENERAL:         linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]]]
// GENERAL:           arith.addf
func.func @nhwc(%x: tensor<1x9x9x4xf32>) -> (tensor<1x4x4x4xf32>, tensor<1x5x5x4xf32>) {
  %y = cortex.max_pool_nhwc %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x9x9x4xf32> -> tensor<1x4x4x4xf32>
  %z = cortex.avg_pool_nhwc %x {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x9x9x4xf32> -> tensor<1x5x5x4xf32>
  func.return %y, %z : tensor<1x4x4x4xf32>, tensor<1x5x5x4xf32>
}

// An NCHW pool (the layout IREE is not given by the ONNX backend; no named NCHW sum in xDSL) stays a generic.
// CHECK-LABEL: func.func @nchw
// CHECK-NOT:     linalg.pooling
// CHECK:         linalg.generic
// CHECK:           arith.maximumf
func.func @nchw(%x: tensor<1x4x9x9xf32>) -> tensor<1x4x4x4xf32> {
  %y = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x4x9x9xf32> -> tensor<1x4x4x4xf32>
  func.return %y : tensor<1x4x4x4xf32>
}

// Not a pooling: the body reads the window operand, or carries fast-math flags, or works on integers.
// CHECK-LABEL: func.func @not_pools
// CHECK-NOT:     linalg.pooling
// CHECK:         arith.addf %{{.*}}, %{{.*}} : f32
// CHECK:         arith.maximumf %{{.*}}, %{{.*}} fastmath<fast> : f32
// CHECK:         arith.maxsi
func.func @not_pools(%x: tensor<1x4x4x2xf32>, %w: tensor<2x2xf32>, %i: tensor<1x4x4x2xi32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>) {
  %init = tensor.empty() : tensor<1x2x2x2xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %s = arith.addf %k, %acc : f32
    linalg.yield %s : f32
  } -> tensor<1x2x2x2xf32>
  %win = tensor.empty() : tensor<2x2xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %win : tensor<1x4x4x2xf32>, tensor<2x2xf32>) outs(%init : tensor<1x2x2x2xf32>) {
  ^bb0(%v: f32, %k: f32, %acc: f32):
    %m = arith.maximumf %v, %acc fastmath<fast> : f32
    linalg.yield %m : f32
  } -> tensor<1x2x2x2xf32>
  %iinit = tensor.empty() : tensor<1x2x2x2xi32>
  %c = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2 * 2 + d5, d3)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d4, d5)>, affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%i, %win : tensor<1x4x4x2xi32>, tensor<2x2xf32>) outs(%iinit : tensor<1x2x2x2xi32>) {
  ^bb0(%v: i32, %k: f32, %acc: i32):
    %m = arith.maxsi %v, %acc : i32
    linalg.yield %m : i32
  } -> tensor<1x2x2x2xi32>
  func.return %a, %b, %c : tensor<1x2x2x2xf32>, tensor<1x2x2x2xf32>, tensor<1x2x2x2xi32>
}
