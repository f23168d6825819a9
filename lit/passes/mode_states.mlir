// What one program for several modes does with a state one mode reads and another's DCE would stop
// updating (cortex.passes.mode_states): a delayed input is recomputed on a switch, a recurrence is kept
// alive in every variant. `cortex-mode-states` reports it and marks the updates; L2's states are read by
// every mode (nothing to say). `cortex-drop-unread-states` is the per-mode half: after power_save's
// specialisation no output reads prev_gray or trail, so their updates (and motion_map) go, unless kept.
// RUN: cortex-opt %examples/motion_trail.mlir -p 'cortex-mode-states{modes=all}' 2>&1 | filecheck %s --check-prefix=MODES
// RUN: cortex-opt %examples/l2_pipeline.mlir -p 'cortex-mode-states{modes=all}' 2>&1 >/dev/null | filecheck %s --check-prefix=L2 --allow-empty
// RUN: cortex-opt %examples/motion_trail.mlir -p 'cortex-specialize-weights{weights="wt=0.3,wm=0.0,ws=0.0"},canonicalize,dce,cortex-drop-unread-states{states="prev_gray,trail"}' | filecheck %s --check-prefix=DROP
// RUN: cortex-opt %examples/motion_trail.mlir -p 'cortex-specialize-weights{weights="wt=0.3,wm=0.0,ws=0.0"},canonicalize,dce,cortex-drop-unread-states{states="prev_gray,trail" keep="trail"}' | filecheck %s --check-prefix=KEEP
// RUN: not cortex-opt %examples/motion_trail.mlir -p 'cortex-mode-states{modes="balanced,turbo"}' 2>&1 | filecheck %s --check-prefix=BADMODE

// MODES:      [mode_states] state 'prev_gray': read by balanced, motion, not by power_save -> recompute (a delayed input: recomputed from the previous frame on a switch to a reading mode)
// MODES-NEXT: [mode_states] state 'trail': read by balanced, motion, not by power_save -> keep (a recurrence state cannot be recomputed from one frame: its update is kept alive in every variant)
// MODES:      cortex.update_state "prev_gray" = %{{.*}} {cortex.across_modes = "recompute; read by balanced, motion"}
// MODES:      cortex.update_state "trail" = %{{.*}} {cortex.across_modes = "keep; read by balanced, motion"}

// L2-NOT: mode_states

// DROP-LABEL: func.func @motion_trail(
// DROP-NOT:     cortex.state
// DROP-NOT:     cortex.motion_map
// DROP-NOT:     cortex.update_state
// DROP:         cortex.encoder

// KEEP-LABEL: func.func @motion_trail(
// KEEP-NOT:     cortex.state "prev_gray"
// KEEP-NOT:     cortex.motion_map
// KEEP:         cortex.state "trail"
// KEEP-NOT:     cortex.update_state "prev_gray"
// KEEP:         cortex.update_state "trail"

// BADMODE: unknown mode 'turbo'
