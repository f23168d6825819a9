"""Ray on more than one node: a `ray.cluster_utils.Cluster` on this machine (a head and two worker nodes,
one CPU each, every node on 127.0.0.1), one for the module.

- a batch (`cortex-run --out-dir --engine ray`) writes the same per-video outputs as the threads engine,
  every file written by the driver from what the tasks return;
- a worker node killed while it runs a video loses nothing: the video runs again on the nodes left, each
  frame is in its scores.jsonl once, the manifest says done;
- a `RaySession` keeps its actors across `run_video` calls and closes cleanly.

The module runs in the "ray" xdist group, one worker with the other Ray tests: the tests share the
cluster, each node holds the one CPU its test counts on, and a second Ray starting beside it on two
cores slows the node-loss detection the kill test waits for.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("ray")]

from helpers.batch import clip, manifest  # noqa: E402
from helpers.pipelines import SMALL, small_l2_text  # noqa: E402
from helpers.scheduling import assert_same, assert_same_state, compiled, frames_of, sequential  # noqa: E402
from ray.cluster_utils import Cluster  # noqa: E402

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime.engines.ray import RaySession  # noqa: E402
from cortex.tools.batch import run_batch, sweep_scratch  # noqa: E402
from cortex.tools.cortex_run import build_parser, main  # noqa: E402
from cortex.tools.parallel_run import run_video_task  # noqa: E402

FAST = ["--quiet", "--no-frame-log", "--dce-frames", "0", "--encoded", "jpeg"]
NODE = {"num_cpus": 1, "node_ip_address": "127.0.0.1", "object_store_memory": 80 * 1024 * 1024}
LOST_SOON = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_failure_threshold": 4}
"""A node that stops answering is declared dead within about 2 s (Ray's default: about 15 s)."""


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    # pytest's own temporary root is made now, under the real temporary directory: made first inside the
    # module's scratch folder below (tempfile.tempdir), it would be deleted with it and every later test
    # module's tmp_path would point into a folder that no longer exists
    tmp_path_factory.getbasetemp()
    if ray.is_initialized():
        ray.shutdown()
    temp = tempfile.mkdtemp(prefix="rc", dir="/tmp")  # short: Ray's socket paths live below it
    with pytest.MonkeyPatch.context() as env:
        env.setenv("RAY_TMPDIR", temp)  # the cluster file it leaves is its own, not /tmp/ray's
        # the tasks' scratch folders (`cortex-video-*`) in a temporary directory of the module's own, on every
        # node (they inherit TMPDIR) and in this driver: the tests count only the folders they made
        scratch = os.path.join(temp, "tmp")
        os.mkdir(scratch)
        env.setenv("TMPDIR", scratch)
        env.setattr(tempfile, "tempdir", scratch)
        # Every node and the driver on loopback: else Ray advertises (and dials) the machine's own address
        # for 127.0.0.1, which a sandbox may not route. Ray reads this flag in the processes it starts, and
        # the driver's copy of it (read when ray was imported) is set as well.
        env.setenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        env.setattr(ray._private.ray_constants, "ENABLE_RAY_CLUSTER", False)
        nodes = Cluster(initialize_head=True, head_node_args={**NODE, "include_dashboard": False,
                                                              "_system_config": LOST_SOON})
        try:
            for _ in range(2):
                nodes.add_node(**NODE)
            ray.init(address=nodes.address, log_to_driver=False, configure_logging=False)
            # the gated task below travels by value: the worker processes cannot import this test module
            ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
            yield nodes
        finally:
            ray.shutdown()
            nodes.shutdown()
            shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    """Three short videos of different sizes and lengths, and their batch outputs on the threads engine."""
    where = tmp_path_factory.mktemp("clips")
    videos = [clip(where / "a.avi", (64, 64), 4), clip(where / "b.avi", (64, 96), 6), clip(where / "c.avi", (64, 80), 5)]
    out = where / "threads"
    assert main([*videos, *FAST, "--out-dir", str(out), "--engine", "threads", "--workers", "1"]) == 0
    return videos, out


def outputs_of(out):
    """What a batch wrote that does not depend on timing: per video its scores and JPEGs, its frame count."""
    found = {}
    for folder in sorted(p for p in out.iterdir() if p.is_dir()):
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}
        assert set(files) >= {"scores.jsonl", "summary.json"}
        found[folder.name] = (json.loads(files.pop("summary.json"))["frames"], files)
    return found


