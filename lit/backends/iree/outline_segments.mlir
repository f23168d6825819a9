// cortex-outline-segments, its cost rule off (these runs are tiny; outline_segments_cost.mlir tests the
// rule): each maximal run of call-free linalg/tensor/arith/math/scf ops holding a
// linalg op becomes a private function @<fn>__seg<k> {cortex.segment}, called in its place; calls stay,
// and the blocks of an op that calls (an scf.if around an extern) are cut the same way. Constants and
// empties are cloned into each segment; scalars cross as rank-0 tensors, i1 as tensor<i8>; the call's
// cortex.origin joins the run's origins.
// RUN: cortex-opt %s -p "cortex-outline-segments{min-intensity=0 min-work=0}" | filecheck %s
// RUN: cortex-opt %s -p "cortex-outline-segments{min-intensity=0 min-work=0}" -t iree | filecheck %s --check-prefix=IREE
// RUN: %if mlir-opt %{ cortex-opt %s -p "cortex-outline-segments{min-intensity=0 min-work=0}" --print-op-generic | %mlir-opt > /dev/null %}

// CHECK-LABEL: func.func @f(%x: tensor<4xf32>, %t: f32) -> (tensor<4xf32>, f32) {
// CHECK-NEXT:    %d = func.call @f__seg0(%x) {cortex.origin = "double"} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT:    %s = func.call @ext(%d) : (tensor<4xf32>) -> f32
// CHECK-NEXT:    %[[S:.*]] = tensor.from_elements %s : tensor<f32>
// CHECK-NEXT:    %[[T:.*]] = tensor.from_elements %t : tensor<f32>
// CHECK-NEXT:    %[[B:.*]] = func.call @f__seg1(%[[S]], %[[T]]) {cortex.origin = "gate"} : (tensor<f32>, tensor<f32>) -> tensor<i8>
// CHECK-NEXT:    %[[B8:.*]] = tensor.extract %[[B]][] : tensor<i8>
// CHECK-NEXT:    %b = arith.trunci %[[B8]] : i8 to i1
// CHECK-NEXT:    %r = scf.if %b -> (tensor<4xf32>) {
// CHECK-NEXT:      %u = func.call @ext(%x) : (tensor<4xf32>) -> f32
// CHECK-NEXT:      %[[U:.*]] = tensor.from_elements %u : tensor<f32>
// CHECK-NEXT:      %filled = func.call @f__seg2(%[[U]]) {cortex.origin = "fill"} : (tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT:      scf.yield %filled : tensor<4xf32>
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield %d : tensor<4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %k = arith.addf %s, %t : f32
// CHECK-NEXT:    func.return %r, %k : tensor<4xf32>, f32
// CHECK:       func.func private @f__seg0(%{{.*}}: tensor<4xf32>) -> tensor<4xf32> attributes {cortex.segment} {
// CHECK:         linalg.generic
// CHECK:       func.func private @f__seg1(%[[A0:.*]]: tensor<f32>, %[[A1:.*]]: tensor<f32>) -> tensor<i8> attributes {cortex.segment} {
// CHECK-NEXT:    %[[X0:.*]] = tensor.extract %[[A0]][] : tensor<f32>
// CHECK-NEXT:    %[[X1:.*]] = tensor.extract %[[A1]][] : tensor<f32>
// CHECK:         %[[P:.*]] = arith.cmpf olt
// CHECK:         %[[E:.*]] = arith.extui %[[P]] : i1 to i8
// CHECK-NEXT:    %[[W:.*]] = tensor.from_elements %[[E]] : tensor<i8>
// CHECK-NEXT:    func.return %[[W]] : tensor<i8>
// CHECK:       func.func private @f__seg2(

// What IREE compiles: the segments alone, public, legalised.
// IREE-NOT:     func.func @f(
// IREE:         func.func @f__seg0(
// IREE:         func.func @f__seg1(
// IREE:         func.func @f__seg2(
// IREE-NOT:     cortex.segment
func.func private @ext(tensor<4xf32>) -> f32
func.func @f(%x: tensor<4xf32>, %t: f32) -> (tensor<4xf32>, f32) {
  %e = tensor.empty() : tensor<4xf32>
  %d = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) attrs = {cortex.origin = "double"} {
  ^bb0(%a: f32, %o: f32):
    %m = arith.addf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %s = func.call @ext(%d) : (tensor<4xf32>) -> f32
  %z = tensor.empty() : tensor<f32>
  %sf = linalg.fill {cortex.origin = "gate"} ins(%s : f32) outs(%z : tensor<f32>) -> tensor<f32>
  %sv = tensor.extract %sf[] {cortex.origin = "gate"} : tensor<f32>
  %b = arith.cmpf olt, %sv, %t : f32
  %r = scf.if %b -> (tensor<4xf32>) {
    %u = func.call @ext(%x) : (tensor<4xf32>) -> f32
    %filled = linalg.fill {cortex.origin = "fill"} ins(%u : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %filled : tensor<4xf32>
  } else {
    scf.yield %d : tensor<4xf32>
  }
  %k = arith.addf %s, %t : f32
  func.return %r, %k : tensor<4xf32>, f32
}
