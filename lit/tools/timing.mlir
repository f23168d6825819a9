// --mlir-timing reports, on stderr, the wall time of each stage like MLIR's
// -mlir-timing: the start-up (from the process start: the interpreter and the imports
// count), parsing, verification, every pass of the pipeline (in order,
// a repeated pass on its own row), output, and the total.
// RUN: cortex-opt %s -p cse,canonicalize,cse --mlir-timing 2> %t.timing | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --input-file %t.timing

func.func @f() -> i32 {
  %a = arith.constant 1 : i32
  func.return %a : i32
}

// OUT: func.func @f

// CHECK:      ... Execution time report ...
// CHECK:      Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK:      ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Start-up (interpreter, imports, registration, pass set-up)
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Parser
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Verifier
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  cse
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  canonicalize
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  cse
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  Output
// CHECK:      {{[0-9]+\.[0-9]+}} (100.0%)  Total
