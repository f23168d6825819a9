"""engine="ray": the same outputs and final state as the sequential run, errors, nothing left behind.

One local Ray (2 CPUs, no dashboard: conftest's `local_ray`, shared with the other files' Ray runs);
few, quick runs (the CI budget).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]  # starts Ray: seconds

from helpers.pipelines import (  # noqa: E402
    SMALL,
    chained_leading,
    small_l2_text,
    with_extra_states,
    without_gate_history,
)
from helpers.scheduling import (  # noqa: E402
    MODES,
    assert_same,
    assert_same_state,
    compiled,
    delivered_before_error,
    frames_of,
    passes,
    sequential,
    snapshot,
    vandalise,
)

import cortex  # noqa: E402
from cortex.ir import CortexError  # noqa: E402
from cortex.passes.state_analysis import classify_states  # noqa: E402
from cortex.runtime.engines.ray import _get  # noqa: E402


# first: before the shared Ray of the tests below starts
@pytest.mark.slow
def test_bad_chunk_is_rejected_before_ray_starts():
    with pytest.raises(CortexError, match="chunk must be a whole number from 1 to 4096, got 0"):
        cortex.compile(cortex.parse(small_l2_text())).run_video([], workers=1, engine="ray", chunk=0)


def actors_alive() -> int:
    """Actors still holding a CPU (each FrameWorker takes one; the state API needs the dashboard)."""
    return round(ray.cluster_resources().get("CPU", 0) - ray.available_resources().get("CPU", 0))


@pytest.mark.slow
@pytest.mark.parametrize(
    ("text", "mode"),
    [(small_l2_text(), m) for m in MODES] + [(with_extra_states(), "balanced")],
    ids=[*MODES, "extra-states"],
)
def test_ray_equals_sequential(local_ray, text, mode):
    frames = frames_of(SMALL)  # 60 frames: blurred 8, 28, 29, 48; cuts at 20, 40
    a, b = compiled(text, mode), compiled(text, mode)
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=7)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["balanced", "power_save"])
def test_ray_equals_sequential_with_the_auto_gate(local_ray, mode):
    """The leading sharpness history crosses chunks exactly; actors re-compile with the gate's runtime inputs."""
    from cortex.semantics.modes import BLUR_AUTO

    frames = frames_of(SMALL)
    a, b = (cortex.compile(cortex.parse(small_l2_text()), mode=mode, weights=BLUR_AUTO) for _ in range(2))
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=7)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_the_caller_runs_no_delayed_part_on_ray(local_ray):
    """With a leading recurrence (the auto gate's history) the caller used to run the
    delayed part of every frame before handing out its chunk; now each chunk's start values come from
    the previous chunk's, chained on the actors, and the caller runs none of it (and stays exact)."""
    from cortex.semantics.modes import BLUR_AUTO

    frames = frames_of(SMALL, 30)
    a, b = (cortex.compile(cortex.parse(small_l2_text()), mode="balanced", weights=BLUR_AUTO) for _ in range(2))
    split = b.loaded_split()
    assert split.leading == ["sharpness_history"]
    delayed, calls = split.parts["delayed"], []
    split.parts["delayed"] = lambda env, index: (calls.append(index), delayed(env, index))
    try:
        got = list(b.run_video(frames, workers=2, engine="ray", chunk=4))
    finally:
        split.parts["delayed"] = delayed
    assert calls == []
    assert_same(got, sequential(a, frames))
    assert_same_state(b.state, a.state)