def test_a_batch_on_three_nodes_writes_the_threads_outputs(cluster, clips, tmp_path):
    videos, threads = clips
    out = tmp_path / "ray"
    scratch = {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("cortex-video-")}
    assert main([*videos, *FAST, "--out-dir", str(out), "--engine", "ray", "--workers", "3"]) == 0
    assert outputs_of(out) == outputs_of(threads)
    assert sorted((e["folder"], e["status"], e["frames"]) for e in manifest(out)) == [("a", "done", 4),
                                                                                   ("b", "done", 6), ("c", "done", 5)]
    summary = json.loads((out / "b" / "summary.json").read_text())  # its outputs named where they are, not in
    assert summary["outputs"] == {"scores_jsonl": str(out / "b" / "scores.jsonl"),  # the task's scratch folder
                                  "encoded": str(out / "b" / "jpeg")}
    assert {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("cortex-video-")} == scratch  # removed


@ray.remote(num_cpus=0)
class Ledger:
    """Who started which video on which node, and where its task was told to write its scores; the first
    start of a video on a worker node waits for `release`."""

    def __init__(self):
        self.starts: list[tuple[str, str]] = []
        self.scores: list[str] = []
        self.released = False

    def start(self, video: str, node: str, scores: str) -> bool:
        first = all(v != video for v, _ in self.starts)
        self.starts.append((video, node))
        self.scores.append(scores)
        return first

    def written(self) -> list[str]:
        return self.scores

    def release(self) -> None:
        self.released = True

    def read(self) -> tuple[list[tuple[str, str]], bool]:
        return self.starts, self.released


def held_run_one(ledger, head: str, args) -> int:
    """cortex-run's run_one, but a video's first start on a worker node waits until the ledger is released."""
    from cortex.tools.cortex_run import run_one

    node = ray.get_runtime_context().get_node_id()
    if ray.get(ledger.start.remote(args.video, node, args.scores_jsonl)) and node != head:
        while not ray.get(ledger.read.remote())[1]:
            time.sleep(0.05)
    return run_one(args)


