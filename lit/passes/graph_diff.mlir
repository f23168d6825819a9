// --graph-diff: what the power_save pipeline removes from a profiled
// pipeline, and the time that saves (the removed stages' profile).
// center_crop depends only on the frame size: canonicalize folds it.
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=1}' \
// RUN:   | cortex-opt -p 'canonicalize,cortex-specialize-mode{mode=power_save},canonicalize,dce' --graph-diff \
// RUN:   | filecheck %s

// CHECK:      [graph diff]
// CHECK-NEXT: ✓          gray                 %gray
// CHECK-NEXT: ✓          blur_detector        %sharpness
// CHECK-NEXT: ✓          window_median        %sharpness_median
// CHECK-NEXT: ✓          scene_change         %scene
// CHECK-NEXT: - FOLDED   center_crop          %center
// CHECK-NEXT: ✓          text_roi             %text
// CHECK-NEXT: - REMOVED  saliency_dft         %saliency
// CHECK-NEXT: - REMOVED  motion_map           %motion
// CHECK-NEXT: ✓          score_fusion         %fused
// CHECK-NEXT: ✓          temporal_smooth      %smoothed
// CHECK-NEXT: ✓          window_push          %new_history
// CHECK-NEXT: ✓          encoder              %encoded
// CHECK-NEXT: Total: {{[0-9]+\.[0-9]}}ms → {{[0-9]+\.[0-9]}}ms (~{{[0-9]+\.[0-9]}}ms saved)

// The same in one command: leading cortex-profile passes only annotate, so
// the diff's "before" is the profiled graph and the removed stages are priced.
// RUN: cortex-opt %l2_static --graph-diff \
// RUN:   -p 'cortex-profile{frames=1},canonicalize,cortex-specialize-mode{mode=power_save},canonicalize,dce' \
// RUN:   | filecheck %s --check-prefix=ONE

// ONE:      - REMOVED  saliency_dft         %saliency{{ +}}(~{{0*[1-9][0-9]*\.[0-9]+|0*\.[0-9]*[1-9][0-9]*}}ms)
// ONE-NEXT: - REMOVED  motion_map           %motion{{ +}}(~{{0*[1-9][0-9]*\.[0-9]+|0*\.[0-9]*[1-9][0-9]*}}ms)
// ONE:      Total: {{[0-9]+\.[0-9]}}ms → {{[0-9]+\.[0-9]}}ms
