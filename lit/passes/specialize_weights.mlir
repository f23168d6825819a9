// cortex-specialize-weights bakes the named weights in as constants (the step cortex.compile
// bakes a call's weights with: its mode's row and overrides); weights it does not name stay
// runtime inputs; an entry that is not name=number is a one-line error.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-weights{weights="wc=0.5,wt=0.25"}' | filecheck %s
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-weights{weights="wc=half"}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:       %blur_threshold = cortex.weight "blur_threshold" : f32
// CHECK:       %wc = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:  %wt = arith.constant 2.500000e-01 : f32
// CHECK-NEXT:  %ws = cortex.weight "ws" : f32
// CHECK-NEXT:  %wm = cortex.weight "wm" : f32

// BAD:         error: {{.*}}cortex-specialize-weights: 'wc=half' is not name=number
// BAD-NOT:     Traceback
