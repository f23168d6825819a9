// Every generic tensor op round-trips: the custom form re-parses to itself,
// and the generic form (properties in <{...}>, defaults spelled out)
// re-parses to the same IR.
// RUN: cortex-opt %s > %t.custom
// RUN: filecheck %s --input-file %t.custom
// RUN: cortex-opt %t.custom | diff %t.custom -
// RUN: cortex-opt %s --print-op-generic > %t.generic
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic
// RUN: cortex-opt %t.generic | diff %t.custom -

func.func @tensor_ops(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %img: tensor<1x2x8x8xf32>, %k: tensor<4x2x3x3xf32>, %cvec: tensor<2xf32>, %kb: tensor<4xf32>, %wt: tensor<5x3xf32>, %b5: tensor<5xf32>, %m35: tensor<3x5xf32>) -> tensor<2x3xf32> {
  %c = cortex.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  %s = cortex.constant dense<0.5> : tensor<f32>
  %add = cortex.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %sub = cortex.sub %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %mul = cortex.mul %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %div = cortex.div %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %pow = cortex.pow %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %neg = cortex.neg %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %exp = cortex.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %log = cortex.log %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %sqrt = cortex.sqrt %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %abs = cortex.abs %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %relu = cortex.relu %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %sig = cortex.sigmoid %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %tanh = cortex.tanh %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %gelu = cortex.gelu %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %gelu_t = cortex.gelu %x {approximate = "tanh"} : tensor<2x3xf32> -> tensor<2x3xf32>
  %mm = cortex.matmul %x, %m35 : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  %lin = cortex.linear %x, %wt, %b5 : (tensor<2x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %lin_nb = cortex.linear %x, %wt : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<2x5xf32>
  %bn = cortex.batch_norm %img, %cvec, %cvec, %cvec, %cvec {epsilon = 1.0e-3 : f32} : (tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
  %conv = cortex.conv2d %img, %k, %kb {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %conv_nb = cortex.conv2d %img, %k : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  %avg = cortex.avg_pool %img {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
  %max = cortex.max_pool %img {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
  %tr = cortex.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  %rs = cortex.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %sm = cortex.softmax %x {axis = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
  %rsum = cortex.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
  %rmean = cortex.reduce_mean %x {axes = array<i64: 0>, keepdims = 0 : i64} : tensor<2x3xf32> -> tensor<3xf32>
  %rmax = cortex.reduce_max %x : tensor<2x3xf32> -> tensor<1x1xf32>
  func.return %add : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @tensor_ops
// CHECK-NEXT:    %c = cortex.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>
// CHECK-NEXT:    %s = cortex.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %add = cortex.add %x, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %sub = cortex.sub %x, %c : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %mul = cortex.mul %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %div = cortex.div %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %pow = cortex.pow %x, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %neg = cortex.neg %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %exp = cortex.exp %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %log = cortex.log %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %sqrt = cortex.sqrt %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %abs = cortex.abs %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %relu = cortex.relu %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %sig = cortex.sigmoid %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %tanh = cortex.tanh %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %gelu = cortex.gelu %x : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %gelu_t = cortex.gelu %x {approximate = "tanh"} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %mm = cortex.matmul %x, %m35 : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %lin = cortex.linear %x, %wt, %b5 : (tensor<2x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %lin_nb = cortex.linear %x, %wt : (tensor<2x3xf32>, tensor<5x3xf32>) -> tensor<2x5xf32>
// CHECK-NEXT:    %bn = cortex.batch_norm %img, %cvec, %cvec, %cvec, %cvec {epsilon = 1.000000e-03 : f32} : (tensor<1x2x8x8xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %conv = cortex.conv2d %img, %k, %kb {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT:    %conv_nb = cortex.conv2d %img, %k : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT:    %avg = cortex.avg_pool %img {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} : tensor<1x2x8x8xf32> -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %max = cortex.max_pool %img {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : tensor<1x2x8x8xf32> -> tensor<1x2x8x8xf32>
// CHECK-NEXT:    %tr = cortex.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
// CHECK-NEXT:    %rs = cortex.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
// CHECK-NEXT:    %sm = cortex.softmax %x {axis = 0 : i64} : tensor<2x3xf32> -> tensor<2x3xf32>
// CHECK-NEXT:    %rsum = cortex.reduce_sum %x {axes = array<i64: 1>} : tensor<2x3xf32> -> tensor<2x1xf32>
// CHECK-NEXT:    %rmean = cortex.reduce_mean %x {axes = array<i64: 0>, keepdims = 0 : i64} : tensor<2x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %rmax = cortex.reduce_max %x : tensor<2x3xf32> -> tensor<1x1xf32>
// CHECK-NEXT:    func.return %add : tensor<2x3xf32>

// GENERIC:      %c = "cortex.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]> : tensor<3xf32>}>
// GENERIC-NEXT: %s = "cortex.constant"() <{value = dense<5.000000e-01> : tensor<f32>}>
// GENERIC-NEXT: %add = "cortex.add"(%x, %y)
// GENERIC-NEXT: %sub = "cortex.sub"(%x, %c)
// GENERIC-NEXT: %mul = "cortex.mul"(%x, %s)
// GENERIC-NEXT: %div = "cortex.div"(%x, %x)
// GENERIC-NEXT: %pow = "cortex.pow"(%x, %s)
// GENERIC-NEXT: %neg = "cortex.neg"(%x)
// GENERIC-NEXT: %exp = "cortex.exp"(%x)
// GENERIC-NEXT: %log = "cortex.log"(%x)
// GENERIC-NEXT: %sqrt = "cortex.sqrt"(%x)
// GENERIC-NEXT: %abs = "cortex.abs"(%x)
// GENERIC-NEXT: %relu = "cortex.relu"(%x)
// GENERIC-NEXT: %sig = "cortex.sigmoid"(%x)
// GENERIC-NEXT: %tanh = "cortex.tanh"(%x)
// GENERIC-NEXT: %gelu = "cortex.gelu"(%x) <{approximate = "none"}>
// GENERIC-NEXT: %gelu_t = "cortex.gelu"(%x) <{approximate = "tanh"}>
// GENERIC-NEXT: %mm = "cortex.matmul"(%x, %m35)
// GENERIC-NEXT: %lin = "cortex.linear"(%x, %wt, %b5)
// GENERIC-NEXT: %lin_nb = "cortex.linear"(%x, %wt)
// GENERIC-NEXT: %bn = "cortex.batch_norm"(%img, %cvec, %cvec, %cvec, %cvec) <{epsilon = 1.000000e-03 : f32}>
// GENERIC-NEXT: %conv = "cortex.conv2d"(%img, %k, %kb) <{strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 1 : i64}>
// GENERIC-NEXT: %conv_nb = "cortex.conv2d"(%img, %k) <{strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64}>
// GENERIC-NEXT: %avg = "cortex.avg_pool"(%img) <{kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>}>
// GENERIC-NEXT: %max = "cortex.max_pool"(%img) <{kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>}>
// GENERIC-NEXT: %tr = "cortex.transpose"(%x) <{perm = array<i64: 1, 0>}>
// GENERIC-NEXT: %rs = "cortex.reshape"(%x)
// GENERIC-NEXT: %sm = "cortex.softmax"(%x) <{axis = 0 : i64}>
// GENERIC-NEXT: %rsum = "cortex.reduce_sum"(%x) <{axes = array<i64: 1>, keepdims = 1 : i64}>
// GENERIC-NEXT: %rmean = "cortex.reduce_mean"(%x) <{axes = array<i64: 0>, keepdims = 0 : i64}>
// GENERIC-NEXT: %rmax = "cortex.reduce_max"(%x) <{axes = array<i64>, keepdims = 1 : i64}>