@pytest.mark.slow
@pytest.mark.parametrize("gate", ["auto", "fixed"])
def test_every_engine_reports_every_value_of_every_frame_alike(local_ray, gate):
    """Cortex-run's report once showed frame 0's scene-change value as
    0.572 in a frame-parallel run and 0.999 sequentially. With the probes cortex-run adds (the blur
    gate's sharpness, condition and threshold; the scene measure), every result of every frame —
    not only the scores — is the same bits on every engine: sequential, concurrent stages, frame-
    parallel threads (windows 1 and 4) and Ray, over 60 frames with blurred frames and cuts."""
    from helpers.scheduling import GATES

    from cortex.examples.l2_pipeline import build_l2_pipeline
    from cortex.ir import function_named
    from cortex.passes.expose_gate import expose_blur_gate
    from cortex.passes.expose_scene_change import expose_scene_change

    def probed(workers=1):
        module = build_l2_pipeline(*SMALL)
        assert expose_blur_gate(module, "l2_frame")
        scene = expose_scene_change(module, function_named(module, "l2_frame"))
        assert scene is not None and scene.index == 5
        compiled = cortex.compile(module, mode="balanced", passes=passes("balanced"), weights=GATES[gate])
        compiled.stage_threads = workers
        return compiled

    frames = frames_of(SMALL)
    want = sequential(probed(), frames)
    assert len(want[0]) == 6 and float(want[0][5]) > 0.99  # frame 0 against the zero prev_gray: a cut
    assert np.isnan(float(want[8][5])) == bool(want[8][3])  # no measure on a gated frame
    runs = {
        "concurrent stages": sequential(probed(workers=2), frames),
        "threads, window 4": list(probed().run_video(frames, workers=2, window=4)),
        "threads, window 1": list(probed().run_video(frames, workers=2, window=1)),
        "ray": list(probed().run_video(frames, workers=2, engine="ray", chunk=7)),
    }
    for name, got in runs.items():
        assert len(got) == len(want), name
        for k, (g, w) in enumerate(zip(got, want)):
            assert [np.asarray(v).tobytes() for v in g] == [np.asarray(v).tobytes() for v in w], (name, k)


@pytest.mark.slow
def test_actors_run_the_program_they_were_sent_without_the_compiler(local_ray):
    """Each actor gets the compiled program (no module text, no compile function) and runs it with every
    compiler module unimportable in its process: the runtime alone suffices."""

    def poison():
        import importlib
        import sys

        for name in ("cortex.driver", "cortex.passes", "cortex.lowering", "cortex.linalg_opt", "cortex.backends",
                     "cortex.registry"):
            sys.modules[name] = None  # type: ignore[assignment]  # any import of it (or below it) now fails
        try:
            importlib.import_module("cortex.passes.frame_split")
        except ImportError:
            return
        raise AssertionError("the compiler is still importable")

    frames = frames_of(SMALL, 20)
    a, b = compiled(with_extra_states()), compiled(with_extra_states())
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=3, worker_setup=poison)), want)
    assert_same_state(b.state, a.state)

    def refuse():
        raise CortexError("worker setup ran here")

    with pytest.raises(CortexError, match="worker setup ran here"):  # the hook does run in the actors
        list(b.run_video(frames, workers=2, engine="ray", chunk=3, worker_setup=refuse))


@pytest.mark.slow
def test_a_session_run_with_another_worker_setup_runs_it_in_new_actors(local_ray):
    """A `RaySession` keeps its actors only for a run with the same program, workers and `worker_setup`: a
    second run with another setup gets actors that ran it (here one that refuses, so the run fails naming
    it), and a third with the first setup again runs."""
    from cortex.runtime.engines.ray import RaySession

    def ready():
        return None

    def refuse():
        raise CortexError("the second setup ran here")

    frames = frames_of(SMALL, 6)
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    want = sequential(a, frames)
    with RaySession() as session:
        assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=3, worker_setup=ready, session=session)), want)
        b.reset()
        with pytest.raises(CortexError, match="the second setup ran here"):
            list(b.run_video(frames, workers=2, engine="ray", chunk=3, worker_setup=refuse, session=session))
        b.reset()
        assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=3, worker_setup=ready, session=session)), want)


