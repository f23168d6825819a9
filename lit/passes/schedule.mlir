// cortex-schedule prints the stage graph with the state edges, each state's
// class and why, the critical path from cortex.profile_ms, and a schedule
// over N workers; the IR is left as it is.
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=2},cortex-schedule{workers=2}' 2>&1 >/dev/null | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-schedule{workers=4}' 2>&1 >/dev/null | filecheck %s --check-prefix=UNPROFILED
// RUN: cortex-opt %l2_static -p 'cortex-schedule{workers=2}' 2>/dev/null | filecheck %s --check-prefix=UNCHANGED
// RUN: not cortex-opt %l2_static -p 'cortex-schedule{workers=0}' 2>&1 | filecheck %s --check-prefix=BAD

// CHECK:      [schedule] @l2_frame on 2 workers
// CHECK-NEXT: stage graph (← inputs; state values come from the previous frame):
// CHECK-NEXT:   gray       {{ *}}[[#]].[[#]] ms  [delayed]  ← the frame
// CHECK-NEXT:   sharpness  {{ *}}[[#]].[[#]] ms  [delayed]  ← gray
// CHECK-NEXT:   sharpness_median {{ *}}[[#]].[[#]] ms  [parallel]  ← state sharpness_history
// CHECK-NEXT:   scene      {{ *}}[[#]].[[#]] ms  [parallel]  ← gray, sharpness, sharpness_median, state prev_gray  (under the blur gate)
// CHECK:        text       {{ *}}[[#]].[[#]] ms  [parallel]  ← gray, sharpness, sharpness_median  (under the blur gate)
// CHECK:        smoothed   {{ *}}[[#]].[[#]] ms  [recurrence]  ← fused, scene, sharpness, sharpness_median, state prev_score  (under the blur gate)
// CHECK-NEXT:   new_history {{ *}}[[#]].[[#]] ms  [delayed]  ← sharpness, state sharpness_history
// CHECK-NEXT:   encoded    {{ *}}[[#]].[[#]] ms  [tail]  ← sharpness, sharpness_median, smoothed, state prev_score
// CHECK-NEXT:   state prev_gray ⇢ next frame  ← gray
// CHECK-NEXT:   state prev_score ⇢ next frame  ← sharpness, sharpness_median, smoothed, state prev_score
// CHECK-NEXT:   state sharpness_history ⇢ next frame  ← new_history
// CHECK-NEXT: states:
// CHECK-NEXT:   prev_gray: delayed input — its next value (%gray ← the frame) reads no state: frame n+1 gets it from frame n alone
// CHECK-NEXT:   prev_score: recurrence — its next value reads state 'prev_gray' (in cortex.scene_change, cortex.motion_map) and 'prev_score' (in the yield of an scf.if, cortex.temporal_smooth) and 'sharpness_history' (in cortex.window_median): frame n needs frame n-1's result
// CHECK-NEXT:   sharpness_history: leading recurrence — its next value ({{.*}}) reads only itself and the frame, never a gated stage, and the gate condition %blurred reads it: it runs in order on the caller as frames are read, so the gated stages stay frame-parallel
// CHECK-NEXT: critical path (one frame): gray → sharpness → {{.*}} → fused → smoothed → encoded = {{.*}} ms of {{.*}} ms
// CHECK-NEXT: one frame, stages concurrent: expected latency {{.*}} ms (sequential {{.*}} ms ({{.*}}×))
// CHECK-NEXT:   worker 1: gray, {{.*}}
// CHECK-NEXT:   worker 2: {{.*}}
// CHECK-NEXT: frame-parallel parts: delayed {{.*}} ms, parallel {{.*}} ms, recurrence {{.*}} ms, tail {{.*}} ms
// CHECK-NEXT: frame-parallel: recurrence {{.*}} ms = {{.*}} % of the work; throughput bound {{.*}} frames/s (limited by 2 workers; sequential {{.*}} frames/s, {{.*}}×)

// UNPROFILED: [schedule] @l2_frame on 4 workers
// UNPROFILED: gray {{ *}}? ms  [delayed]
// UNPROFILED: times: not measured for gray, sharpness, sharpness_median, scene, center, text, saliency, motion, fused, smoothed, new_history, encoded (counted as 0 ms; run cortex-profile first)

// UNCHANGED: func.func @l2_frame(%frame: tensor<480x640x3xui8>)
// UNCHANGED: cortex.update_state "prev_score"

// BAD: workers must be >= 1, got 0
