"""One call boundary: a frame's inputs, state and outputs are checked and converted the same way whichever
way the frame runs (the whole entry, its stages on threads, the frame split's parts in `run_video`).

A caller sees the same one-line error for the same mistake, and the same outputs and state, on every path."""

from __future__ import annotations

import json
import warnings
import zipfile

import numpy as np
import pytest
from helpers.pipelines import small_l2_text
from helpers.scheduling import assert_same, frames_of

import cortex
from cortex.errors import CortexError
from cortex.runtime.pipeline import LoadedProgram
from cortex.runtime.program import BackendTraits, Program, document_digest


@pytest.fixture(scope="module")
def program() -> Program:
    return cortex.compile(cortex.parse(small_l2_text()), mode="balanced").program


def runners(program: Program) -> dict[str, LoadedProgram]:
    """The same program called three ways: whole entry, stages on two threads, and parts through run_video."""
    return {"whole": LoadedProgram(program), "stages": LoadedProgram(program, stage_threads=2)}


def error_of(call) -> str:
    with pytest.raises(CortexError) as e:
        call()
    return str(e.value)


def errors(program: Program, args: tuple, state: object = None) -> set[str]:
    """The message each path gives for one bad call (a run_video frame's says 'frame 0: ' first)."""
    messages = set()
    for runner in runners(program).values():
        if state is not None:
            runner.state = state
        messages.add(error_of(lambda runner=runner: runner(*args)))
    video = LoadedProgram(program)
    if state is not None:
        video.state = state
    messages.add(error_of(lambda: list(video.run_video([args], workers=2, engine="threads"))).removeprefix("frame 0: "))
    return messages


@pytest.mark.slow
@pytest.mark.parametrize(("args", "says"), [
    ((), "takes 1 argument(s), got 0"),
    ("two", "takes 1 argument(s), got 2"),
    ("float", "expected a uint8 array of shape (96, 128, 3), got a float32 array"),
    ("shape", "expected a uint8 array of shape (96, 128, 3), got a uint8 array of shape (96, 127, 3)"),
])
def test_a_bad_argument_gets_one_message_on_every_path(program, args, says):
    frame = frames_of((96, 128), n=1)[0]
    args = {"two": (frame, frame), "float": (frame.astype(np.float32),), "shape": (frame[:, :127],)}.get(args, args)
    messages = errors(program, args)
    assert len(messages) == 1, messages
    assert says in messages.pop()


@pytest.mark.parametrize(("state", "says"), [
    ([1, 2], "runner.state must be a dict of state name to value, got list"),
    ({}, "is missing from runner.state (runner.reset() restores every state)"),
])
def test_a_bad_state_gets_one_message_on_every_path(program, state, says):
    frame = frames_of((96, 128), n=1)[0]
    messages = errors(program, (frame,), state)
    assert len(messages) == 1, messages
    assert says in messages.pop()


def test_a_wrong_state_value_gets_one_message_on_every_path(program):
    frame = frames_of((96, 128), n=1)[0]
    good = LoadedProgram(program).state
    name = next(k for k, v in good.items() if isinstance(v, np.ndarray))
    bad = {**good, name: np.zeros((3, 3), np.float64)}
    messages = errors(program, (frame,), bad)
    assert len(messages) == 1, messages
    assert f"state '{name}': expected" in messages.pop()


def test_outputs_and_state_are_the_same_on_every_path_and_round_trip(program):
    frames = frames_of((96, 128), n=4)
    results = {}
    for path, runner in runners(program).items():
        results[path] = ([runner(f) for f in frames[:2]], dict(runner.state))
    video = LoadedProgram(program)
    results["parts"] = (list(video.run_video(frames[:2], workers=2)), dict(video.state))
    whole_outputs, whole_state = results["whole"]
    for outputs, state in results.values():
        assert_same(outputs, whole_outputs)
        assert state.keys() == whole_state.keys()
        for k in state:
            np.testing.assert_array_equal(state[k], whole_state[k])
    # the state handed from one runner to another (as a plain dict) continues the same video
    later = {}
    for path, runner in runners(program).items():
        runner.state = dict(whole_state)
        later[path] = [runner(f) for f in frames[2:]]
    video = LoadedProgram(program)
    video.state = dict(whole_state)
    later["parts"] = list(video.run_video(frames[2:], workers=2))
    straight = LoadedProgram(program)
    want = [straight(f) for f in frames][2:]
    for outputs in later.values():
        assert_same(outputs, want)


def test_calls_split_is_one_name_and_the_old_one_warns(program):
    runner = LoadedProgram(program)
    assert runner.calls_split is False  # a NumPy program calls its whole entry
    with pytest.warns(DeprecationWarning, match="calls_split"):
        assert runner.split_calls is False


def test_the_backend_is_a_typed_field_and_an_old_file_still_loads(program, tmp_path):
    assert program.backend == BackendTraits(name="numpy", device="cpu", calls_blas=True, split_in_stages=False,
                                            calls_split=False)
    path = program.save(tmp_path / "p.cortex")
    again = Program.load(path)
    assert again.backend == program.backend
    # a file written before the typed field: only meta's keys say which backend compiled it
    with zipfile.ZipFile(path) as archive:
        members = {n: archive.read(n) for n in archive.namelist()}
    doc = json.loads(members["program.json"])
    doc.pop("backend", None)
    doc["meta"] = {"backend": "iree", "device": "cpu", "split_in_stages": True, "calls_split": False}
    doc.pop("sha256")
    doc["sha256"] = document_digest(doc)
    members["program.json"] = json.dumps(doc).encode()
    old = tmp_path / "old.cortex"
    with zipfile.ZipFile(old, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    legacy = Program.load(old)
    # a file saved before `calls_blas` existed is held (always safe): no backend's name decides it
    assert legacy.backend == BackendTraits(name="iree", device="cpu", calls_blas=True, split_in_stages=True,
                                           calls_split=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        runner = LoadedProgram(legacy)
        assert runner.calls_blas and not runner.calls_split
    doc["meta"]["calls_blas"] = False  # what the compiler records for IREE's code
    doc.pop("sha256")
    doc["sha256"] = document_digest(doc)
    members["program.json"] = json.dumps(doc).encode()
    with zipfile.ZipFile(old, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    assert not LoadedProgram(Program.load(old)).calls_blas


def test_a_backend_that_splits_in_stages_runs_its_parts_as_stages(program):
    """The loader reads `split_in_stages` from the program's backend traits (not from its meta, which no
    longer holds them): such a program's delayed and parallel parts run stage after stage."""
    import dataclasses

    from cortex.runtime.parts import InOrder, LoadedSplit

    staged = dataclasses.replace(program, backend=dataclasses.replace(program.backend, split_in_stages=True))
    parts = LoadedSplit(staged).parts
    assert isinstance(parts["delayed"], InOrder) and isinstance(parts["parallel"], InOrder)
    assert not isinstance(LoadedSplit(program).parts["parallel"], InOrder)
