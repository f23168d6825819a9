// convert-cortex-to-linalg on the window ops: push is tensor slices and one
// tensor.insert; median is a pairwise-rank linalg.generic (parallel i,
// reduction j), a count of the positive entries, and a reduction that picks
// the middle rank (window_mlir_opt.mlir: upstream mlir-opt accepts it).
// RUN: cortex-opt %s -p convert-cortex-to-linalg | filecheck %s

// CHECK-LABEL: func.func @push(%w: tensor<5xf32>, %x: f32) -> tensor<5xf32>
// CHECK:         %[[TAIL:.*]] = tensor.extract_slice %w[1] [4] [1] {cortex.origin = "p"} : tensor<5xf32> to tensor<4xf32>
// CHECK-NEXT:    %[[SHIFTED:.*]] = tensor.insert_slice %[[TAIL]] into %{{.*}}[0] [4] [1] {cortex.origin = "p"} : tensor<4xf32> into tensor<5xf32>
// CHECK-NEXT:    %[[LAST:.*]] = arith.constant {cortex.origin = "p"} 4 : index
// CHECK-NEXT:    %p = tensor.insert %x into %[[SHIFTED]][%[[LAST]]] {cortex.origin = "p"} : tensor<5xf32>
// CHECK-NEXT:    func.return %p
func.func @push(%w: tensor<5xf32>, %x: f32) -> tensor<5xf32> {
  %p = cortex.window_push %w, %x : tensor<5xf32>
  func.return %p : tensor<5xf32>
}

// A one-entry window has no tail to keep.
// CHECK-LABEL: func.func @push_one
// CHECK-NOT:     tensor.extract_slice
// CHECK:         %p = tensor.insert %x into
func.func @push_one(%w: tensor<1xf32>, %x: f32) -> tensor<1xf32> {
  %p = cortex.window_push %w, %x : tensor<1xf32>
  func.return %p : tensor<1xf32>
}

// CHECK-LABEL: func.func @median(%w: tensor<5xf32>) -> f32
// CHECK:         linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
// CHECK:         linalg.reduce
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]
// CHECK:         %m = tensor.extract %{{.*}}[] {cortex.origin = "m"} : tensor<f32>
// CHECK-NEXT:    func.return %m
// CHECK-NOT:     cortex.
func.func @median(%w: tensor<5xf32>) -> f32 {
  %m = cortex.window_median %w : tensor<5xf32>
  func.return %m : f32
}
