// cortex-temporal-reuse: a value computed from a delayed input alone, f(prev), whose
// counterpart f(next value) the frame also computes, becomes a new state carried from
// the previous frame. Structural, not named after SSIM (@square, @gated: small
// pipelines of generic ops); on the L2 pipeline it carries scene change's G(prev_gray)
// and G(prev_gray²) once cortex-decompose-scene-change has written them out (L2).
// RUN: cortex-opt %s -p 'cortex-temporal-reuse{entry=square}' 2>&1 | filecheck %s --check-prefix=SQUARE
// RUN: cortex-opt %s -p 'cortex-temporal-reuse{entry=gated}' 2>&1 | filecheck %s --check-prefix=GATED
// RUN: cortex-opt %s -p 'cortex-temporal-reuse{entry=nonzero_start}' 2>&1 | filecheck %s --check-prefix=REFUSED
// RUN: cortex-opt %s -p 'cortex-temporal-reuse{entry=reads_the_frame}' 2>&1 | filecheck %s --check-prefix=FRAME
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-temporal-reuse' 2>&1 | filecheck %s --check-prefix=L2
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-temporal-reuse{report=false},cortex-frame-split' | filecheck %s --check-prefix=SPLIT
// RUN: cortex-opt %l2_static -p 'cortex-decompose-scene-change,cortex-temporal-reuse{report=false},cortex-temporal-reuse' 2>&1 >/dev/null | filecheck %s --check-prefix=AGAIN

// SQUARE:      [temporal-reuse] @square
// SQUARE-NEXT:   'prev': delayed input, next value %g
// SQUARE-NEXT:   carried %sq_prev = f('prev') as state 'prev:sq': its next value is %sq, f(the next 'prev'); first value f(zeros) = zeros
// SQUARE:      func.func @square
// SQUARE-NEXT:   %g = cortex.gray %frame
// SQUARE-NEXT:   %sq_prev = cortex.state "prev:sq" : tensor<32x32xf32>
// SQUARE-NEXT:   %sq = cortex.mul %g, %g
// SQUARE-NEXT:   %d = cortex.sub %sq, %sq_prev
// SQUARE-NEXT:   cortex.update_state "prev" = %g
// SQUARE-NEXT:   cortex.update_state "prev:sq" = %sq : tensor<32x32xf32>
// SQUARE-NEXT:   func.return %d
func.func @square(%frame: tensor<32x32x3xui8>) -> tensor<32x32xf32> {
  %g = cortex.gray %frame : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %prev = cortex.state "prev" : tensor<32x32xf32>
  %sq = cortex.mul %g, %g : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %sq_prev = cortex.mul %prev, %prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %d = cortex.sub %sq, %sq_prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  cortex.update_state "prev" = %g : tensor<32x32xf32>
  func.return %d : tensor<32x32xf32>
}

// f(next) sits under a gate: on a gated frame it would not run while `prev` still
// updates, so its ops are hoisted in front of the scf.if and run on every frame.
// GATED:      carried %a_prev = f('prev') as state 'prev:a': its next value is %a, f(the next 'prev'); hoisted out of the blur gate's scf.if so it runs on every frame: %sq, %a; first value f(zeros) = zeros
// GATED:      func.func @gated
// GATED:        %a_prev = cortex.state "prev:a"
// GATED:        %sq = cortex.mul %g, %g
// GATED-NEXT:   %a = cortex.abs %sq
// GATED-NEXT:   %r = scf.if %c -> (tensor<32x32xf32>) {
// GATED-NEXT:     %d = cortex.sub %a, %a_prev
// GATED-NEXT:     scf.yield %d
// GATED:        cortex.update_state "prev:a" = %a
func.func @gated(%frame: tensor<32x32x3xui8>, %c: i1) -> tensor<32x32xf32> {
  %g = cortex.gray %frame : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %prev = cortex.state "prev" : tensor<32x32xf32>
  %r = scf.if %c -> (tensor<32x32xf32>) {
    %sq = cortex.mul %g, %g : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %a = cortex.abs %sq : tensor<32x32xf32> -> tensor<32x32xf32>
    %sq_prev = cortex.mul %prev, %prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    %a_prev = cortex.abs %sq_prev : tensor<32x32xf32> -> tensor<32x32xf32>
    %d = cortex.sub %a, %a_prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
    scf.yield %d : tensor<32x32xf32>
  } else {
    scf.yield %g : tensor<32x32xf32>
  }
  cortex.update_state "prev" = %g : tensor<32x32xf32>
  func.return %r : tensor<32x32xf32>
}

