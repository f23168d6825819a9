"""The compiled program: `cortex.compile` builds it whole, `save`/`cortex.load` round-trip it, the runtime runs it.

Round-trips are checked on outputs and final state (bit for bit), for the
sequential call, concurrent stages and frames in flight, on the NumPy and the
IREE executable kinds, also in a fresh process where the compiler (and
IREE's compiler) cannot be imported; a file of another
format or version, a damaged one, or an executable kind this runtime does
not know is a one-line CortexError.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from helpers.pipelines import EVERY_RUN_ON_IREE, SMALL, small_l2_text, with_extra_states
from helpers.program_archive import members, packed

import cortex
from cortex.errors import CortexError
from cortex.runtime.program import FORMAT, VERSION, Executable, Program, document_digest
from cortex.video.synthetic import SyntheticVideo


def frames(n=24, start=0):
    video = SyntheticVideo(*SMALL)
    return [video.frame(i) for i in range(start, start + n)]


def same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        for a, b in zip(g, w):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def same_state(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), k


@pytest.fixture(scope="module")
def compiled():
    return cortex.compile(cortex.parse(with_extra_states()), mode="motion", specialize=False)


@pytest.mark.slow
def test_compile_builds_every_part_up_front(compiled):
    program = compiled.program
    split = program.frame_split()
    assert set(split.parts) == {"delayed", "parallel", "recurrence", "tail"}
    assert len(split.stages) >= 5  # gray, blur gate, text_roi, saliency, scene_change, motion, fusion...
    assert set(program.executables) == {"entry", "split"}
    # compile's default frame_work carries scene change's previous-frame values as delayed states too
    carried = {c.state for r in compiled.temporal_reuse for c in r.carried}
    assert carried and all(name.startswith("prev_gray:") for name in carried)
    assert {s.name: s.kind for s in program.states} == {
        "prev_gray": "delayed", "prev_score": "recurrence", "count": "recurrence", "mean_motion": "recurrence",
        "prev_center": "delayed", "sharpness_history": "leading", **{name: "delayed" for name in carried},
    }
    assert program.runtime_inputs and set(program.runtime_inputs) <= set(program.weights)  # specialize=False
    for part in (*split.parts.values(), *split.stages, program.entry_part):
        assert part.symbol in program.executables[part.executable].symbols


def assert_round_trip(compiled, path, video) -> None:
    """Saved to `path` and loaded, `compiled` gives the same program, outputs and state, bit for bit: called in
    sequence, with frames in flight, and with concurrent stages."""
    compiled.save(path)
    assert Program.load(path) == compiled.program
    loaded = cortex.load(path)
    compiled.reset()
    want = [compiled(f) for f in video]
    same([loaded(f) for f in video], want)
    same_state(loaded.state, compiled.state)
    loaded.reset()
    same(list(loaded.run_video(video, workers=2)), want)
    same_state(loaded.state, compiled.state)
    staged = cortex.load(path, stage_threads=3)
    same([staged(f) for f in video], want)
    same_state(staged.state, compiled.state)


@pytest.mark.slow
def test_save_load_round_trip_gives_the_same_outputs_and_state(compiled, tmp_path):
    assert_round_trip(compiled, tmp_path / "l2.cortex", frames(30))


def test_the_file_is_documented_json_and_payloads_not_pickle(compiled, tmp_path):
    path = compiled.save(tmp_path / "l2.cortex")
    with zipfile.ZipFile(path) as archive:
        doc = json.loads(archive.read("program.json"))
        names = archive.namelist()
        source = archive.read(doc["executables"]["entry"]["members"]["source"]["file"]).decode()
    assert doc["format"] == FORMAT and doc["version"] == VERSION
    assert "def l2_frame(" in source and source == compiled.source
    assert not any(n.endswith((".pkl", ".pickle")) for n in names)
    assert all(n == "program.json" or n.startswith("executables/") for n in names)


def rewritten(path, change):
    files = members(path.read_bytes())
    doc = json.loads(files["program.json"])
    change(doc, files)
    doc["sha256"] = document_digest(doc)  # the edit made as anyone can: the fields behind the digest are tested
    files["program.json"] = json.dumps(doc).encode()
    path.write_bytes(packed(files))
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d, f: d.update(version=VERSION + 1), rf"format version {VERSION + 1}; this runtime reads version {VERSION}"),
        (lambda d, f: d.update(format="something-else"), r"not a cortex program \(format 'something-else'"),
        (lambda d, f: d["executables"]["entry"].update(kind="tpu-blob"), r"unknown executable kind 'tpu-blob'"),
        (lambda d, f: f.pop("executables/entry/source"), r"member 'source' is missing"),
        (lambda d, f: d["entry_part"].update(args=["frame:0"]), r"bad wiring key 'frame:0'"),
        (lambda d, f: d.pop("args"), r"malformed program.json"),
    ],
    ids=["version", "format", "kind", "member", "wiring", "field"],
)
def test_a_bad_file_is_one_cortex_error(compiled, tmp_path, change, message):
    path = rewritten(compiled.save(tmp_path / "bad.cortex"), change)
    with pytest.raises(CortexError, match=message) as info:
        cortex.load(path)
    assert "\n" not in str(info.value)


def test_not_a_program_at_all(tmp_path):
    (tmp_path / "x.cortex").write_bytes(b"def f(): pass\n")
    with pytest.raises(CortexError, match="not a cortex program"):
        cortex.load(tmp_path / "x.cortex")
    with pytest.raises(CortexError, match="cannot read program"):
        cortex.load(tmp_path / "missing.cortex")


UPDATED_TWICE = """builtin.module {
  func.func @l2_frame(%x: tensor<4xf32>) -> tensor<4xf32> {
    %s = cortex.state "acc" : tensor<4xf32>
    cortex.update_state "acc" = %x : tensor<4xf32>
    %y = cortex.add %s, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    cortex.update_state "acc" = %y : tensor<4xf32>
    func.return %s : tensor<4xf32>
  }
}
"""


def test_a_pipeline_that_cannot_be_split_compiles_and_says_why_when_run_in_flight():
    compiled = cortex.compile(cortex.parse(UPDATED_TWICE), mode=None)
    assert compiled.program.split is None
    x = np.ones(4, np.float32)
    compiled(x)  # the sequential call needs no split
    with pytest.raises(CortexError, match="cannot be frame-split: .*state 'acc' is updated 2 times"):
        list(compiled.run_video([x, x], workers=2))


def test_split_false_leaves_the_splits_out_and_says_so():
    compiled = cortex.compile(cortex.parse(small_l2_text()), split=False)
    assert compiled.program.split is None and set(compiled.program.executables) == {"entry"}
    with pytest.raises(CortexError, match="compiled with split=False"):
        list(compiled.run_video(frames(2), workers=2))
    compiled.stage_threads = 2
    with pytest.raises(CortexError, match="compiled with split=False"):
        compiled(frames(1)[0])


@pytest.mark.slow
def test_profiling_a_loaded_program_needs_no_compiler(compiled, tmp_path):
    loaded = cortex.load(compiled.save(tmp_path / "p.cortex"), profile=True)
    loaded(frames(1)[0])
    assert "gray" in loaded.profile() and loaded.profile().frames == 1


def test_executables_hold_text_or_bytes():
    exe = Executable("numpy", {"source": "x = 1\n", "constants/_k": b"\x00\x01"}, {"f": "f"})
    assert exe.text("source") == "x = 1\n"
    with pytest.raises(CortexError, match="no text member 'constants/_k'"):
        exe.text("constants/_k")


COMPILER = ("cortex.driver", "cortex.passes", "cortex.lowering", "cortex.linalg_opt", "cortex.backends", "cortex.registry",
            "cortex.dialects", "cortex.ir", "xdsl")
RUN_WITHOUT_COMPILER = """
import sys
program, frame_file, out_file, *poisoned = sys.argv[1:]
for name in poisoned:
    sys.modules[name] = None  # importing any of them now raises ImportError
