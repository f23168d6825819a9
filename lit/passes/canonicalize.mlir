// Always-exact identities of the cortex dialect, under xDSL's canonicalize
// and under cortex-canonicalize without options (the same patterns).
// RUN: cortex-opt %s -p canonicalize | filecheck %s
// RUN: cortex-opt %s -p cortex-canonicalize | filecheck %s

// CHECK-LABEL: func.func @unit_operands(
// CHECK-SAME:    %[[X:.*]]: tensor<2x2xf32>)
// CHECK-NOT:     cortex.mul
// CHECK-NOT:     cortex.add
// CHECK-NOT:     cortex.sub
// CHECK-NOT:     cortex.div
// CHECK:         func.return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @unit_operands(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  // "1" need not be a splat: every element equal to 1 is enough.
  %ones = cortex.constant dense<[[1.0, 1.0], [1.0, 1.0]]> : tensor<2x2xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %zero = cortex.constant dense<0.0> : tensor<2x2xf32>
  %a = cortex.mul %x, %ones : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %b = cortex.mul %one, %x : (tensor<f32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %c = cortex.add %zero, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %d = cortex.sub %x, %zero : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %e = cortex.div %x, %one : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x2xf32>
  func.return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}

// Broadcasting changes the shape: x + zeros(4x4) with x: 4x1 is not x.
// Not identities either: 0 - x, 1 / x, x * (a constant that is not all ones).
// CHECK-LABEL: func.func @not_identities(
// CHECK:         cortex.add %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK:         cortex.sub %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<4x1xf32>)
// CHECK:         cortex.div %{{.*}}, %{{.*}} : (tensor<f32>, tensor<4x1xf32>)
// CHECK:         cortex.mul %{{.*}}, %{{.*}} : (tensor<4x1xf32>, tensor<4x1xf32>)
func.func @not_identities(%x: tensor<4x1xf32>) -> (tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) {
  %zeros = cortex.constant dense<0.0> : tensor<4x4xf32>
  %zcol = cortex.constant dense<0.0> : tensor<4x1xf32>
  %one = cortex.constant dense<1.0> : tensor<f32>
  %mixed = cortex.constant dense<[[1.0], [1.0], [2.0], [1.0]]> : tensor<4x1xf32>
  %a = cortex.add %x, %zeros : (tensor<4x1xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %b = cortex.sub %zcol, %x : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %c = cortex.div %one, %x : (tensor<f32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  %d = cortex.mul %x, %mixed : (tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>
  func.return %a, %b, %c, %d : tensor<4x4xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>
}

// x ** 2 → x · x; x ** 3 stays.
// CHECK-LABEL: func.func @square(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[SQ:.*]] = cortex.mul %[[X]], %[[X]] : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         %[[CUBE:.*]] = cortex.pow %[[X]], %{{.*}} : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK:         func.return %[[SQ]], %[[CUBE]]
func.func @square(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %two = cortex.constant dense<2.0> : tensor<f32>
  %three = cortex.constant dense<3.0> : tensor<f32>
  %a = cortex.pow %x, %two : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %b = cortex.pow %x, %three : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %a, %b : tensor<3xf32>, tensor<3xf32>
}

// relu is idempotent; relu(neg(relu(x))) is not relu(x).
// CHECK-LABEL: func.func @relu_relu(
// CHECK-SAME:    %[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = cortex.relu %[[X]]
// CHECK-NEXT:    %[[N:.*]] = cortex.neg %[[R]]
// CHECK-NEXT:    %[[R2:.*]] = cortex.relu %[[N]]
// CHECK-NEXT:    func.return %[[R]], %[[R2]]
func.func @relu_relu(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %a = cortex.relu %x : tensor<3xf32> -> tensor<3xf32>
  %b = cortex.relu %a : tensor<3xf32> -> tensor<3xf32>
  %c = cortex.relu %b : tensor<3xf32> -> tensor<3xf32>
  %n = cortex.neg %c : tensor<3xf32> -> tensor<3xf32>
  %d = cortex.relu %n : tensor<3xf32> -> tensor<3xf32>
  func.return %c, %d : tensor<3xf32>, tensor<3xf32>
}

// Two transposes compose into one ([1,2,0] twice is [2,0,1]), or vanish; so does one with the identity perm.
// CHECK-LABEL: func.func @transposes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x3x4xf32>, %[[Y:.*]]: tensor<5x6xf32>)
// CHECK:         %[[T:.*]] = cortex.transpose %[[X]] {perm = array<i64: 2, 0, 1>} : tensor<2x3x4xf32> -> tensor<4x2x3xf32>
// CHECK-NOT:     cortex.transpose
// CHECK:         func.return %[[T]], %[[Y]], %[[X]]
func.func @transposes(%x: tensor<2x3x4xf32>, %y: tensor<5x6xf32>) -> (tensor<4x2x3xf32>, tensor<5x6xf32>, tensor<2x3x4xf32>) {
  %a = cortex.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %b = cortex.transpose %a {perm = array<i64: 1, 2, 0>} : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  %c = cortex.transpose %y {perm = array<i64: 1, 0>} : tensor<5x6xf32> -> tensor<6x5xf32>
  %d = cortex.transpose %c {perm = array<i64: 1, 0>} : tensor<6x5xf32> -> tensor<5x6xf32>
  %e = cortex.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  func.return %b, %d, %e : tensor<4x2x3xf32>, tensor<5x6xf32>, tensor<2x3x4xf32>
}

// reshape(reshape(x)) is one reshape; back to x's own shape it is x.
// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME:    %[[X:.*]]: tensor<2x6xf32>)
// CHECK:         %[[R:.*]] = cortex.reshape %[[X]] : tensor<2x6xf32> -> tensor<12xf32>
// CHECK-NOT:     cortex.reshape
// CHECK:         func.return %[[R]], %[[X]]
func.func @reshapes(%x: tensor<2x6xf32>) -> (tensor<12xf32>, tensor<2x6xf32>) {
  %a = cortex.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %b = cortex.reshape %a : tensor<3x4xf32> -> tensor<12xf32>
  %c = cortex.reshape %x : tensor<2x6xf32> -> tensor<4x3xf32>
  %d = cortex.reshape %c : tensor<4x3xf32> -> tensor<2x6xf32>
  func.return %b, %d : tensor<12xf32>, tensor<2x6xf32>
}
