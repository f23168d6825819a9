// The flags whose engines live in cortex.passes (graph_view,
// translation_validation) are wired: --view-graph and --graph-diff replace
// the IR on stdout, --graph-dot writes a file (and keeps the IR),
// --verify-each-pass-semantics re-runs the reference interpreter after each
// pass and stays quiet when no pass changes the results.
// RUN: cortex-opt %s --view-graph | filecheck %s --check-prefix=TABLE
// RUN: cortex-opt %s -p canonicalize,cse --graph-diff | filecheck %s --check-prefix=DIFF
// RUN: cortex-opt %s --graph-dot=%t.dot | filecheck %s --check-prefix=IR
// RUN: filecheck %s --check-prefix=DOT --input-file %t.dot
// RUN: cortex-opt %s -p canonicalize,cse --verify-each-pass-semantics=2 | filecheck %s --check-prefix=IR
// RUN: not cortex-opt %s --verify-each-pass-semantics=0 2>&1 | filecheck %s --check-prefix=FRAMES
// RUN: not cortex-opt %s --view-graph --graph-diff 2>&1 | filecheck %s --check-prefix=BOTH

func.func @graph(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %a = cortex.relu %x : tensor<2x4xf32> -> tensor<2x4xf32>
  %b = cortex.exp %a : tensor<2x4xf32> -> tensor<2x4xf32>
  func.return %b : tensor<2x4xf32>
}

// TABLE-NOT: func.func
// TABLE: @graph
// TABLE: relu
// TABLE: exp

// DIFF-NOT: func.func
// DIFF: relu
// DIFF: exp

// IR: func.func @graph

// DOT: digraph
// DOT: relu

// FRAMES: error: argument --verify-each-pass-semantics: expected a positive number of frames, got 0
// BOTH: error: --view-graph and --graph-diff both replace the output: give one
