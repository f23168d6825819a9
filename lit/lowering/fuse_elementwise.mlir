// cortex-fuse-linalg-elementwise: a producer linalg.generic used only by one
// consumer generic, both all-parallel, is inlined into the consumer; its
// result and tensor.empty disappear and the origins are joined with "+".
// RUN: cortex-opt %s -p cortex-fuse-linalg-elementwise | filecheck %s
// RUN: cortex-opt %l2_static -p convert-cortex-to-linalg,convert-cortex-to-extern,cortex-fuse-linalg-elementwise | filecheck %s --check-prefix=L2

#id = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>

// relu(x * 2 + 1) as three generics -> one generic; the scalar input keeps its map.
// CHECK-LABEL: func.func @relu_affine
// CHECK-NOT:     linalg.generic
// CHECK:         %e2 = tensor.empty
// CHECK-NEXT:    %relu = linalg.generic
// CHECK-SAME:    indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>]
// CHECK-SAME:    ins(%x, %two : tensor<4x8xf32>, tensor<f32>)
// CHECK-SAME:    cortex.origin = "mul+add+relu"
// CHECK-NEXT:    ^bb0(%[[X:.*]]: f32, %[[T:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:      %[[M:.*]] = arith.mulf %[[X]], %[[T]] : f32
// CHECK-NEXT:      %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      %[[A:.*]] = arith.addf %[[M]], %[[ONE]] : f32
// CHECK-NEXT:      %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      %[[R:.*]] = arith.maximumf %[[A]], %[[Z]] : f32
// CHECK-NEXT:      linalg.yield %[[R]] : f32
// CHECK-NOT:     {{linalg.generic|tensor.empty}}
// CHECK:         func.return %relu
func.func @relu_affine(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %e0 = tensor.empty() : tensor<4x8xf32>
  %mul = linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %two : tensor<4x8xf32>, tensor<f32>) outs(%e0 : tensor<4x8xf32>) attrs = {cortex.origin = "mul"} {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %v = arith.mulf %a, %b : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %add = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mul : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) attrs = {cortex.origin = "add"} {
  ^bb0(%a: f32, %o: f32):
    %one = arith.constant 1.0 : f32
    %v = arith.addf %a, %one : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x8xf32>
  %relu = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%add : tensor<4x8xf32>) outs(%e2 : tensor<4x8xf32>) attrs = {cortex.origin = "relu"} {
  ^bb0(%a: f32, %o: f32):
    %zero = arith.constant 0.0 : f32
    %v = arith.maximumf %a, %zero : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  func.return %relu : tensor<4x8xf32>
}

// A producer with two users stays (fusing would compute it twice).
// CHECK-LABEL: func.func @two_users
// CHECK:         %s = linalg.generic
// CHECK:         %r = linalg.generic
// CHECK-SAME:    ins(%s : tensor<4x8xf32>)
// CHECK:         func.return %r, %s
func.func @two_users(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e0 = tensor.empty() : tensor<4x8xf32>
  %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%e0 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %e1 = tensor.empty() : tensor<4x8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s : tensor<4x8xf32>) outs(%e1 : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  func.return %r, %s : tensor<4x8xf32>, tensor<4x8xf32>
}

// A reduction producer (row sums) is not fused into its elementwise consumer.
// CHECK-LABEL: func.func @reduction_producer
// CHECK:         %sum = linalg.generic
// CHECK-SAME:    iterator_types = ["parallel", "reduction"]
// CHECK:         %r = linalg.generic
// CHECK-SAME:    ins(%sum : tensor<4xf32>)
func.func @reduction_producer(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = arith.constant dense<0.0> : tensor<4xf32>
  %sum = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x8xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %v = arith.addf %a, %acc : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%sum : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.sqrt %a : f32
    linalg.yield %v : f32
  } -> tensor<4xf32>
  func.return %r : tensor<4xf32>
}

// The L2 pipeline: 17 generics after lowering, 14 after fusion.
// L2-LABEL: func.func @l2_frame
// L2-COUNT-14: linalg.generic
// L2-NOT:      linalg.generic
// L2:          func.return
