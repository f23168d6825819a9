"""A recurrence is leading only if everything it reads can run ahead too: the test is a fixpoint.

Dropping one candidate (a history that reads the gated score) can disqualify one checked before it
(a history that reads the first), and so on up a chain. One sweep over the names is not enough when
the names sort reader-first; whatever the names, every history of such a chain must stay a plain
recurrence. Were one classed leading, it would run ahead of the frames in flight and read a stale
value of the state below it: the engines would disagree with one call at a time.
"""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import assert_same, assert_same_state, entry_of, frames_of, passes, sequential
from hypothesis import example, given, settings
from hypothesis import strategies as st

import cortex
from cortex.passes.state_analysis import classify_states

GATE_READ = "    %new_history = cortex.window_push %sharpness_history, %sharpness : tensor<25xf32>\n"


def chain_text(names: list[str]) -> str:
    """Small L2 where the gate's history reads the median of names[0], names[k] the median of names[k+1],
    and the last one the median of the previous (gated) score: the whole chain reads a gated stage."""
    text = small_l2_text()
    assert GATE_READ in text
    lines = ["    %score_flat = cortex.reshape %prev_score : tensor<3x4xf32> -> tensor<12xf32>\n",
             "    %score_median = cortex.window_median %score_flat : tensor<12xf32>\n"]
    below = "%score_median"
    for name in reversed(names):
        lines += [f'    %{name} = cortex.state "{name}" : tensor<5xf32>\n',
                  f"    %{name}_next = cortex.window_push %{name}, {below} : tensor<5xf32>\n",
                  f'    cortex.update_state "{name}" = %{name}_next : tensor<5xf32>\n',
                  f"    %{name}_median = cortex.window_median %{name} : tensor<5xf32>\n"]
        below = f"%{name}_median"
    lines.append(f"    %new_history = cortex.window_push %sharpness_history, {below} : tensor<25xf32>\n")
    return text.replace(GATE_READ, "".join(lines))


NAMES = st.lists(st.sampled_from(["a", "b", "c", "m", "x", "y", "z"]), min_size=1, max_size=4, unique=True)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(names=NAMES)
@example(names=["a", "b"])
@example(names=["a", "b", "c"])
@example(names=["c", "b", "a"])
def test_a_chain_down_to_a_gated_stage_is_no_leading_recurrence(names):
    classes = classify_states(entry_of(cortex.parse(chain_text(names))))
    kinds = {n: classes[n].kind for n in [*names, "sharpness_history", "prev_score"]}
    assert kinds == {**{n: "recurrence" for n in names}, "sharpness_history": "recurrence", "prev_score": "recurrence"}


@pytest.mark.slow
def test_frames_in_flight_agree_with_one_call_at_a_time():
    """Names that sort reader-first: the order a single sweep gets wrong."""
    text = chain_text(["a", "b"])
    frames = frames_of(SMALL, 16)
    one = cortex.compile(cortex.parse(text), passes=passes("balanced"))
    want = sequential(one, frames)
    flight = cortex.compile(cortex.parse(text), passes=passes("balanced"))
    assert_same(list(flight.run_video(frames, workers=3, window=4)), want)
    assert_same_state(flight.state, one.state)
