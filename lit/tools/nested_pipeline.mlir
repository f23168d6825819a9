// Pass pipelines as mlir-opt users write them: MLIR's anchors (builtin.module, func.func, any) nest, and
// every pass runs on the whole module, so the anchored pipeline prints what the plain one prints.
// RUN: cortex-opt %s -p canonicalize > %t.plain
// RUN: cortex-opt %s -p 'builtin.module(func.func(canonicalize))' > %t.nested
// RUN: diff %t.plain %t.nested
// RUN: cortex-opt %s --pass-pipeline='builtin.module(func.func(canonicalize))' | diff %t.plain -
// RUN: cortex-opt %s --pass-pipeline 'builtin.module( func.func(cse, canonicalize) , any(cse) )' | filecheck %s
// RUN: cortex-opt %s -p 'builtin.module()' | filecheck %s --check-prefix=EMPTY
// Wrong anchors and unbalanced parentheses are located, with a suggestion:
// RUN: not cortex-opt %s -p 'builtin.module(func.func(canonicalize)' 2>&1 | filecheck %s --check-prefix=OPEN
// RUN: not cortex-opt %s -p 'builtin.module(func.fun(cse))' 2>&1 | filecheck %s --check-prefix=ANCHOR
// RUN: not cortex-opt %s -p 'func.func(builtin.module(cse))' 2>&1 | filecheck %s --check-prefix=NESTING
// RUN: not cortex-opt %s -p 'builtin.module(cse canonicalize)' 2>&1 | filecheck %s --check-prefix=COMMA
// The pipeline is given once: two pipeline flags are refused, not one silently dropped.
// RUN: not cortex-opt %s --pass-pipeline='builtin.module(canonicalize)' -p cse 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not cortex-opt %s -p cse -p canonicalize 2>&1 | filecheck %s --check-prefix=TWICE
// RUN: not cortex-opt %s -p cse --canonicalize 2>&1 | filecheck %s --check-prefix=TWICE

func.func @fold() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}

// CHECK:      func.func @fold() -> i32 {
// CHECK-NEXT:   %c = arith.constant 3 : i32
// CHECK-NEXT:   func.return %c : i32
// EMPTY:        %c = arith.addi %a, %b : i32
// OPEN:       <pass-pipeline>:1:1: error: invalid pass pipeline: 'builtin.module(' is never closed
// ANCHOR:     <pass-pipeline>:1:16: error: invalid pass pipeline: cannot anchor passes on 'func.fun'; did you mean 'func.func'?
// ANCHOR-NEXT: {{^}}builtin.module(func.fun(cse))
// ANCHOR-NEXT: {{^}}               ^
// NESTING:    error: invalid pass pipeline: 'builtin.module(...)' cannot be nested in 'func.func(...)'
// COMMA:      <pass-pipeline>:1:19: error: invalid pass pipeline: Expected a comma or ')' closing 'builtin.module(' here
// TWICE:      cortex-opt: error: the pass pipeline is given 2 times
// TWICE-SAME: give it once
