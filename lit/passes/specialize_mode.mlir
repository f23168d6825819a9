// cortex-specialize-mode replaces each cortex.weight of the mode's row with its value
// (the blur gate's runtime inputs stay cortex.weight),
// from the built-in table or from a JSON file; bad modes/weights are one-line errors.
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=power_save}' | filecheck %s --check-prefix=POWER
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=motion}' | filecheck %s --check-prefix=MOTION
// RUN: echo '{"night": {"wc": 1.5, "wt": 0, "ws": 0.25, "wm": 2}}' > %t.json
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=night table="%t.json"}' | filecheck %s --check-prefix=TABLE
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=foo}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode' 2>&1 | filecheck %s --check-prefix=NOMODE
// RUN: echo '{"tiny": {"wc": 1.0, "wt": 0.5}}' > %t.partial.json
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=tiny table="%t.partial.json"}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cortex-opt %examples/l2_pipeline.mlir -p 'cortex-specialize-mode{mode=x table="%t.absent.json"}' 2>&1 | filecheck %s --check-prefix=NOFILE

// POWER-NOT:   cortex.weight "w
// POWER:       %blur_threshold = cortex.weight "blur_threshold" : f32
// POWER-NEXT:  %blur_fraction = cortex.weight "blur_fraction" : f32
// POWER:       %wc = arith.constant 7.000000e-01 : f32
// POWER-NEXT:  %wt = arith.constant 3.000000e-01 : f32
// POWER-NEXT:  %ws = arith.constant 0.000000e+00 : f32
// POWER-NEXT:  %wm = arith.constant 0.000000e+00 : f32
// POWER-NEXT:  %fused = cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm)
// POWER-NOT:   cortex.weight "w

// MOTION:      %wc = arith.constant 1.000000e-01 : f32
// MOTION-NEXT: %wt = arith.constant 2.000000e-01 : f32
// MOTION-NEXT: %ws = arith.constant 2.000000e-01 : f32
// MOTION-NEXT: %wm = arith.constant 5.000000e-01 : f32

// TABLE:       %wc = arith.constant 1.500000e+00 : f32
// TABLE-NEXT:  %wt = arith.constant 0.000000e+00 : f32
// TABLE-NEXT:  %ws = arith.constant 2.500000e-01 : f32
// TABLE-NEXT:  %wm = arith.constant 2.000000e+00 : f32

// UNKNOWN:     error: {{.*}}unknown mode 'foo' (known: balanced, motion, power_save)
// UNKNOWN-NOT: Traceback
// NOMODE:      error: {{.*}}no mode given (use mode=<name>)
// MISSING:     error: {{.*}}mode 'tiny' has no weights 'wm', 'ws' (it has: wc, wt)
// NOFILE:      error: {{.*}}cannot read mode table {{.*}}absent.json
