// Rewrites exact only for finite (or positive) inputs fire only under
// cortex-canonicalize{fast-math=true}: never under canonicalize, nor under
// cortex-canonicalize without the option.
// RUN: cortex-opt %s -p canonicalize | filecheck %s --check-prefix=EXACT
// RUN: cortex-opt %s -p cortex-canonicalize | filecheck %s --check-prefix=EXACT
// RUN: cortex-opt %s -p 'cortex-canonicalize{fast-math=false}' | filecheck %s --check-prefix=EXACT
// RUN: cortex-opt %s -p 'cortex-canonicalize{fast-math=true}' | filecheck %s --check-prefix=FAST

// EXACT-LABEL: func.func @fast_math(
// EXACT:         cortex.mul
// EXACT:         cortex.mul
// EXACT:         cortex.div
// EXACT:         cortex.log
// EXACT:         cortex.exp
// EXACT:         func.return

// FAST-LABEL: func.func @fast_math(
// FAST-SAME:    %[[X:.*]]: tensor<2x3xf32>)
// FAST-NOT:     cortex.mul
// FAST-NOT:     cortex.div
// FAST-NOT:     cortex.exp
// FAST-NOT:     cortex.log
// FAST:         %[[A:.*]] = cortex.constant dense<0.000000e+00> : tensor<2x3xf32>
// FAST:         %[[B:.*]] = cortex.constant dense<0.000000e+00> : tensor<2x3xf32>
// FAST:         %[[C:.*]] = cortex.constant dense<1.000000e+00> : tensor<2x3xf32>
// FAST:         func.return %[[A]], %[[B]], %[[C]], %[[X]]
func.func @fast_math(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = cortex.constant dense<0.0> : tensor<f32>
  %a = cortex.mul %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %b = cortex.mul %zero, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = cortex.div %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = cortex.log %x : tensor<2x3xf32> -> tensor<2x3xf32>
  %d = cortex.exp %l : tensor<2x3xf32> -> tensor<2x3xf32>
  func.return %a, %b, %c, %d : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// Even with fast-math, log(exp(x)) and x / y are left alone.
// FAST-LABEL: func.func @not_fast_math(
// FAST:         cortex.exp
// FAST:         cortex.log
// FAST:         cortex.div
func.func @not_fast_math(%x: tensor<3xf32>, %y: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %e = cortex.exp %x : tensor<3xf32> -> tensor<3xf32>
  %l = cortex.log %e : tensor<3xf32> -> tensor<3xf32>
  %q = cortex.div %x, %y : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %l, %q : tensor<3xf32>, tensor<3xf32>
}
