"""Counts given to the compiler and the engines are whole numbers within bounds.

`run_video(workers=2.5)` and `workers=True` were accepted, `workers="2"` was a raw TypeError,
`window=0`/`-1`/`2**63` silently meant something else, and an unbounded `workers` or `window`
is a request for unbounded threads and frames in flight. Every count of `compiled.stage_threads`,
`cortex.load`, `run_video` (threads and Ray: workers, window, chunk, num_cpus) and
`cortex-run --workers` goes through `cortex.errors.whole_number`: one CortexError naming the
argument, before anything starts.
"""

from __future__ import annotations

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import compiled, frames_of
from hypothesis import given, settings
from hypothesis import strategies as st

import cortex
from cortex.errors import CortexError

BAD = [0, -1, -(2**63), True, False, 2.5, 2.0, "2", 2**63, 10**30, float("nan"), [2], 1 + 0j]
"""Not a count: zero, negative, bool, float (even a whole one), text, huge, NaN, a list, complex
(None is run_video's default for workers and window, and refused by stage_threads and load)."""

PIPELINE = compiled(small_l2_text())


def not_a_count():
    return st.one_of(
        st.integers(max_value=0),
        st.integers(min_value=2**31),
        st.booleans(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.text(max_size=4),
        st.lists(st.integers(1, 3), max_size=2),
    )


@pytest.mark.parametrize("value", [*BAD, None], ids=repr)
def test_stage_threads_refuses_a_bad_count(value):
    with pytest.raises(CortexError, match=r"^stage_threads must be a whole number from 1 to \d+"):
        PIPELINE.stage_threads = value
    assert PIPELINE.stage_threads == 1


@pytest.mark.parametrize("value", [0, True, 2.5, "2", 2**40, None], ids=repr)
def test_load_refuses_a_bad_stage_thread_count(tmp_path, value):
    path = PIPELINE.save(tmp_path / "p.cortex")
    with pytest.raises(CortexError, match=r"^stage_threads must be a whole number from 1 to \d+"):
        cortex.load(path, stage_threads=value)


@pytest.mark.parametrize("value", [0, True, 2.5, None], ids=repr)
def test_the_deprecated_compile_and_load_keywords_refuse_a_bad_count_by_their_name(tmp_path, value):
    path = PIPELINE.save(tmp_path / "p.cortex")
    with pytest.warns(DeprecationWarning), pytest.raises(CortexError, match=r"^workers must be a whole number"):
        cortex.compile(cortex.parse(small_l2_text()), workers=value)
    with pytest.warns(DeprecationWarning), pytest.raises(CortexError, match=r"^workers must be a whole number"):
        cortex.load(path, workers=value)


@pytest.mark.parametrize("engine", ["threads", "ray"])
@pytest.mark.parametrize("value", BAD, ids=repr)
def test_run_video_refuses_a_bad_worker_count_before_anything_starts(engine, value):
    with pytest.raises(CortexError, match=r"^workers must be a whole number from 1 to \d+"):
        PIPELINE.run_video(frames_of(SMALL, 2), workers=value, engine=engine)


@pytest.mark.parametrize("engine", ["threads", "ray"])
@pytest.mark.parametrize("value", BAD, ids=repr)
def test_run_video_refuses_a_bad_window(engine, value):
    with pytest.raises(CortexError, match=r"^window must be a whole number from 1 to \d+"):
        PIPELINE.run_video(frames_of(SMALL, 2), workers=1, window=value, engine=engine)


@pytest.mark.parametrize("option", ["chunk", "num_cpus"])
@pytest.mark.parametrize("value", [0, -3, True, 2.5, "8", 2**63], ids=repr)
def test_ray_counts_are_checked_before_ray_starts(option, value):
    with pytest.raises(CortexError, match=rf"^{option} must be a whole number from 1 to \d+"):
        PIPELINE.run_video(frames_of(SMALL, 2), workers=1, engine="ray", **{option: value})


@settings(max_examples=40, deadline=None)
@given(what=st.sampled_from(["workers", "window"]), value=not_a_count())
def test_any_bad_count_is_one_error_naming_it(what, value):
    arguments = {"workers": 1, what: value}
    with pytest.raises(CortexError) as info:
        list(PIPELINE.run_video(frames_of(SMALL, 1), **arguments))
    assert str(info.value).startswith(f"{what} must be a whole number from 1 to ")
    assert "\n" not in str(info.value)


def test_default_window_and_workers_still_run():
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    frames = frames_of(SMALL, 5)
    want = [a(f) for f in frames]
    got = list(b.run_video(frames))
    assert len(got) == len(want)
    got = list(b.run_video(frames, workers=3, window=1))
    assert len(got) == len(want)


@pytest.mark.parametrize("value", ["0", "-2", str(2**63)])
def test_cortex_run_workers_out_of_bounds_is_one_line(capsys, value):
    from cortex.tools.cortex_run import main

    rc = main(["--size", "96x128", "--frames", "2", "--workers", value, "--quiet", "--no-frame-log", "--dce-frames", "0"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "--workers must be a whole number from 1 to" in err and "Traceback" not in err
