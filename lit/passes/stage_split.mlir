// cortex-stage-split cuts the frame split's parallel part into one function
// per stage, so one frame's independent stages can run at once: each stage
// under the blur gate gets its own copy of the gate, and the last copy
// yields what the recurrence reads.
// RUN: cortex-opt %l2_static -p cortex-frame-split,cortex-stage-split | filecheck %s
// RUN: cortex-opt %l2_static -p cortex-frame-split,cortex-stage-split,convert-cortex-to-linalg,convert-cortex-to-extern | %mlir-opt > /dev/null
// RUN: not cortex-opt %l2_static -p 'cortex-stage-split{function=nope}' 2>&1 | filecheck %s --check-prefix=MISSING
// RUN: not cortex-opt %l2_static -p 'cortex-stage-split{value-kind=value}' 2>&1 | filecheck %s --check-prefix=KIND
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-temporal-reuse{report=false},cortex-frame-split,cortex-stage-split{function=l2_frame__delayed value-kind=ahead}' | filecheck %s --check-prefix=DELAYED
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-temporal-reuse{report=false},cortex-frame-split,cortex-stage-split' | filecheck %s --check-prefix=DECOMPOSED
// REQUIRES: mlir-opt

// CHECK:      func.func @l2_frame__delayed
// The blur gate's scalar ops (median, product, maximum, comparison) are no stage of their own: each
// gated stage computes them itself (microseconds), so every gated stage can start at once.
// CHECK-NOT:  -> i1 attributes {cortex.split_args
// CHECK:      func.func @l2_frame__parallel__s0(%sharpness: f32, %sharpness_history: tensor<25xf32>, %gray: tensor<480x640xf32>, %prev_gray: tensor<480x640xf32>) -> f32
// CHECK-SAME:   cortex.split_args = ["value:0", "state:sharpness_history", "value:1", "state:prev_gray"]
// CHECK-NEXT:   %blur_threshold = cortex.weight "blur_threshold"
// CHECK-NEXT:   %blur_fraction = cortex.weight "blur_fraction"
// CHECK-NEXT:   %sharpness_median = cortex.window_median %sharpness_history
// CHECK-NEXT:   %relative_threshold = arith.mulf %blur_fraction, %sharpness_median
// CHECK-NEXT:   %threshold = arith.maximumf %blur_threshold, %relative_threshold
// CHECK-NEXT:   %blurred = arith.cmpf olt, %sharpness, %threshold
// CHECK-NEXT:   %scene = scf.if %blurred -> (f32) {
// CHECK-NEXT:     %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:     scf.yield
// CHECK-NEXT:   } else {
// CHECK-NEXT:     %scene_1 = cortex.scene_change %gray, %prev_gray
// CHECK:      func.func @l2_frame__parallel__s2(%sharpness: f32, %sharpness_history: tensor<25xf32>, %gray: tensor<480x640xf32>) -> tensor<15x20xf32>
// CHECK:        %blurred = arith.cmpf olt, %sharpness, %threshold
// CHECK:          cortex.text_roi %gray
// CHECK:      func.func @l2_frame__parallel__s5(%sharpness: f32, %sharpness_history: tensor<25xf32>, %center: tensor<15x20xf32>, %text: tensor<15x20xf32>, %saliency: tensor<15x20xf32>, %motion: tensor<15x20xf32>, %scene: f32) -> (i1, tensor<15x20xf32>, f32)
// CHECK-SAME:   cortex.split_results = ["value:2", "value:3", "value:4"]
// CHECK:        %blurred = arith.cmpf olt, %sharpness, %threshold
// CHECK:          cortex.score_fusion
// CHECK-NOT:  func.func @l2_frame__parallel__s6
// CHECK:      func.func @l2_frame__recurrence
// CHECK:      func.func @l2_frame__tail

// A decomposed scene change (ops with one cortex.origin) stays one stage: G(x·y) to the final score.
// DECOMPOSED:      func.func @l2_frame__parallel__s0(
// DECOMPOSED:          %scene_s_xy = cortex.gaussian_blur %scene_xy
// DECOMPOSED:          %scene_1 = cortex.to_scalar %scene_value
// DECOMPOSED:      func.func @l2_frame__parallel__s1(

// MISSING: no function '@nope' to split into stages
// KIND: value-kind must be one of stage, ahead, got 'value'

// The delayed part cut the same way (the driver does, so one frame's stages of both parts are one graph):
// each result leaves from the stage that computes it, so text_roi (which reads gray and the sharpness)
// need not wait for the reused blurs of gray, which only the next frame reads.
// DELAYED:      func.func @l2_frame__delayed__s0(%frame: tensor<480x640x3xui8>)
// DELAYED-SAME:   cortex.split_args = ["input:0"], cortex.split_results = ["ahead:0", "value:5", "update:prev_gray"]
// DELAYED-NEXT:   %gray = cortex.gray %frame
// DELAYED:      func.func @l2_frame__delayed__s1(%gray: tensor<480x640xf32>) -> (f32, f32)
// DELAYED-SAME:   cortex.split_args = ["ahead:0"], cortex.split_results = ["ahead:1", "value:0"]
// DELAYED-NEXT:   %sharpness = cortex.blur_detector %gray
// DELAYED:      func.func @l2_frame__delayed__s2(%gray: tensor<480x640xf32>)
// DELAYED-SAME:   cortex.split_args = ["ahead:0"], cortex.split_results = ["value:1", "value:2", "value:3", "value:4", "update:prev_gray:scene_x", "update:prev_gray:scene_mu_x", "update:prev_gray:scene_s_xx", "update:prev_gray:scene_mu_xx"]
// DELAYED:        cortex.gaussian_blur %scene_x
// DELAYED:        cortex.gaussian_blur %scene_xx
// DELAYED:      func.func @l2_frame__delayed__s3(%sharpness_history: tensor<25xf32>, %sharpness: f32) -> tensor<25xf32>
// DELAYED-SAME:   cortex.split_args = ["state:sharpness_history", "ahead:1"], cortex.split_results = ["update:sharpness_history"]
// DELAYED-NEXT:   cortex.window_push %sharpness_history, %sharpness
// DELAYED-NOT:  func.func @l2_frame__delayed__s4
// DELAYED:      func.func @l2_frame__parallel(
