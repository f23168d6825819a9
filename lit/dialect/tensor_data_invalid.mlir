// Each shape rule of max/min, concat, pad, slice and grouped conv2d is a verifier error.
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @max_no_broadcast(%x: tensor<2x3xf32>, %y: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.max' op}}
  %r = cortex.max %x, %y : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return
}

// -----

func.func @concat_mismatch(%x: tensor<2x3xf32>, %y: tensor<2x4xf32>) {
  // expected-error@+1 {{'cortex.concat' op concat operands differ in dimension 1: 2x3, 2x4}}
  %r = cortex.concat %x, %y {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @concat_axis(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.concat' op axis 2 is out of range for rank 2}}
  %r = cortex.concat %x, %x {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return
}

// -----

func.func @pad_negative(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.pad' op pads must be 4 non-negative integers for 2x3, got [0, -1, 0, 0]}}
  %r = cortex.pad %x {pads = array<i64: 0, -1, 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @slice_past_the_end(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.slice' op slice of 2 from 1 every 2 leaves a dimension of 3 (2x3)}}
  %r = cortex.slice %x {starts = array<i64: 0, 1>, sizes = array<i64: 2, 2>, steps = array<i64: 1, 2>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @grouped_conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<4x1x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op conv2d: input has 4 channels but the weight expects 1 × group 2}}
  %r = cortex.conv2d %x, %w {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @grouped_conv_filters(%x: tensor<1x4x8x8xf32>, %w: tensor<3x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op conv2d: group 2 must be positive and divide the 3 output channels}}
  %r = cortex.conv2d %x, %w {group = 2 : i64} : (tensor<1x4x8x8xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x6x6xf32>
  func.return
}
