"""Pipelines for the scheduling tests: the L2 pipeline at a small size, with extra states, and unsplittable ones."""

from __future__ import annotations

import cortex

L2_TEXT = cortex.to_text(cortex.build_l2_pipeline(480, 640))  # the static form of the bundled (shape-generic) pipeline
SMALL = (96, 128)

EVERY_RUN_ON_IREE = {"CORTEX_IREE_MIN_INTENSITY": "0", "CORTEX_IREE_MIN_WORK": "0"}
"""The IREE backend's cost rule switched off (`cortex.backends.iree.program.segment_rule`): the small programs
of the tests keep their linalg runs on IREE, which is what tests of the backend must exercise."""


def small_l2_text() -> str:
    """The bundled L2 pipeline at 96×128 (a 3×4 score grid)."""
    return L2_TEXT.replace("480x640", "96x128").replace("15x20", "3x4")


def with_extra_states() -> str:
    """Small L2 plus a frame counter and a running mean of the motion map (both recurrences),
    and a delayed input `prev_center` that nothing but its own update needs."""
    text = small_l2_text()
    text = text.replace(
        "-> (tensor<?xui8>, tensor<3x4xf32>) {",
        "-> (tensor<?xui8>, tensor<3x4xf32>, tensor<1xf32>, tensor<3x4xf32>) {",
    )
    extra = """    %count = cortex.state "count" : tensor<1xf32>
    %one = cortex.constant dense<1.000000e+00> : tensor<1xf32>
    %count_next = cortex.add %count, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    cortex.update_state "count" = %count_next : tensor<1xf32>
    %mean = cortex.state "mean_motion" : tensor<3x4xf32>
    %moving = cortex.motion_map %gray, %prev_gray : (tensor<96x128xf32>, tensor<96x128xf32>) -> tensor<3x4xf32>
    %k9 = cortex.constant dense<9.000000e-01> : tensor<3x4xf32>
    %k1 = cortex.constant dense<1.000000e-01> : tensor<3x4xf32>
    %decayed = cortex.mul %mean, %k9 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %added = cortex.mul %moving, %k1 : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %mean_next = cortex.add %decayed, %added : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    cortex.update_state "mean_motion" = %mean_next : tensor<3x4xf32>
    %center_now = cortex.center_crop %gray : tensor<96x128xf32> -> tensor<3x4xf32>
    cortex.update_state "prev_center" = %center_now : tensor<3x4xf32>
    func.return %encoded, %score, %count_next, %mean_next : tensor<?xui8>, tensor<3x4xf32>, tensor<1xf32>, tensor<3x4xf32>
"""
    return text.replace("    func.return %encoded, %score : tensor<?xui8>, tensor<3x4xf32>\n", extra)


def updated_in_a_branch() -> str:
    """A state updated under an scf.if: the frame split refuses it (and says why)."""
    return """builtin.module {
  func.func @l2_frame(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = cortex.state "acc" : tensor<4xf32>
    %c = arith.constant true
    scf.if %c {
      cortex.update_state "acc" = %x : tensor<4xf32>
      scf.yield
    }
    func.return %s : tensor<4xf32>
  }
}
"""


def without_gate_history() -> str:
    """Small L2 whose blur gate compares with the fixed threshold only: no sharpness history, so
    `prev_gray` is the only delayed input and no leading recurrence runs ahead on the caller
    (the Ray engine's chunks then start from the frame before them)."""
    text = small_l2_text()
    for line in (
        '    %sharpness_history = cortex.state "sharpness_history" : tensor<25xf32>\n',
        "    %new_history = cortex.window_push %sharpness_history, %sharpness : tensor<25xf32>\n",
        '    cortex.update_state "sharpness_history" = %new_history : tensor<25xf32>\n',
    ):
        assert line in text
        text = text.replace(line, "")
    return text.replace(
        "%sharpness_median = cortex.window_median %sharpness_history : tensor<25xf32>",
        "%sharpness_median = arith.constant 0.0 : f32",
    )


def chained_leading() -> str:
    """Small L2 with two chained leading recurrences: the gate reads the history of medians, whose
    next value reads a second history (of raw sharpness) that only the first one reads.
    Both must run ahead on the caller, the second because the first reads it."""
    text = small_l2_text()
    old = "    %new_history = cortex.window_push %sharpness_history, %sharpness : tensor<25xf32>\n"
    assert old in text
    return text.replace(
        old,
        '    %raw_history = cortex.state "raw_history" : tensor<5xf32>\n'
        "    %new_raw = cortex.window_push %raw_history, %sharpness : tensor<5xf32>\n"
        '    cortex.update_state "raw_history" = %new_raw : tensor<5xf32>\n'
        "    %raw_median = cortex.window_median %raw_history : tensor<5xf32>\n"
        "    %new_history = cortex.window_push %sharpness_history, %raw_median : tensor<25xf32>\n",
    )


def gate_reads_a_fresh_median() -> str:
    """Small L2 whose blur gate compares with the median of the history *after* the frame before pushed
    its sharpness (kept in the state `last_median`): that update reads the history's new value only, no
    state of its own, so it must run after the history's push, never in a pass that has no recurrence."""
    text = small_l2_text()
    median = "    %sharpness_median = cortex.window_median %sharpness_history : tensor<25xf32>\n"
    pushed = '    cortex.update_state "sharpness_history" = %new_history : tensor<25xf32>\n'
    assert median in text and pushed in text
    text = text.replace(median, '    %sharpness_median = cortex.state "last_median" : f32\n')
    return text.replace(pushed, pushed + "    %fresh_median = cortex.window_median %new_history : tensor<25xf32>\n"
                        '    cortex.update_state "last_median" = %fresh_median : f32\n')
