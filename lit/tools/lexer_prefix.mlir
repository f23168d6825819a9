// A `%`, `^`, `#` or `!` with no name after it: the lexer says what it expected (xDSL's own
// message left its `{first_char}` placeholder unfilled).
// RUN: not cortex-opt %s 2>&1 | filecheck %s

func.func @f() {
  ^ bad
  func.return
}
// CHECK: lexer_prefix.mlir:6:3: error: expected a block label (such as ^bb0) after '^'
// CHECK-NOT: first_char