@pytest.mark.slow
def test_ray_bad_frame_stops_the_run_and_kills_the_actors(local_ray):
    """The bad frame is named, and the run stops as the sequential loop would: every frame
    before it delivered (chunks of 4: frame 21 sits in the middle of a chunk), the state after them."""
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    frames = frames_of(SMALL, 21) + [np.zeros((5, 5, 3), np.uint8)] + frames_of(SMALL, 20)
    want = sequential(a, frames[:21])
    got = delivered_before_error(b.run_video(frames, workers=2, engine="ray", chunk=4), r"^frame 21: argument #0 \(%frame\) of @l2_frame: expected a uint8 array")
    assert_same(got, want)
    assert_same_state(b.state, a.state)
    for _ in range(100):  # ray.kill is asynchronous: wait until the actors are gone
        if actors_alive() == 0:
            break
        time.sleep(0.1)
    assert actors_alive() == 0


def poisoning_hook():
    """A worker hook (nested: Ray sends it by value): the actor's encoder fails on a frame whose first
    pixel is (101, 7, 99) (ValueError), and kills its process on (102, 7, 99)."""

    def setup():
        import os

        from cortex.semantics.kernel_table import KERNELS

        original = KERNELS["cortex.encoder"]

        def encoder(frame, score, **props):
            pixel = tuple(int(v) for v in frame[0, 0])
            if pixel == (101, 7, 99):
                raise ValueError("poisoned pixel")
            if pixel == (102, 7, 99):
                os._exit(3)
            return original(frame, score, **props)

        KERNELS["cortex.encoder"] = encoder

    return setup


def marked(frame, red):
    frame = frame.copy()
    frame[0, 0] = (red, 7, 99)
    return frame


@pytest.mark.slow
@pytest.mark.parametrize(
    ("frames_n", "at", "red", "words"),
    [(24, 13, 101, r"^frame 13: .*'cortex.encoder' failed: ValueError: poisoned pixel"),  # the encoder raises
     (16, 9, 102, r"^frames 8 to 11: a Ray worker died")],  # the actor's process exits: its chunk is named
    ids=["worker raises", "worker dies"],
)
def test_a_failing_ray_worker_names_its_frames_and_no_actor_is_left(local_ray, frames_n, at, red, words):
    b = compiled(small_l2_text())
    frames = frames_of(SMALL, frames_n)
    frames[at] = marked(frames[at], red)
    with pytest.raises(CortexError, match=words):
        list(b.run_video(frames, workers=2, engine="ray", chunk=4, worker_setup=poisoning_hook()))
    for _ in range(100):
        if actors_alive() == 0:
            break
        time.sleep(0.1)
    assert actors_alive() == 0


@pytest.mark.slow
def test_more_workers_than_the_local_ray_has_cpus_is_one_error_not_a_hang(local_ray):
    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match=r"^workers=3 needs 3 CPUs on Ray \(one actor each\), the local Ray has 2"):
        list(b.run_video(frames_of(SMALL, 4), workers=3, engine="ray", chunk=1))


@pytest.mark.slow
def test_an_unknown_ray_option_is_one_error(local_ray):
    b = compiled(small_l2_text())
    with pytest.raises(CortexError, match=r"^engine 'ray' takes the options address, chunk, num_cpus, session, worker_setup; got chunks"):
        b.run_video(frames_of(SMALL, 2), workers=1, engine="ray", chunks=4)
    with pytest.raises(CortexError, match=r"^worker_setup must be a function, got str"):
        b.run_video(frames_of(SMALL, 2), workers=1, engine="ray", worker_setup="import os")


def test_the_address_probe_knows_a_real_ray(local_ray):
    """The probe before ray.init passes a real GCS; joining the running Ray by its address works."""
    from cortex.runtime.engines.ray import RayAddress, start_ray

    address = ray.get_runtime_context().gcs_address
    RayAddress.parse(address).probe(5.0)
    assert start_ray(address) is False  # already joined: nothing started


@pytest.mark.slow
def test_worker_errors_come_back_as_one_line(local_ray):
    @ray.remote
    def fails():
        raise CortexError("frame 7: 'cortex.text_roi' failed: error: injected")

    with pytest.raises(CortexError) as info:
        _get(ray, fails.remote())
    assert str(info.value) == "frame 7: 'cortex.text_roi' failed: error: injected"


