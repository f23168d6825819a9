// mlir-opt's habits: single-dash long flags, --mlir-print-ir-before-all, --mlir-pass-statistics and
// --mlir-elide-elementsattrs-if-larger, printed in mlir-opt's own forms.
// RUN: cortex-opt -split-input-file -p=cse,canonicalize -mlir-print-ir-before-all %s 2> %t.before | filecheck %s --check-prefix=OUT
// RUN: filecheck %s --check-prefix=BEFORE --input-file %t.before
// RUN: cortex-opt -canonicalize %s | filecheck %s --check-prefix=OUT
// RUN: cortex-opt %s -p canonicalize --mlir-pass-statistics 2>&1 >/dev/null | filecheck %s --check-prefix=STATS
// RUN: cortex-opt %s --mlir-elide-elementsattrs-if-larger=2 | filecheck %s --check-prefix=ELIDED
// RUN: cortex-opt %s --mlir-elide-elementsattrs-if-larger=2 --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: cortex-opt %s -p canonicalize --mlir-print-ir-after-all --mlir-elide-elementsattrs-if-larger=2 2>&1 >/dev/null | filecheck %s --check-prefix=DUMP
// RUN: cortex-opt %s --mlir-elide-elementsattrs-if-larger=4 | filecheck %s --check-prefix=KEPT
// RUN: %mlir-opt %s --mlir-elide-elementsattrs-if-larger=2 | filecheck %s --check-prefix=ELIDED
// RUN: cortex-opt %s --mlir-elide-elementsattrs-if-larger=2 | %mlir-opt | filecheck %s --check-prefix=ELIDED
// RUN: cortex-opt --version | filecheck %s --check-prefix=VERSION

func.func @fold() -> tensor<4xf32> {
  %w = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %s = arith.constant dense<1.0> : tensor<4xf32>
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %c = arith.addi %a, %b : i32
  func.return %w : tensor<4xf32>
}

// OUT:         func.return
// OUT-NOT:     arith.addi
// BEFORE:      // -----// IR Dump Before CommonSubexpressionElimination (cse) //----- //
// BEFORE:        arith.addi
// BEFORE:      // -----// IR Dump Before CanonicalizePass (canonicalize) //----- //
// BEFORE:        func.return
// BEFORE-NOT:  IR Dump
// STATS:       ===-------------------------------------------------------------------------===
// STATS-NEXT:  ... Pass statistics report ...
// STATS-NEXT:  ===-------------------------------------------------------------------------===
// STATS-NEXT:  'builtin.module' Pipeline
// STATS-NEXT:    CanonicalizePass (canonicalize)
// STATS-NEXT:      (S)      4 ops-erased - Operations the pass erased
// STATS-NEXT:      (S)      0 ops-created - Operations the pass created
// STATS-NEXT:      (S)      4 ops-after - Operations in the module after the pass
// ELIDED:      arith.constant dense_resource<__elided__> : tensor<4xf32>
// ELIDED:      arith.constant dense<1.000000e+00> : tensor<4xf32>
// GENERIC:     "arith.constant"() <{value = dense_resource<__elided__> : tensor<4xf32>}> : () -> tensor<4xf32>
// DUMP:        // -----// IR Dump After CanonicalizePass (canonicalize) //----- //
// DUMP:          arith.constant dense_resource<__elided__> : tensor<4xf32>
// KEPT:        arith.constant dense<[1.000000e+00, 2.000000e+00, 3.000000e+00, 4.000000e+00]> : tensor<4xf32>
// VERSION:     cortex-opt {{[0-9]+\.[0-9]+}}
// VERSION-SAME: (xDSL
