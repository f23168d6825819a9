// RUN: cortex-opt %s | filecheck %s
// A dialect-prefixed attribute on a cortex op is kept.
// CHECK: cortex.motion_map %gray, %prev {foo.bar = 1 : i64, block = 16 : i64}
func.func @prefixed(%gray: tensor<64x96xf32>, %prev: tensor<64x96xf32>) -> tensor<4x6xf32> {
  %m = cortex.motion_map %gray, %prev {block = 16 : i64, foo.bar = 1 : i64} : (tensor<64x96xf32>, tensor<64x96xf32>) -> tensor<4x6xf32>
  func.return %m : tensor<4x6xf32>
}
