// cortex-partition never makes a cycle between pieces, and does not split a
// region for an external op that is only in between in program order.
// RUN: cortex-opt %s -p cortex-partition --split-input-file | filecheck %s

// %a feeds text_roi (external), whose result meets %c again in %f: {a, c, f}
// in one piece would need text_roi's result before producing its input.
// CHECK-LABEL: func.func @cycle(%g: tensor<64x64xf32>) -> tensor<2x2xf32> {
// CHECK-NEXT:    %a, %c = func.call @cycle_compiled_0(%g) : (tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<2x2xf32>)
// CHECK-NEXT:    %t = cortex.text_roi %a
// CHECK-NEXT:    %f = func.call @cycle_compiled_1(%t, %c)
// CHECK-NEXT:    func.return %f
// CHECK-LABEL: func.func private @cycle_compiled_0(%g: tensor<64x64xf32>)
// CHECK-NEXT:    %a = cortex.add %g, %g
// CHECK-NEXT:    %c = cortex.center_crop %a
// CHECK-NEXT:    func.return %a, %c
// CHECK-LABEL: func.func private @cycle_compiled_1(%t: tensor<2x2xf32>, %c: tensor<2x2xf32>)
// CHECK-NEXT:    %f = cortex.add %t, %c
func.func @cycle(%g: tensor<64x64xf32>) -> tensor<2x2xf32> {
  %a = cortex.add %g, %g : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = cortex.text_roi %a : tensor<64x64xf32> -> tensor<2x2xf32>
  %c = cortex.center_crop %a : tensor<64x64xf32> -> tensor<2x2xf32>
  %f = cortex.add %t, %c : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %f : tensor<2x2xf32>
}

// -----

// blur_detector sits between %c and %r in program order but neither feeds
// nor uses %c: one piece, called once its input %sharp exists.
// CHECK-LABEL: func.func @apart(%g: tensor<64x64xf32>, %s: tensor<2x2xf32>) -> tensor<2x2xf32> {
// CHECK-NEXT:    %sharp = cortex.blur_detector %g
// CHECK-NEXT:    %r = func.call @apart_compiled_0(%g, %s, %sharp)
// CHECK-NEXT:    func.return %r
// CHECK-LABEL: func.func private @apart_compiled_0(
// CHECK-NEXT:    %c = cortex.center_crop %g
// CHECK-NEXT:    %r = cortex.temporal_smooth %c, %s, %sharp
func.func @apart(%g: tensor<64x64xf32>, %s: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %c = cortex.center_crop %g : tensor<64x64xf32> -> tensor<2x2xf32>
  %sharp = cortex.blur_detector %g : tensor<64x64xf32> -> f32
  %r = cortex.temporal_smooth %c, %s, %sharp : (tensor<2x2xf32>, tensor<2x2xf32>, f32) -> tensor<2x2xf32>
  func.return %r : tensor<2x2xf32>
}

// -----

// A tensor graph is all compilable: one piece, its constants inside it.
// CHECK-LABEL: func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
// CHECK-NEXT:    %y = func.call @mlp_compiled_0(%x)
// CHECK-NEXT:    func.return %y
// CHECK-LABEL: func.func private @mlp_compiled_0(%x: tensor<2x4xf32>) -> tensor<2x4xf32> attributes {cortex.compiled} {
// CHECK-NEXT:    %one = cortex.constant
// CHECK-NEXT:    %h = cortex.add %x, %one
// CHECK-NEXT:    %y = cortex.relu %h
func.func @mlp(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %one = cortex.constant dense<1.0> : tensor<f32>
  %h = cortex.add %x, %one : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %y = cortex.relu %h : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