@pytest.mark.slow
def test_cortex_run_spreads_several_videos_over_ray(local_ray, capsys, tmp_path, monkeypatch):
    import cv2

    from cortex.tools.cortex_run import main
    from cortex.video.synthetic import SyntheticVideo

    monkeypatch.chdir(tmp_path)
    names = []
    for k, size in enumerate(((96, 128), (64, 96), (96, 96))):
        writer = cv2.VideoWriter(f"v{k}.avi", cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (size[1], size[0]))
        for frame in SyntheticVideo(*size).frames(4):
            writer.write(frame)
        writer.release()
        names.append(f"v{k}.avi")
    rc = main([*names, "--engine", "ray", "--workers", "2", "--no-frame-log", "--dce-frames", "0", "--quiet"])
    out = capsys.readouterr().out
    assert rc == 0
    for k, size in enumerate(("96x128", "64x96", "96x96")):
        assert f"v{k}.avi: {size}, 4 frames" in out and f"[v{k}.avi: a Ray worker]" in out
    assert "3 videos, 12 frames in" in out
    rc = main(["v0.avi", "missing.avi", "--engine", "ray", "--workers", "2", "--quiet", "--dce-frames", "0"])
    out, err = capsys.readouterr()
    assert rc == 1 and "missing.avi: no such video file" in out and "1 of 2 videos failed" in err


# ---------------------------------------------------------------- Chunk boundaries, the window, ownership


@pytest.mark.slow
def test_chunks_start_from_the_last_frame_before_them(local_ray):
    """A pipeline whose only delayed input is `prev_gray` (no gate history, so nothing runs ahead on
    the caller): each chunk's first frame takes its delayed inputs from the previous chunk's LAST
    frame. Chunks of 4 put the scene cuts (20, 40) on chunk starts, and motion on every boundary."""
    from cortex.semantics.modes import INPUT_DEFAULTS

    frames = frames_of(SMALL, 44)
    make = lambda: cortex.compile(cortex.parse(without_gate_history()), mode="balanced", weights={
        **INPUT_DEFAULTS, "blur_threshold": 150.0})
    a, b = make(), make()
    classes = classify_states(next(iter(cortex.parse(without_gate_history()).ops)))
    assert {n: c.kind for n, c in classes.items()} == {"prev_gray": "delayed", "prev_score": "recurrence"}
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=4)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_chained_leading_recurrences_on_ray(local_ray):
    """Two chained leading recurrences (tests/test_frame_split_leading.py) across chunks of 3."""
    from cortex.semantics.modes import BLUR_AUTO

    frames = frames_of(SMALL, 40)
    a, b = (cortex.compile(cortex.parse(chained_leading()), mode="balanced", weights=BLUR_AUTO) for _ in range(2))
    want = sequential(a, frames)
    assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=3)), want)
    assert_same_state(b.state, a.state)


@pytest.mark.slow
def test_ray_window_counts_chunks_exactly_and_outputs_are_the_callers(local_ray):
    """At most `window` chunks in flight: when the caller gets frame k, at most window·chunk − 1
    frames beyond it have been read (exactly that many at each chunk's first frame). Every output
    is overwritten as it arrives: later outputs and the final state must not notice."""
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    frames = frames_of(SMALL, 24)
    want = sequential(a, frames)
    read = {"n": 0}

    def source():
        for f in frames:
            read["n"] += 1
            yield f.copy()

    ahead, got = [], []
    for k, outputs in enumerate(b.run_video(source(), workers=2, engine="ray", window=2, chunk=3)):
        ahead.append(read["n"] - (k + 1))
        got.append(snapshot(outputs))
        for value in outputs:
            if isinstance(value, np.ndarray):
                vandalise(value)
    assert max(ahead) == 2 * 3 - 1 and ahead[0] == 5
    assert_same(got, want)
    assert_same_state(b.state, a.state)
