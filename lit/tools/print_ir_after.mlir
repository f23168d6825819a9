// --mlir-print-ir-after-all dumps the IR to stderr after every pass;
// --mlir-print-ir-after-change only after the passes that changed it. The
// output on stdout is unaffected.
// RUN: cortex-opt %s -p cse,canonicalize,cse --mlir-print-ir-after-all 2> %t.all | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --check-prefix=ALL --input-file %t.all
// RUN: cortex-opt %s -p cse,canonicalize,cse --mlir-print-ir-after-change 2> %t.change > /dev/null
// RUN: filecheck %s --check-prefix=CHANGE --input-file %t.change
// RUN: cortex-opt %s -p cse,canonicalize,cse --mlir-print-ir-after-change --print-op-generic 2> %t.generic > /dev/null
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic

func.func @fold() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}

// OUT:      func.func @fold() -> i32 {
// OUT-NEXT:   %c = arith.constant 3 : i32
// OUT-NEXT:   func.return %c : i32

// ALL:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// ALL:        %c = arith.addi %a, %b : i32
// ALL:      // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// ALL-NOT:    arith.addi
// ALL:        %c = arith.constant 3 : i32
// ALL:      // -----// IR Dump After CommonSubexpressionElimination (cse) //----- //
// ALL:        %c = arith.constant 3 : i32

// The first cse finds nothing to merge and the last one nothing left to do.
// CHANGE-NOT: IR Dump After CommonSubexpressionElimination
// CHANGE:     // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// CHANGE-NEXT: builtin.module {
// CHANGE:       %c = arith.constant 3 : i32
// CHANGE-NOT: IR Dump

// GENERIC: // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// GENERIC: "arith.constant"() <{value = 3 : i32}> : () -> i32
