// Dead-node elimination of zero-weight stages as three ordinary rewrites: in power_save
// (ws = wm = 0) saliency_dft and motion_map go, and nothing else does
// (center_crop is folded to a constant, the zero-weight constants are dead).
// RUN: cortex-opt %l2_static -p 'canonicalize,cortex-specialize-mode{mode=power_save},canonicalize,dce' | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-dce{mode=power_save}' 2>/dev/null | filecheck %s
// In balanced mode every weight is non-zero: every stage stays.
// RUN: cortex-opt %l2_static -p 'canonicalize,cortex-specialize-mode{mode=balanced},canonicalize,dce' | filecheck %s --check-prefix=BALANCED

// CHECK-NOT:     saliency_dft
// CHECK-NOT:     motion_map
// CHECK:         %gray = cortex.gray %frame
// CHECK-NEXT:    %prev_gray = cortex.state "prev_gray"
// CHECK-NEXT:    %prev_score = cortex.state "prev_score"
// CHECK-NEXT:    %sharpness_history = cortex.state "sharpness_history"
// CHECK-NEXT:    %sharpness = cortex.blur_detector %gray
// CHECK-NEXT:    %blur_threshold = cortex.weight "blur_threshold"
// CHECK-NEXT:    %blur_fraction = cortex.weight "blur_fraction"
// CHECK-NEXT:    %sharpness_median = cortex.window_median %sharpness_history
// CHECK-NEXT:    %relative_threshold = arith.mulf %blur_fraction, %sharpness_median
// CHECK-NEXT:    %threshold = arith.maximumf %blur_threshold, %relative_threshold
// CHECK-NEXT:    %blurred = arith.cmpf olt, %sharpness, %threshold
// CHECK-NEXT:    %score = scf.if %blurred
// CHECK-NEXT:      scf.yield %prev_score
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %scene = cortex.scene_change %gray, %prev_gray
// CHECK-NEXT:      %center = cortex.constant dense<"0x{{[0-9A-F]+}}"> : tensor<15x20xf32>
// CHECK-NEXT:      %text = cortex.text_roi %gray
// CHECK-NEXT:      %wc = arith.constant 7.000000e-01 : f32
// CHECK-NEXT:      %wt = arith.constant 3.000000e-01 : f32
// CHECK-NEXT:      %fused = cortex.score_fusion(%center, %text) weights(%wc, %wt) {terms = ["center_crop", "text_roi"]}
// CHECK-NEXT:      %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene
// CHECK-NEXT:      scf.yield %smoothed
// CHECK-NEXT:    }
// CHECK-NEXT:    cortex.update_state "prev_gray" = %gray
// CHECK-NEXT:    cortex.update_state "prev_score" = %score
// CHECK-NEXT:    %new_history = cortex.window_push %sharpness_history, %sharpness
// CHECK-NEXT:    cortex.update_state "sharpness_history" = %new_history
// CHECK-NEXT:    %encoded = cortex.encoder %frame, %score
// CHECK-NEXT:    func.return %encoded, %score
// CHECK-NOT:     saliency_dft
// CHECK-NOT:     motion_map

// BALANCED:      cortex.saliency_dft
// BALANCED:      cortex.motion_map
// BALANCED:      cortex.score_fusion(%center, %text, %saliency, %motion) weights(%wc, %wt, %ws, %wm)
