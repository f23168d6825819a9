// cortex-recognize-gelu: 0.5·x·(1 + tanh(0.7978845608·(x + 0.044715·x·x·x)))
// spelled out in single ops becomes one cortex.gelu {approximate = "tanh"}.
// RUN: cortex-opt %s -p cortex-recognize-gelu | filecheck %s
// RUN: cortex-opt %examples/gelu_tanh.mlir -p cortex-recognize-gelu | filecheck %s --check-prefix=EXAMPLE

// EXAMPLE-LABEL: func.func @gelu_tanh(
// EXAMPLE-SAME:      %[[X:.*]]: tensor<4x8xf32>
// EXAMPLE-NEXT:    %[[G:.*]] = cortex.gelu %[[X]] {approximate = "tanh"} : tensor<4x8xf32> -> tensor<4x8xf32>
// EXAMPLE-NEXT:    func.return %[[G]]

// Every commutative op with its operands swapped, the cube as k·((x·x)·x),
// the 0.5 applied last, and constants within 1e-6 of the textbook values.
// CHECK-LABEL: func.func @swapped(
// CHECK-SAME:      %[[X:.*]]: tensor<4xf32>
// CHECK-NEXT:    %[[G:.*]] = cortex.gelu %[[X]] {approximate = "tanh"}
// CHECK-NEXT:    func.return %[[G]]
func.func @swapped(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = cortex.constant dense<0.0447155> : tensor<f32>
  %xx = cortex.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %x3 = cortex.mul %x, %xx : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %kx3 = cortex.mul %x3, %k : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %inner = cortex.add %kx3, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = cortex.constant dense<0.797884561> : tensor<f32>
  %arg = cortex.mul %inner, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %th = cortex.tanh %arg : tensor<4xf32> -> tensor<4xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %one_plus = cortex.add %th, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %xo = cortex.mul %one_plus, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %half = cortex.constant dense<0.5> : tensor<f32>
  %out = cortex.mul %xo, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %out : tensor<4xf32>
}

// Negative: a near-miss constant (0.7978 is 8.8e-5 off) is another function.
// CHECK-LABEL: func.func @near_miss(
// CHECK-NOT:     cortex.gelu
// CHECK:         cortex.tanh
// CHECK-NOT:     cortex.gelu
// CHECK:         func.return
func.func @near_miss(%x: tensor<4xf32>) -> tensor<4xf32> {
  %half = cortex.constant dense<0.5> : tensor<f32>
  %x_half = cortex.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %k = cortex.constant dense<0.044715> : tensor<f32>
  %kx = cortex.mul %k, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %kx2 = cortex.mul %kx, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %kx3 = cortex.mul %kx2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = cortex.add %x, %kx3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = cortex.constant dense<0.7978> : tensor<f32>
  %arg = cortex.mul %c, %inner : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %th = cortex.tanh %arg : tensor<4xf32> -> tensor<4xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %one_plus = cortex.add %one, %th : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %out = cortex.mul %x_half, %one_plus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %out : tensor<4xf32>
}

// Negative: the cube uses a different value (%y) in one place: not GELU of x.
// CHECK-LABEL: func.func @other_value(
// CHECK-NOT:     cortex.gelu
// CHECK:         func.return
func.func @other_value(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %half = cortex.constant dense<0.5> : tensor<f32>
  %x_half = cortex.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %k = cortex.constant dense<0.044715> : tensor<f32>
  %kx = cortex.mul %k, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %kx2 = cortex.mul %kx, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %kx3 = cortex.mul %kx2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = cortex.add %x, %kx3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = cortex.constant dense<0.7978845608> : tensor<f32>
  %arg = cortex.mul %c, %inner : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %th = cortex.tanh %arg : tensor<4xf32> -> tensor<4xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %one_plus = cortex.add %one, %th : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %out = cortex.mul %x_half, %one_plus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %out : tensor<4xf32>
}

// Negative: the tanh is also returned, so the chain must stay (no rewrite).
// CHECK-LABEL: func.func @tanh_used_twice(
// CHECK-NOT:     cortex.gelu
// CHECK:         func.return
func.func @tanh_used_twice(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %half = cortex.constant dense<0.5> : tensor<f32>
  %x_half = cortex.mul %half, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %k = cortex.constant dense<0.044715> : tensor<f32>
  %kx = cortex.mul %k, %x : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %kx2 = cortex.mul %kx, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %kx3 = cortex.mul %kx2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %inner = cortex.add %x, %kx3 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = cortex.constant dense<0.7978845608> : tensor<f32>
  %arg = cortex.mul %c, %inner : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %th = cortex.tanh %arg : tensor<4xf32> -> tensor<4xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %one_plus = cortex.add %one, %th : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %out = cortex.mul %x_half, %one_plus : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %out, %th : tensor<4xf32>, tensor<4xf32>
}
