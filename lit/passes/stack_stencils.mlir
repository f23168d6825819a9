// cortex-stack-stencils: independent Gaussian blurs with one window and one image type
// become one variadic call (one multi-channel OpenCV call); a blur that reads another's
// result, or whose group's result is read before it, starts a new group. Not a default
// pass (slower here once packing is counted, and not bit-exact: see the pass docstring).
// RUN: cortex-opt %s -p cortex-stack-stencils | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-stack-stencils' | filecheck %s --check-prefix=L2

// CHECK-LABEL: func.func @blurs
// CHECK-NEXT:    %c = cortex.gaussian_blur %z {ksize = 5 : i64}
// CHECK-NEXT:    %a, %b = cortex.gaussian_blur %x, %y : tensor<16x16xf64>, tensor<16x16xf64> -> tensor<16x16xf64>, tensor<16x16xf64>
// CHECK-NEXT:    %s = cortex.add %a, %b
// CHECK-NEXT:    %d = cortex.gaussian_blur %s : tensor<16x16xf64> -> tensor<16x16xf64>
// CHECK-NEXT:    %e = cortex.gaussian_blur %f32 : tensor<16x16xf32> -> tensor<16x16xf32>
func.func @blurs(%x: tensor<16x16xf64>, %y: tensor<16x16xf64>, %z: tensor<16x16xf64>, %f32: tensor<16x16xf32>)
    -> (tensor<16x16xf64>, tensor<16x16xf64>, tensor<16x16xf32>) {
  %a = cortex.gaussian_blur %x : tensor<16x16xf64> -> tensor<16x16xf64>
  %c = cortex.gaussian_blur %z {ksize = 5 : i64} : tensor<16x16xf64> -> tensor<16x16xf64>
  %b = cortex.gaussian_blur %y : tensor<16x16xf64> -> tensor<16x16xf64>
  %s = cortex.add %a, %b : (tensor<16x16xf64>, tensor<16x16xf64>) -> tensor<16x16xf64>
  %d = cortex.gaussian_blur %s : tensor<16x16xf64> -> tensor<16x16xf64>
  %e = cortex.gaussian_blur %f32 : tensor<16x16xf32> -> tensor<16x16xf32>
  func.return %d, %c, %e : tensor<16x16xf64>, tensor<16x16xf64>, tensor<16x16xf32>
}

// L2:      %scene_mu_x, %scene_mu_y, %scene_s_xx, %scene_s_yy = cortex.gaussian_blur %scene_x, %scene_y, %scene_xx, %scene_yy
// L2-NEXT: %scene_s_xy = cortex.gaussian_blur %scene_xy
