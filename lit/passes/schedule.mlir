// cortex-schedule prints the stage graph with the state edges, each state's
// class and why, the critical path from cortex.profile_ms, and a schedule
// over N workers; the IR is left as it is.
//
// The critical path, the schedule and every figure are checked on fixed times
// (Inputs/l2_profiled.mlir: the profile attributes written out), never on
// measured ones: a check of a measured critical path failed under load.
// The measured run (cortex-profile, then cortex-schedule) checks the structure only.
// RUN: cortex-opt %S/Inputs/l2_profiled.mlir -p 'cortex-schedule{workers=2}' 2>&1 >/dev/null | filecheck %s
// RUN: cortex-opt %l2_static -p 'cortex-profile{frames=1},cortex-schedule{workers=2}' 2>&1 >/dev/null | filecheck %s --check-prefix=MEASURED
// RUN: cortex-opt %l2_static -p 'cortex-schedule{workers=4}' 2>&1 >/dev/null | filecheck %s --check-prefix=UNPROFILED
// RUN: cortex-opt %S/Inputs/l2_profiled.mlir -p 'cortex-schedule{workers=16}' 2>&1 >/dev/null | filecheck %s --check-prefix=MANY
// RUN: cortex-opt %l2_static -p 'cortex-schedule{workers=2}' 2>/dev/null | filecheck %s --check-prefix=UNCHANGED
// RUN: not cortex-opt %l2_static -p 'cortex-schedule{workers=0}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: not cortex-opt %l2_static -p 'cortex-schedule{workers=9223372036854775807}' 2>&1 | filecheck %s --check-prefix=HUGE

// CHECK:      [schedule] @l2_frame on 2 workers
// CHECK-NEXT: stage graph (← inputs; state values come from the previous frame):
// CHECK-NEXT:   gray                3.00 ms  [delayed]  ← the frame
// CHECK-NEXT:   sharpness           2.00 ms  [delayed]  ← gray
// CHECK-NEXT:   sharpness_median    0.50 ms  [parallel]  ← state sharpness_history
// CHECK-NEXT:   scene               1.00 ms  [parallel]  ← gray, sharpness, sharpness_median, state prev_gray  (under the blur gate)
// CHECK-NEXT:   center              0.50 ms  [parallel]  ← gray, sharpness, sharpness_median  (under the blur gate)
// CHECK-NEXT:   text               20.00 ms  [parallel]  ← gray, sharpness, sharpness_median  (under the blur gate)
// CHECK-NEXT:   saliency           10.00 ms  [parallel]  ← gray, sharpness, sharpness_median  (under the blur gate)
// CHECK-NEXT:   motion              2.00 ms  [parallel]  ← gray, sharpness, sharpness_median, state prev_gray  (under the blur gate)
// CHECK-NEXT:   fused               1.00 ms  [parallel]  ← center, text, saliency, motion, sharpness, sharpness_median  (under the blur gate)
// CHECK-NEXT:   smoothed            0.50 ms  [recurrence]  ← fused, scene, sharpness, sharpness_median, state prev_score  (under the blur gate)
// CHECK-NEXT:   new_history         0.25 ms  [delayed]  ← sharpness, state sharpness_history
// CHECK-NEXT:   encoded             5.00 ms  [tail]  ← sharpness, sharpness_median, smoothed, state prev_score
// CHECK-NEXT:   state prev_gray ⇢ next frame  ← gray
// CHECK-NEXT:   state prev_score ⇢ next frame  ← sharpness, sharpness_median, smoothed, state prev_score
// CHECK-NEXT:   state sharpness_history ⇢ next frame  ← new_history
// CHECK-NEXT: states:
// CHECK-NEXT:   prev_gray: delayed input — its next value (%gray ← the frame) reads no state: frame n+1 gets it from frame n alone
// CHECK-NEXT:   prev_score: recurrence — its next value reads state 'prev_gray' (in cortex.scene_change, cortex.motion_map) and 'prev_score' (in the yield of an scf.if, cortex.temporal_smooth) and 'sharpness_history' (in cortex.window_median): frame n needs frame n-1's result
// CHECK-NEXT:   sharpness_history: leading recurrence — its next value (%new_history ← %sharpness ← %sharpness_history ← %gray) reads only itself and the frame, never a gated stage, and the gate condition %blurred reads it: it runs in frame order ahead of the gated stages (chained on the workers), so they stay frame-parallel
// CHECK-NEXT: critical path (one frame): gray → sharpness → text → fused → smoothed → encoded = 31.50 ms of 45.75 ms
// The latency gain is said one way: a speed-up, with the fraction of the time beside it (it read "(0.69×)").
// CHECK-NEXT: one frame, stages concurrent: expected latency 31.50 ms, sequential 45.75 ms: 1.45× faster (0.69 of the sequential time)
// CHECK-NEXT:   worker 1: gray, sharpness_median, text, smoothed, new_history
// CHECK-NEXT:   worker 2: sharpness, saliency, motion, center, scene, fused, encoded
// CHECK-NEXT: frame-parallel parts: delayed 5.25 ms, parallel 35.00 ms, recurrence 0.50 ms, tail 5.00 ms
// CHECK-NEXT: frame-parallel: recurrence 0.50 ms = 1.1 % of the work, delayed part 5.25 ms = 11.5 %
// CHECK-NEXT:   throughput bound 43.7 frames/s = 1 frame per max(work/2 22.88 ms, delayed 5.25 ms, recurrence 0.50 ms) = 22.88 ms (limited by 2 workers; sequential 21.9 frames/s, 2.00×): the delayed part pipelined on the workers, chained frame to frame
// CHECK-NEXT:   with the delayed part on the caller: 43.7 frames/s = 1 frame per max(work/2 22.88 ms, delayed + recurrence 5.75 ms) = 22.88 ms (limited by 2 workers; 2.00×)