def test_a_worker_node_killed_mid_video_loses_nothing(cluster, clips, tmp_path):
    """Three videos, three nodes: one runs on each. Once a worker node holds a video it has started, that
    node is killed (no grace): Ray runs the video's task again on a node left, which writes nothing itself;
    the driver writes each video's files once, from the attempt that returned."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    videos, threads = clips
    head = cluster.head_node.node_id
    ledger = Ledger.options(scheduling_strategy=NodeAffinitySchedulingStrategy(head, soft=False)).remote()
    out = tmp_path / "ray"
    scratch = {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("cortex-video-")}
    args = build_parser().parse_args([*videos, *FAST, "--out-dir", str(out), "--engine", "ray", "--workers", "3"])
    result: list = []
    batch = threading.Thread(target=lambda: result.append(
        run_batch(args, videos, functools.partial(held_run_one, ledger, head), run_video_task)))
    batch.start()
    try:
        for _ in range(2400):  # the tasks' first starts: a worker node's video waits there
            starts, _ = ray.get(ledger.read.remote())
            held = [(v, n) for v, n in starts if n != head]
            if held:
                break
            time.sleep(0.05)
        assert held, "no video started on a worker node"
        video, node_id = held[0]
        doomed = next(n for n in cluster.worker_nodes if n.node_id == node_id)
        cluster.remove_node(doomed, allow_graceful=False)
    finally:
        ray.get(ledger.release.remote())
        batch.join()
    assert result == [0]
    starts, _ = ray.get(ledger.read.remote())
    again = [n for v, n in starts if v == video]
    assert len(again) == 2 and again[1] != node_id  # run again, elsewhere
    assert outputs_of(out) == outputs_of(threads)  # each frame once: the same scores.jsonl bytes
    assert [e["status"] for e in manifest(out)] == ["done", "done", "done"]
    written = ray.get(ledger.written.remote())
    assert len(written) == 4 and not any(path.startswith(str(out)) for path in written)  # the driver wrote out/
    # a scratch folder still here is the killed attempt's: once its process has gone (the worker of a killed
    # node exits when it notices), the sweep a task starts with removes it
    left = {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("cortex-video-")} - scratch
    for _ in range(600):
        left -= {p.name for p in sweep_scratch(Path(tempfile.gettempdir()))}
        if not left:
            break
        time.sleep(0.05)
    assert not left, f"scratch folders of live processes after the run: {sorted(left)}"


def test_a_session_keeps_its_actors_across_runs(cluster):
    frames = frames_of(SMALL, 16)
    a, b = compiled(small_l2_text()), compiled(small_l2_text())
    want = sequential(a, frames)
    with RaySession() as session:
        assert not session.started  # joined the cluster this process is connected to
        assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=4, session=session)), want)
        actors = list(session.actors)
        b.reset()
        assert_same(list(b.run_video(frames, workers=2, engine="ray", chunk=3, session=session)), want)
        assert_same_state(b.state, a.state)
        assert session.actors == actors  # the same actors: nothing started again
        b.reset()
        first = b.run_video(frames, workers=2, engine="ray", chunk=4, session=session)
        got = [next(first)]
        with pytest.raises(CortexError, match=r"^this RaySession is running another run_video"):
            list(compiled(small_l2_text()).run_video(frames, workers=2, engine="ray", session=session))
        assert_same(got + list(first), want)  # the run in progress is untouched
        assert session.actors == actors
    assert session.actors == [] and ray.is_initialized()  # closed: actors gone, the caller's Ray still up
    with pytest.raises(CortexError, match=r"^this RaySession is closed$"):
        list(b.run_video(frames, workers=2, engine="ray", session=session))


def node_of(actor) -> str:
    return ray.get(actor.__ray_call__.remote(lambda self: ray.get_runtime_context().get_node_id()))


def test_an_actor_whose_node_is_killed_mid_run_is_restarted_and_nothing_is_lost(cluster):
    """run_video on a session, the blur gate's history chained across chunks on the actors: once the first
    frame is delivered, with chunks in flight, the node under one actor is killed. Ray restarts the actor on
    the spare CPU and runs its tasks again (each a function of its arguments); every frame is delivered
    once, in order, with the sequential run's bits and final state."""
    import cortex
    from cortex.semantics.modes import BLUR_AUTO

    cluster.add_node(**NODE)  # the spare CPU
    frames = frames_of(SMALL, 32)  # blurred 8, 28, 29; a cut at 20
    a, b = (cortex.compile(cortex.parse(small_l2_text()), mode="balanced", weights=BLUR_AUTO) for _ in range(2))
    want = sequential(a, frames)
    head, got, lost = cluster.head_node.node_id, [], None
    with RaySession() as session:
        for k, out in enumerate(b.run_video(frames, workers=2, engine="ray", chunk=4, window=4, session=session)):
            got.append(out)
            if k == 0:
                hosts = {node_of(x) for x in session.actors} - {head}
                lost = next(n for n in [*cluster.worker_nodes] if n.node_id in hosts)
                cluster.remove_node(lost, allow_graceful=False)
        assert lost is not None and lost.node_id not in {node_of(x) for x in session.actors}  # restarted elsewhere
    assert_same(got, want)
    assert_same_state(b.state, a.state)
