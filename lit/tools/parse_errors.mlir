// Malformed input: one `file:line:col: error:` line with the source line and
// a caret under the culprit, exit status 1, no Python traceback.
// RUN: not cortex-opt %s --split-input-file 2>&1 | filecheck %s
// RUN: not cortex-opt %s --split-input-file 2>&1 | not grep Traceback

func.func @unknown_op() {
  %0 = cortex.nope : f32
  func.return
}
// CHECK: parse_errors.mlir:[[# @LINE - 3]]:8: error: unknown operation 'cortex.nope' (the 'cortex' dialect has no such op)
// CHECK-NEXT: {{^}}  %0 = cortex.nope : f32
// CHECK-NEXT: {{^}}       ^~~~~~~~~~~

// -----

func.func @undefined_value(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = cortex.add %a, %undefined : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
// CHECK: parse_errors.mlir:[[# @LINE - 3]]:23: error: use of undeclared SSA value name '%undefined'

// -----

func.func @bad_type(%a: tensor<4xfloat>) {
  func.return
}
// CHECK: parse_errors.mlir:[[# @LINE - 3]]:34: error: Expected shape type.

// -----

func.func @type_disagrees_with_definition(%a: tensor<4xf32>) {
  %0 = cortex.neg %a : tensor<5xf32> -> tensor<5xf32>
  func.return
}
// CHECK: parse_errors.mlir:[[# @LINE - 3]]:19: error: operand is used with type tensor<5xf32>, but has been previously used or defined with type tensor<4xf32>
// CHECK: parse_errors.mlir:[[# @LINE - 5]]:43: note: prior use here
// CHECK-NEXT: func.func @type_disagrees_with_definition(%a: tensor<4xf32>) {

// -----

func.func @property_of_wrong_kind(%g: tensor<64x64xf32>) {
  %m = cortex.center_crop %g {block = "big"} : tensor<64x64xf32> -> tensor<2x2xf32>
  func.return
}
// CHECK: parse_errors.mlir:[[# @LINE - 3]]:8: error: 'cortex.center_crop' op property 'block' must be an i64 integer, e.g. `16 : i64`; got `"big"`

// -----

this is not MLIR
// CHECK: parse_errors.mlir:[[# @LINE - 1]]:1: error: unknown operation 'this'

// -----

// A chunk that parses is still printed, between the ones that do not.
func.func @fine() {
  func.return
}
// CHECK-NOT: error