// With 16 workers the work per worker falls under the delayed part: the delayed chain sets the bound,
// and on the caller the delayed part and the recurrence would add up.
// MANY:      one frame, stages concurrent: expected latency 31.50 ms, sequential 45.75 ms: 1.45× faster (0.69 of the sequential time)
// MANY:      throughput bound 190.5 frames/s = 1 frame per max(work/16 2.86 ms, delayed 5.25 ms, recurrence 0.50 ms) = 5.25 ms (limited by the delayed chain; sequential 21.9 frames/s, 8.71×)
// MANY-NEXT: with the delayed part on the caller: 173.9 frames/s = 1 frame per max(work/16 2.86 ms, delayed + recurrence 5.75 ms) = 5.75 ms (limited by the caller's serial work; 7.96×)

// MEASURED:      [schedule] @l2_frame on 2 workers
// MEASURED-NEXT: stage graph (← inputs; state values come from the previous frame):
// MEASURED-NEXT:   gray       {{ *}}[[#]].[[#]] ms  [delayed]  ← the frame
// MEASURED:        encoded    {{ *}}[[#]].[[#]] ms  [tail]  ← sharpness, sharpness_median, smoothed, state prev_score
// MEASURED:      states:
// MEASURED:      critical path (one frame): {{.+}} = {{[0-9]+\.[0-9]+}} ms of {{[0-9]+\.[0-9]+}} ms
// MEASURED-NEXT: one frame, stages concurrent: expected latency {{.+}} ms, sequential {{.+}} ms: {{[0-9]+\.[0-9]+}}× faster ({{[0-9]+\.[0-9]+}} of the sequential time)
// MEASURED-NEXT:   worker 1: {{.+}}
// MEASURED-NEXT:   worker 2: {{.+}}
// MEASURED-NEXT: frame-parallel parts: delayed {{.+}} ms, parallel {{.+}} ms, recurrence {{.+}} ms, tail {{.+}} ms
// MEASURED-NEXT: frame-parallel: recurrence {{.+}} ms = {{.+}} % of the work, delayed part {{.+}} ms = {{.+}} %
// MEASURED-NEXT:   throughput bound {{.+}} frames/s = 1 frame per max(work/2 {{.+}} ms, delayed {{.+}} ms, recurrence {{.+}} ms) = {{.+}} ms ({{.+}})
// MEASURED-NEXT:   with the delayed part on the caller: {{.+}} frames/s = 1 frame per max(work/2 {{.+}} ms, delayed + recurrence {{.+}} ms) = {{.+}} ms ({{.+}})
// MEASURED-NOT:  times: not measured

// UNPROFILED: [schedule] @l2_frame on 4 workers
// UNPROFILED: gray {{ *}}? ms  [delayed]
// UNPROFILED: times: not measured for gray, sharpness, sharpness_median, scene, center, text, saliency, motion, fused, smoothed, new_history, encoded (counted as 0 ms; run cortex-profile first)

// UNCHANGED: func.func @l2_frame(%frame: tensor<480x640x3xui8>)
// UNCHANGED: cortex.update_state "prev_score"

// BAD: workers must be a whole number from 1 to 4096, got 0
// HUGE: workers must be a whole number from 1 to 4096, got 9223372036854775807