// exp(0) = 1: the carried state would start at zeros, not at f(initial prev).
// REFUSED:      not carried: %e_prev = f('prev'): its first value f(zeros) is not zero, and states start at zeros
// REFUSED:      %e_prev = cortex.exp %prev
func.func @nonzero_start(%frame: tensor<32x32x3xui8>) -> tensor<32x32xf32> {
  %g = cortex.gray %frame : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %prev = cortex.state "prev" : tensor<32x32xf32>
  %e = cortex.exp %g : tensor<32x32xf32> -> tensor<32x32xf32>
  %e_prev = cortex.exp %prev : tensor<32x32xf32> -> tensor<32x32xf32>
  %d = cortex.sub %e, %e_prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  cortex.update_state "prev" = %g : tensor<32x32xf32>
  func.return %d : tensor<32x32xf32>
}

// g·prev with prev → g is g·g, computed too; but g·prev reads the frame: not f(prev).
// FRAME:      'prev': delayed input, next value %g
// FRAME-NEXT: nothing computed from a delayed input is also computed from its next value: nothing carried
// FRAME:      %gp = cortex.mul %g, %prev
func.func @reads_the_frame(%frame: tensor<32x32x3xui8>) -> (tensor<32x32xf32>, tensor<32x32xf32>) {
  %g = cortex.gray %frame : tensor<32x32x3xui8> -> tensor<32x32xf32>
  %prev = cortex.state "prev" : tensor<32x32xf32>
  %gg = cortex.mul %g, %g : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  %gp = cortex.mul %g, %prev : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  cortex.update_state "prev" = %g : tensor<32x32xf32>
  func.return %gg, %gp : tensor<32x32xf32>, tensor<32x32xf32>
}

// L2:      [temporal-reuse] @l2_frame
// L2-NEXT:   'prev_gray': delayed input, next value %gray
// L2-NEXT:   carried %scene_y = f('prev_gray') as state 'prev_gray:scene_x'
// L2-NEXT:   carried %scene_mu_y = f('prev_gray') as state 'prev_gray:scene_mu_x': its next value is %scene_mu_x, f(the next 'prev_gray'); hoisted out of the blur gate's scf.if so it runs on every frame: %scene_mu_x
// L2-NEXT:   carried %scene_s_yy = f('prev_gray') as state 'prev_gray:scene_s_xx': its next value is %scene_s_xx, f(the next 'prev_gray'); hoisted out of the blur gate's scf.if so it runs on every frame: %scene_xx, %scene_s_xx
// L2-NEXT:   carried %scene_mu_yy = f('prev_gray') as state 'prev_gray:scene_mu_xx'
// Two Gaussian blurs of the frame run before the gate (hoisted), one in it (G(x·y)); none of prev_gray.
// L2:        %scene_mu_y = cortex.state "prev_gray:scene_mu_x" : tensor<480x640xf64>
// L2:        %scene_mu_x = cortex.gaussian_blur %scene_x
// L2:        %scene_s_xx = cortex.gaussian_blur %scene_xx
// L2:        %score = scf.if %blurred
// L2-NOT:      cortex.gaussian_blur %scene_y
// L2:          %scene_s_xy = cortex.gaussian_blur %scene_xy
// L2-NOT:      cortex.gaussian_blur
// L2:        cortex.update_state "prev_gray:scene_mu_x" = %scene_mu_x : tensor<480x640xf64>
// L2-NEXT:   cortex.update_state "prev_gray:scene_s_xx" = %scene_s_xx
// L2-NEXT:   cortex.update_state "prev_gray:scene_mu_xx" = %scene_mu_xx

// The new states are delayed inputs: the frame split computes their next values in the delayed part.
// SPLIT:      func.func @l2_frame__delayed
// SPLIT-SAME:   "update:prev_gray:scene_x", "update:prev_gray:scene_mu_x", "update:prev_gray:scene_s_xx", "update:prev_gray:scene_mu_xx"
// SPLIT:      func.func @l2_frame__parallel
// SPLIT-SAME:   "state:prev_gray:scene_mu_x"

// A second run finds nothing more to carry (the pass is idempotent).
// AGAIN:     [temporal-reuse] @l2_frame
// AGAIN-NOT:   carried %
// AGAIN:       nothing computed from a delayed input is also computed from its next value: nothing carried
