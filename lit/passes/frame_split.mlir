// cortex-frame-split cuts the entry into four pure functions: the delayed
// inputs' and leading recurrences' slice (gray, the sharpness history), the
// frame-parallel heavy stages (with the blur gate), the recurrence (the gate again, temporal_smooth) and the tail (the encoder).
// RUN: cortex-opt %l2_static -p cortex-frame-split | filecheck %s
// RUN: cortex-opt %l2_static -p cortex-frame-split,convert-cortex-to-linalg,convert-cortex-to-extern | %mlir-opt > /dev/null
// RUN: cortex-opt %s -p cortex-frame-split | filecheck %s --check-prefix=COUNTER
// RUN: cortex-opt %s -p 'cortex-schedule{workers=2}' 2>&1 >/dev/null | filecheck %s --check-prefix=CLASSES
// RUN: not cortex-opt %s -p 'cortex-frame-split{entry=in_branch}' 2>&1 | filecheck %s --check-prefix=REFUSED
// REQUIRES: mlir-opt

// CHECK:       func.func @l2_frame__delayed(%frame: tensor<480x640x3xui8>, %sharpness_history: tensor<25xf32>) -> (f32, tensor<480x640xf32>, tensor<480x640xf32>, tensor<25xf32>)
// CHECK-SAME:    cortex.frame_split = "delayed", cortex.split_args = ["input:0", "state:sharpness_history"], cortex.split_results = ["value:0", "value:1", "update:prev_gray", "update:sharpness_history"]
// CHECK-NEXT:    %gray = cortex.gray %frame
// CHECK-NEXT:    %sharpness = cortex.blur_detector %gray
// CHECK-NEXT:    %new_history = cortex.window_push %sharpness_history, %sharpness
// CHECK-NEXT:    func.return %sharpness, %gray, %gray, %new_history
// The leading recurrence's old value reaches the parallel part, where the auto gate is decided.
// CHECK:       func.func @l2_frame__parallel(%sharpness_history: tensor<25xf32>, %sharpness: f32, %gray: tensor<480x640xf32>, %prev_gray: tensor<480x640xf32>) -> (i1, tensor<15x20xf32>, f32)
// CHECK-SAME:    cortex.split_args = ["state:sharpness_history", "value:0", "value:1", "state:prev_gray"]
// CHECK-NEXT:    %sharpness_median = cortex.window_median %sharpness_history
// CHECK:         %threshold = arith.maximumf %blur_threshold, %relative_threshold
// CHECK-NEXT:    %blurred = arith.cmpf olt, %sharpness, %threshold
// CHECK-NEXT:    %fused, %scene = scf.if %blurred -> (tensor<15x20xf32>, f32) {
// CHECK-NEXT:      %{{.*}} = cortex.constant dense<0.000000e+00> : tensor<15x20xf32>
// CHECK-NEXT:      %{{.*}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %scene_1 = cortex.scene_change %gray, %prev_gray
// CHECK:           cortex.text_roi %gray
// CHECK:           cortex.saliency_dft %gray
// CHECK:           cortex.motion_map %gray, %prev_gray
// CHECK:           %fused_1 = cortex.score_fusion
// CHECK-NEXT:      scf.yield %fused_1, %scene_1
// CHECK:         func.return %blurred, %fused, %scene
// CHECK:       func.func @l2_frame__recurrence(%blurred: i1, %prev_score: tensor<15x20xf32>, %fused: tensor<15x20xf32>, %scene: f32)
// CHECK-SAME:    cortex.split_results = ["value:5", "update:prev_score"]
// CHECK-NEXT:    %score = scf.if %blurred -> (tensor<15x20xf32>) {
// CHECK-NEXT:      scf.yield %prev_score
// CHECK-NEXT:    } else {
// CHECK-NEXT:      %smoothed = cortex.temporal_smooth %fused, %prev_score, %scene
// CHECK-NEXT:      scf.yield %smoothed
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %score, %score
// CHECK:       func.func @l2_frame__tail(%frame: tensor<480x640x3xui8>, %score: tensor<15x20xf32>)
// CHECK-SAME:    cortex.split_results = ["output:0", "output:1"]
// CHECK-NEXT:    %encoded = cortex.encoder %frame, %score
// CHECK-NEXT:    func.return %encoded, %score
// CHECK-NOT:   cortex.state
// CHECK-NOT:   cortex.update_state

// A frame counter is a recurrence (its next value reads itself); the last
// input is a delayed input (its next value is the input alone).
// COUNTER:      func.func @l2_frame__delayed(%x: tensor<4xf32>) -> tensor<4xf32>
// COUNTER-SAME:   cortex.split_results = ["update:last"]
// COUNTER:      func.func @l2_frame__parallel(%x: tensor<4xf32>, %last: tensor<4xf32>) -> tensor<4xf32>
// COUNTER-NEXT:   %d = cortex.sub %x, %last
// COUNTER:      func.func @l2_frame__recurrence(%count: tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
// COUNTER-NEXT:   %one = cortex.constant dense<1.000000e+00>
// COUNTER-NEXT:   %next = cortex.add %count, %one
// COUNTER:      func.func @l2_frame__tail(%{{.*}}: tensor<4xf32>, %{{.*}}: tensor<1xf32>)
// COUNTER-NEXT:   func.return

// CLASSES:      states:
// CLASSES-NEXT:   last: delayed input — its next value (inputs and constants only) reads no state
// CLASSES-NEXT:   count: recurrence — its next value reads state 'count' (in cortex.add)

// REFUSED: error: {{.*}}state 'acc' is updated inside 'scf.if'; the frame split needs every state update at the top level

builtin.module {
  func.func @l2_frame(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<1xf32>) {
    %last = cortex.state "last" : tensor<4xf32>
    %count = cortex.state "count" : tensor<1xf32>
    %d = cortex.sub %x, %last : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %one = cortex.constant dense<1.000000e+00> : tensor<1xf32>
    %next = cortex.add %count, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    cortex.update_state "last" = %x : tensor<4xf32>
    cortex.update_state "count" = %next : tensor<1xf32>
    func.return %d, %next : tensor<4xf32>, tensor<1xf32>
  }
  func.func @in_branch(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = cortex.state "acc" : tensor<4xf32>
    %c = arith.constant true
    scf.if %c {
      cortex.update_state "acc" = %x : tensor<4xf32>
      scf.yield
    }
    func.return %s : tensor<4xf32>
  }
}
