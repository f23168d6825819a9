// One case per verifier rule of the generic tensor ops (dialects/tensor_ops.py
// and the shape rules of dialects/shapes.py).
// RUN: cortex-opt %s --split-input-file --verify-diagnostics

func.func @constant_result_contradicts_value() {
  // expected-error@+1 {{'cortex.constant' op result #0 has type tensor<3xf32>, but the operands imply tensor<2xf32>}}
  %c = "cortex.constant"() <{value = dense<1.0> : tensor<2xf32>}> : () -> tensor<3xf32>
  func.return
}

// -----

func.func @constant_not_dense() {
  // expected-error@+1 {{cortex.constant expects a dense<...> tensor attribute, got 1.000000e+00 : f32}}
  %c = cortex.constant 1.0 : f32
  func.return
}

// -----

func.func @add_does_not_broadcast(%a: tensor<4xf32>, %b: tensor<5xf32>) {
  // expected-error@+1 {{'cortex.add' op shapes 4 and 5 do not broadcast}}
  %r = cortex.add %a, %b : (tensor<4xf32>, tensor<5xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @mul_does_not_broadcast_batch(%a: tensor<2x3x4xf32>, %b: tensor<3x3x4xf32>) {
  // expected-error@+1 {{'cortex.mul' op shapes 2x3x4 and 3x3x4 do not broadcast}}
  %r = cortex.mul %a, %b : (tensor<2x3x4xf32>, tensor<3x3x4xf32>) -> tensor<2x3x4xf32>
  func.return
}

// -----

func.func @sub_element_types_differ(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error@+1 {{'cortex.sub' op operands must share one element type}}
  %r = cortex.sub %a, %b : (tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  func.return
}

// -----

func.func @div_not_float(%a: tensor<4xi32>, %b: tensor<4xi32>) {
  // expected-error@+1 {{'cortex.div' op operand #0 must have a float element type, got tensor<4xi32>}}
  %r = cortex.div %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}

// -----

func.func @pow_result_contradicts_inferred(%a: tensor<2x1xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'cortex.pow' op result #0 has type tensor<2x1xf32>, but the operands imply tensor<2x3xf32>}}
  %r = cortex.pow %a, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x1xf32>
  func.return
}

// -----

func.func @add_result_element_contradicts(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.add' op result #0 has type tensor<4xf16>, but the operands imply tensor<4xf32>}}
  %r = cortex.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf16>
  func.return
}

// -----

func.func @unary_not_float(%a: tensor<4xi32>) {
  // expected-error@+1 {{'cortex.exp' op the operand must have a float element type, got tensor<4xi32>}}
  %r = cortex.exp %a : tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

func.func @unary_result_contradicts_inferred(%a: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.relu' op result #0 has type tensor<5xf32>, but the operands imply tensor<4xf32>}}
  %r = cortex.relu %a : tensor<4xf32> -> tensor<5xf32>
  func.return
}

// -----

func.func @gelu_unknown_approximation(%a: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %r = cortex.gelu %a {approximate = "fast"} : tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

func.func @matmul_k_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error@+1 {{'cortex.matmul' op matmul contraction mismatch: 2x3 has K=3, 4x5 has K=4}}
  %r = cortex.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @matmul_rank_below_2(%a: tensor<3xf32>, %b: tensor<3x5xf32>) {
  // expected-error@+1 {{'cortex.matmul' op matmul operands must have rank >= 2, got 3 and 3x5}}
  %r = cortex.matmul %a, %b : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<5xf32>
  func.return
}

// -----

func.func @matmul_batch_does_not_broadcast(%a: tensor<2x2x3xf32>, %b: tensor<3x3x5xf32>) {
  // expected-error@+1 {{'cortex.matmul' op shapes 2 and 3 do not broadcast}}
  %r = cortex.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x5xf32>) -> tensor<2x2x5xf32>
  func.return
}

// -----

func.func @matmul_result_contradicts_inferred(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error@+1 {{result #0 has type tensor<5x2xf32>, but the operands imply tensor<2x5xf32>}}
  %r = cortex.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<5x2xf32>
  func.return
}

// -----

func.func @linear_weight_not_2d(%x: tensor<2x3xf32>, %w: tensor<3xf32>) {
  // expected-error@+1 {{'cortex.linear' op linear expects x of rank >= 1 and a 2-D weight, got 2x3 and 3}}
  %r = cortex.linear %x, %w : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  func.return
}

// -----

func.func @linear_features_mismatch(%x: tensor<2x3xf32>, %w: tensor<5x4xf32>) {
  // expected-error@+1 {{'cortex.linear' op linear: x has 3 features but the weight expects 4}}
  %r = cortex.linear %x, %w : (tensor<2x3xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @linear_bias_shape(%x: tensor<2x3xf32>, %w: tensor<5x3xf32>, %b: tensor<3xf32>) {
  // expected-error@+1 {{'cortex.linear' op linear: bias must have shape 5, got 3}}
  %r = cortex.linear %x, %w, %b : (tensor<2x3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @linear_element_types_differ(%x: tensor<2x3xf32>, %w: tensor<5x3xf64>) {
  // expected-error@+1 {{'cortex.linear' op operands must share one element type}}
  %r = cortex.linear %x, %w : (tensor<2x3xf32>, tensor<5x3xf64>) -> tensor<2x5xf32>
  func.return
}

// -----

func.func @batch_norm_rank_below_2(%x: tensor<4xf32>, %p: tensor<4xf32>) {
  // expected-error@+1 {{'cortex.batch_norm' op batch_norm expects an input of rank >= 2 (N x C x ...), got 4}}
  %r = cortex.batch_norm %x, %p, %p, %p, %p : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return
}

// -----

func.func @batch_norm_parameter_not_per_channel(%x: tensor<1x2x4x4xf32>, %p: tensor<2xf32>, %v: tensor<3xf32>) {
  // expected-error@+1 {{'cortex.batch_norm' op batch_norm: every parameter must have shape 2, got 3}}
  %r = cortex.batch_norm %x, %p, %p, %p, %v : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @batch_norm_negative_epsilon(%x: tensor<1x2x4x4xf32>, %p: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.batch_norm' op epsilon must not be negative, got -0.5}}
  %r = cortex.batch_norm %x, %p, %p, %p, %p {epsilon = -0.5 : f32} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @conv2d_channels_mismatch(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op conv2d: input has 3 channels but the weight expects 2}}
  %r = cortex.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_not_4d(%x: tensor<3x8x8xf32>, %w: tensor<4x3x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op conv2d expects a 4-D input (NCHW) and a 4-D weight (OIHW), got 3x8x8 and 4x3x3x3}}
  %r = cortex.conv2d %x, %w : (tensor<3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_stride_zero(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op strides must be two positive integers, got [0, 1]}}
  %r = cortex.conv2d %x, %w {strides = array<i64: 0, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_strides_count(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{strides must be two positive integers, got [1, 1, 1]}}
  %r = cortex.conv2d %x, %w {strides = array<i64: 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_pads_negative(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op pads must be four non-negative integers (top, left, bottom, right), got [0, -1, 0, 0]}}
  %r = cortex.conv2d %x, %w {pads = array<i64: 0, -1, 0, 0>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_pads_count(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{pads must be four non-negative integers (top, left, bottom, right), got [1, 1]}}
  %r = cortex.conv2d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @conv2d_dilation_zero(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op dilations must be two positive integers, got [1, 0]}}
  %r = cortex.conv2d %x, %w {dilations = array<i64: 1, 0>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_bias_shape(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<2xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op conv2d: bias must have shape 4, got 2}}
  %r = cortex.conv2d %x, %w, %b : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<2xf32>) -> tensor<1x4x6x6xf32>
  func.return
}

// -----

func.func @conv2d_window_does_not_fit(%x: tensor<1x2x4x4xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op window of extent 5 does not fit in a padded input of 4}}
  %r = cortex.conv2d %x, %w {dilations = array<i64: 2, 2>} : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x1x1xf32>
  func.return
}

// -----

func.func @conv2d_result_contradicts_inferred(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error@+1 {{'cortex.conv2d' op result #0 has type tensor<1x4x8x8xf32>, but the operands imply tensor<1x4x4x4xf32>}}
  %r = cortex.conv2d %x, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x8x8xf32>
  func.return
}

// -----

func.func @avg_pool_not_4d(%x: tensor<2x8x8xf32>) {
  // expected-error@+1 {{'cortex.avg_pool' op pooling expects a 4-D input (NCHW), got 2x8x8}}
  %r = cortex.avg_pool %x {kernel_shape = array<i64: 2, 2>} : tensor<2x8x8xf32> -> tensor<2x7x7xf32>
  func.return
}

// -----

func.func @avg_pool_kernel_not_positive(%x: tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'cortex.avg_pool' op kernel_shape must be two positive integers, got [0, 2]}}
  %r = cortex.avg_pool %x {kernel_shape = array<i64: 0, 2>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x7xf32>
  func.return
}

// -----

func.func @avg_pool_kernel_missing(%x: tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'cortex.avg_pool' op property 'kernel_shape' expected}}
  %r = "cortex.avg_pool"(%x) : (tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  func.return
}

// -----

func.func @max_pool_strides_not_positive(%x: tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'cortex.max_pool' op strides must be two positive integers, got [2, -2]}}
  %r = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, -2>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  func.return
}

// -----

func.func @max_pool_pads_count(%x: tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'cortex.max_pool' op pads must be four non-negative integers (top, left, bottom, right), got [1]}}
  %r = cortex.max_pool %x {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  func.return
}

// -----

func.func @max_pool_window_does_not_fit(%x: tensor<1x2x2x2xf32>) {
  // expected-error@+1 {{'cortex.max_pool' op window of extent 3 does not fit in a padded input of 2}}
  %r = cortex.max_pool %x {kernel_shape = array<i64: 3, 3>} : tensor<1x2x2x2xf32> -> tensor<1x2x1x1xf32>
  func.return
}

// -----

func.func @max_pool_result_contradicts_inferred(%x: tensor<1x2x8x8xf32>) {
  // expected-error@+1 {{'cortex.max_pool' op result #0 has type tensor<1x2x8x8xf32>, but the operands imply tensor<1x2x4x4xf32>}}
  %r = cortex.max_pool %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  func.return
}

// -----

func.func @transpose_perm_repeats_an_axis(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.transpose' op perm [0, 0] is not a permutation of the 2 dimensions of 2x3}}
  %r = cortex.transpose %x {perm = array<i64: 0, 0>} : tensor<2x3xf32> -> tensor<2x2xf32>
  func.return
}

// -----

func.func @transpose_perm_wrong_length(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{perm [1, 0, 2] is not a permutation of the 2 dimensions of 2x3}}
  %r = cortex.transpose %x {perm = array<i64: 1, 0, 2>} : tensor<2x3xf32> -> tensor<3x2xf32>
  func.return
}

// -----

func.func @transpose_result_contradicts_inferred(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.transpose' op result #0 has type tensor<2x3xf32>, but the operands imply tensor<3x2xf32>}}
  %r = cortex.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reshape_changes_element_count(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reshape' op reshape from 2x3 (6 elements) to 7 (7 elements) changes the element count}}
  %r = cortex.reshape %x : tensor<2x3xf32> -> tensor<7xf32>
  func.return
}

// -----

func.func @reshape_changes_element_type(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reshape' op reshape must keep the element type f32, got tensor<6xf16>}}
  %r = cortex.reshape %x : tensor<2x3xf32> -> tensor<6xf16>
  func.return
}

// -----

func.func @softmax_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.softmax' op axis 2 is out of range for rank 2}}
  %r = cortex.softmax %x {axis = 2 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @softmax_negative_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{axis -3 is out of range for rank 2}}
  %r = cortex.softmax %x {axis = -3 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_axes_duplicate(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reduce_sum' op axes [1, -1] name a dimension twice}}
  %r = cortex.reduce_sum %x {axes = array<i64: 1, -1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @reduce_axis_out_of_range(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reduce_mean' op axis 2 is out of range for rank 2}}
  %r = cortex.reduce_mean %x {axes = array<i64: 2>} : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return
}

// -----

func.func @reduce_keepdims_not_boolean(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reduce_max' op keepdims must be 0 or 1, got 2}}
  %r = cortex.reduce_max %x {keepdims = 2 : i64} : tensor<2x3xf32> -> tensor<1x1xf32>
  func.return
}

// -----

func.func @reduce_result_contradicts_keepdims(%x: tensor<2x3xf32>) {
  // expected-error@+1 {{'cortex.reduce_sum' op result #0 has type tensor<2x1xf32>, but the operands imply tensor<2xf32>}}
  %r = cortex.reduce_sum %x {axes = array<i64: 1>, keepdims = 0 : i64} : tensor<2x3xf32> -> tensor<2x1xf32>
  func.return
}

// -----

func.func @reduce_not_float(%x: tensor<2x3xi32>) {
  // expected-error@+1 {{'cortex.reduce_sum' op x must have a float element type, got tensor<2x3xi32>}}
  %r = cortex.reduce_sum %x : tensor<2x3xi32> -> tensor<1x1xi32>
  func.return
}