import numpy as np
import cortex
compiled = cortex.load(program)
frames = np.load(frame_file)
called = [compiled(f) for f in frames]
state = compiled.state
compiled.reset()
in_flight = list(compiled.run_video(list(frames), workers=2))
arrays = {f"called/{k}/{i}": np.asarray(v) for k, out in enumerate(called) for i, v in enumerate(out)}
arrays |= {f"in_flight/{k}/{i}": np.asarray(v) for k, out in enumerate(in_flight) for i, v in enumerate(out)}
arrays |= {f"state/{name}": np.asarray(v) for name, v in state.items()}
np.savez(out_file, **arrays)
loaded = sorted(m for m, module in sys.modules.items() if module is not None)
unwanted = [m for m in loaded if any(m == p or m.startswith(p + ".") for p in poisoned)]
assert not unwanted, unwanted
"""


def run_without_compiler(compiled, tmp_path, video, poisoned=COMPILER):
    """Save `compiled`, load and run it in a fresh process where `poisoned` cannot be imported; its outputs and state."""
    path = compiled.save(tmp_path / "program.cortex")
    np.save(tmp_path / "frames.npy", np.stack(video))
    done = subprocess.run([sys.executable, "-c", RUN_WITHOUT_COMPILER, str(path), str(tmp_path / "frames.npy"),
                           str(tmp_path / "out.npz"), *poisoned], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with np.load(tmp_path / "out.npz") as got:
        arrays = dict(got)
    n = len(compiled(video[0]))

    def outputs(kind):
        return [tuple(arrays[f"{kind}/{k}/{i}"] for i in range(n)) for k in range(len(video))]

    return outputs("called"), outputs("in_flight"), {k.split("/", 1)[1]: v for k, v in arrays.items() if k.startswith("state/")}


@pytest.mark.slow
def test_a_saved_program_runs_in_a_process_without_the_compiler(tmp_path):
    compiled = cortex.compile(cortex.parse(small_l2_text()))
    video = frames(4)
    called, in_flight, state = run_without_compiler(compiled, tmp_path, video)
    compiled.reset()
    want = [compiled(f) for f in video]
    same(called, want)
    same(in_flight, want)
    same_state(state, compiled.state)


HAVE_IREE = all(importlib.util.find_spec(name) is not None for name in ("iree", "iree.compiler", "iree.runtime"))
needs_iree = pytest.mark.skipif(not HAVE_IREE, reason="iree-base-compiler/iree-base-runtime not installed (pip install 'cortex[iree]')")


@pytest.fixture(scope="module")
def compiled_iree():
    with pytest.MonkeyPatch.context() as mp:  # the cost rule would keep this small L2 on the host: no module to save
        for name, value in EVERY_RUN_ON_IREE.items():
            mp.setenv(name, value)
        return cortex.compile(cortex.parse(with_extra_states()), mode="motion", specialize=False, backend="iree")


@pytest.mark.slow
@needs_iree
def test_an_iree_program_round_trips_with_its_compiled_module(compiled_iree, tmp_path):
    """The "iree" kind saves its VM module as bytes; loaded, it gives the same outputs and state, bit for bit."""
    program = compiled_iree.program
    # with state, every call runs the split (driver.build_program): its executable is the IREE-compiled one
    assert program.backend.calls_split and program.executables["split"].kind == "iree"
    assert isinstance(program.executables["split"].members.get("module.vmfb"), bytes)
    assert_round_trip(compiled_iree, tmp_path / "l2.cortex", frames(12))


@pytest.mark.slow
@needs_iree
def test_a_saved_iree_program_runs_without_the_compiler_or_iree_compiler(compiled_iree, tmp_path):
    """Compile once, run where only the runtime and `iree.runtime` are installed: the IREE compiler is poisoned too."""
    video = frames(6)
    called, in_flight, state = run_without_compiler(compiled_iree, tmp_path, video, (*COMPILER, "iree.compiler"))
    compiled_iree.reset()
    want = [compiled_iree(f) for f in video]
    same(called, want)
    same(in_flight, want)
    same_state(state, compiled_iree.state)
