// cortex-decompose-scene-change: 1 − mean SSIM as five Gaussian blurs (an OpenCV extern)
// and compilable elementwise ops, in the kernel's own order (float64: the same bits);
// precision=f32 drops the casts. Every op it makes carries the stage's origin.
// RUN: cortex-opt %s -p cortex-decompose-scene-change | filecheck %s
// RUN: cortex-opt %s -p 'cortex-decompose-scene-change{precision=f32}' | filecheck %s --check-prefix=F32
// RUN: cortex-opt %s -p cortex-decompose-scene-change,convert-cortex-to-linalg,convert-cortex-to-extern | %mlir-opt > /dev/null
// RUN: cortex-opt %s -p cortex-decompose-scene-change,convert-cortex-to-linalg,convert-cortex-to-extern --print-op-generic | filecheck %s --check-prefix=LOWERED
// RUN: not cortex-opt %s -p 'cortex-decompose-scene-change{precision=f16}' 2>&1 | filecheck %s --check-prefix=BAD
// REQUIRES: mlir-opt

// CHECK-LABEL: func.func @scene
// CHECK-NEXT:    %s_x = cortex.cast %gray {cortex.origin = "s"} : tensor<64x64xf32> -> tensor<64x64xf64>
// CHECK-NEXT:    %s_y = cortex.cast %prev {cortex.origin = "s"} : tensor<64x64xf32> -> tensor<64x64xf64>
// CHECK-NEXT:    %s_xx = cortex.mul %s_x, %s_x
// CHECK-NEXT:    %s_yy = cortex.mul %s_y, %s_y
// CHECK-NEXT:    %s_xy = cortex.mul %s_x, %s_y
// CHECK-NEXT:    %s_mu_x = cortex.gaussian_blur %s_x {cortex.origin = "s"}
// CHECK-NEXT:    %s_mu_y = cortex.gaussian_blur %s_y {cortex.origin = "s"}
// CHECK-NEXT:    %s_s_xx = cortex.gaussian_blur %s_xx
// CHECK-NEXT:    %s_s_yy = cortex.gaussian_blur %s_yy
// CHECK-NEXT:    %s_s_xy = cortex.gaussian_blur %s_xy
// CHECK-NEXT:    %s_mu_xy = cortex.mul %s_mu_x, %s_mu_y
// CHECK-NEXT:    %s_mu_xx = cortex.mul %s_mu_x, %s_mu_x
// CHECK-NEXT:    %s_mu_yy = cortex.mul %s_mu_y, %s_mu_y
// CHECK-NEXT:    %s_mu_sq = cortex.add %s_mu_xx, %s_mu_yy
// CHECK-NEXT:    %s_s_sum = cortex.add %s_s_xx, %s_s_yy
// CHECK-NEXT:    %s_var_sum = cortex.sub %s_s_sum, %s_mu_sq
// CHECK-NEXT:    %s_cov = cortex.sub %s_s_xy, %s_mu_xy
// CHECK:         %s_ssim = cortex.div %s_num, %s_den
// CHECK-NEXT:    %s_mean = cortex.reduce_mean %s_ssim {cortex.origin = "s", keepdims = 0 : i64} : tensor<64x64xf64> -> tensor<f64>
// CHECK-NEXT:    %s_one = cortex.constant dense<1.000000e+00> : tensor<f64>
// CHECK-NEXT:    %s_value = cortex.sub %s_one, %s_mean
// CHECK-NEXT:    %s = cortex.to_scalar %s_value {cortex.origin = "s"} : tensor<f64> -> f32
// CHECK-NEXT:    func.return %s : f32
// CHECK-NOT:     cortex.scene_change

// F32-NOT:     cortex.cast
// F32:         %s_mu_x = cortex.gaussian_blur %gray {cortex.origin = "s"} : tensor<64x64xf32> -> tensor<64x64xf32>
// F32:         %s = cortex.to_scalar %s_value {cortex.origin = "s"} : tensor<f32> -> f32

// Lowered: five extern calls to one declaration, all from the scene change.
// LOWERED:     "func.func"() <{sym_name = "cortex_gaussian_blur", function_type = (tensor<64x64xf64>) -> tensor<64x64xf64>, sym_visibility = "private"}> ({
// LOWERED-COUNT-5: "func.call"(%{{.*}}) <{callee = @cortex_gaussian_blur}> {cortex.origin = "s"}

// BAD: unknown precision 'f16' (known: f64, f32)
func.func @scene(%gray: tensor<64x64xf32>, %prev: tensor<64x64xf32>) -> f32 {
  %s = cortex.scene_change %gray, %prev : (tensor<64x64xf32>, tensor<64x64xf32>) -> f32
  func.return %s : f32
}
