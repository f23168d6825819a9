// cortex-outline-segments' cost rule (defaults: work ≥ 64 × boundary elements and work ≥ 32768, where work
// = Σ iteration space × body ops): two ops per pixel over three crossing 480×640 frames (intensity 2/3)
// stay inline for the host; a 128×128×128 matmul (4.2M work over 49152 crossing elements, ~85) is
// outlined. With the rule off (min-intensity=0 min-work=0) both are outlined.
// RUN: cortex-opt %s -p cortex-outline-segments | filecheck %s
// RUN: cortex-opt %s -p "cortex-outline-segments{min-intensity=0 min-work=0}" | filecheck %s --check-prefix=OFF
// RUN: cortex-opt %s -p "cortex-outline-segments{min-intensity=0}" | filecheck %s --check-prefix=CHEAP

// CHECK-LABEL: func.func @elementwise(
// CHECK-NOT:     func.call
// CHECK:         linalg.generic
// CHECK-NOT:     func.call
// CHECK:         func.return
// OFF-LABEL:   func.func @elementwise(
// OFF-NEXT:      func.call @elementwise__seg0
// OFF-NEXT:      func.return
// CHEAP-LABEL: func.func @elementwise(
// CHEAP-NEXT:    func.call @elementwise__seg0
func.func @elementwise(%a: tensor<480x640xf32>, %b: tensor<480x640xf32>) -> tensor<480x640xf32> {
  %e = tensor.empty() : tensor<480x640xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<480x640xf32>, tensor<480x640xf32>) outs(%e : tensor<480x640xf32>) {
    ^bb0(%x: f32, %y: f32, %o: f32):
      %s = arith.subf %x, %y : f32
      %q = arith.mulf %s, %s : f32
      linalg.yield %q : f32
  } -> tensor<480x640xf32>
  func.return %r : tensor<480x640xf32>
}

// CHECK-LABEL: func.func @matmul(
// CHECK-NEXT:    %{{.*}} = func.call @matmul__seg0(%a, %b) : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
// CHECK-NEXT:    func.return
// OFF-LABEL:   func.func @matmul(
// OFF-NEXT:      func.call @matmul__seg0
func.func @matmul(%a: tensor<128x128xf32>, %b: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<128x128xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<128x128xf32>) -> tensor<128x128xf32>
  %m = linalg.matmul ins(%a, %b : tensor<128x128xf32>, tensor<128x128xf32>) outs(%z : tensor<128x128xf32>) -> tensor<128x128xf32>
  func.return %m : tensor<128x128xf32>
}

// A tiny run with plenty of work per element (a 4×4 matmul: 128 work over 32 crossing elements) pays IREE's call
// for nothing: min-work keeps it inline even with the intensity bar off.
// CHECK-LABEL: func.func @tiny(
// CHECK-NEXT:    linalg.matmul
// CHECK-NEXT:    func.return
// OFF-LABEL:   func.func @tiny(
// OFF-NEXT:      func.call @tiny__seg0
// CHEAP-LABEL: func.func @tiny(
// CHEAP-NEXT:    linalg.matmul
func.func @tiny(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %m = linalg.matmul ins(%a, %a : tensor<4x4xf32>, tensor<4x4xf32>) outs(%a : tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %m : tensor<4x4xf32>
}

// CHECK: func.func private @matmul__seg0(
// CHECK-NOT: func.func private @elementwise__seg
// CHECK-NOT: func.func private @tiny__seg
