"""The processes engine where shared memory is short, unusable, or its caller dies.

- A `/dev/shm` smaller than a run's blocks (a container's 64 MB at 480x640) killed the caller with SIGBUS
  at the first write past its space: now the blocks are reserved when made and the run's need is checked at
  its first block, so it is one line naming the need, before any frame.
- A missing or read-only `/dev/shm`: one line, not a raw `OSError`.
- The caller killed (SIGKILL; SIGTERM in a plain script): its workers ran on without a parent and its blocks
  stayed in `/dev/shm`. Now each worker ends when its caller does (a pidfd watch, the parent-death signal),
  and a block has no name once open, so its memory goes with the last process that holds it.

Each test makes its blocks in a directory of its own (`CORTEX_SHM_DIR`; a private tmpfs where it can mount
one: a test run as root), and waits for processes by their pids, never by sleeping.
"""

from __future__ import annotations

import errno
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from helpers.pipelines import SMALL, small_l2_text
from helpers.scheduling import compiled, frames_of
from helpers.shared_memory import private_shm_fixture, shared_blocks  # noqa: F401 (a fixture)

from cortex.errors import CortexError
from cortex.runtime.engines import processes
from cortex.runtime.engines.processes import blocks, pool

pytestmark = pytest.mark.xdist_group("processes")

SHORT = (r"^not enough shared memory in {dir} \({size} MB\): need \d+ MB; use fewer workers, --engine threads, "
         r"or a larger --shm-size$")
B = compiled(small_l2_text())


@pytest.fixture(scope="module", autouse=True)
def _close_pools(private_shm):
    yield
    processes.close_pools()


@pytest.fixture
def tmpfs(tmp_path):
    """Mount a private tmpfs of the size asked for (root only); unmounted after the test."""
    mounted = []

    def mount(size: str) -> str:
        where = tmp_path / f"tmpfs{len(mounted)}"
        where.mkdir()
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a private tmpfs needs root")
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True)
        if done.returncode:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
        mounted.append(where)
        return str(where)

    yield mount
    processes.close_pools()  # no block of a test's pool left in its tmpfs
    for where in mounted:
        subprocess.run(["umount", "--lazy", str(where)], check=True)  # (busy after a failure: detached all the same)


def run_first(monkeypatch, directory: str, **options) -> list:
    monkeypatch.setenv(blocks.SHM_DIR_VARIABLE, directory)
    B.reset()
    got: list = []
    with pytest.raises(CortexError) as raised:
        for out in B.run_video(frames_of(SMALL, 24), engine="processes", **options):
            got.append(out)
    processes.drop_pool(B)
    return [got, str(raised.value)]


def test_a_tmpfs_too_small_for_the_run_is_one_line_before_any_frame(monkeypatch, tmpfs):
    """A real 1 MB tmpfs: 4 chunks of 8 frames in flight at 96x128 need more; nothing is delivered."""
    directory = tmpfs("1m")
    got, message = run_first(monkeypatch, directory, workers=2, chunk=8)
    assert got == [] and re.match(SHORT.format(dir=directory, size=1), message), message
    assert os.statvfs(directory).f_bfree == os.statvfs(directory).f_blocks  # nothing left in it


def test_a_tmpfs_that_fits_the_run_runs_it(monkeypatch, tmpfs):
    directory = tmpfs("16m")
    monkeypatch.setenv(blocks.SHM_DIR_VARIABLE, directory)
    B.reset()
    assert len(list(B.run_video(frames_of(SMALL, 24), engine="processes", workers=2, chunk=8))) == 24
    processes.drop_pool(B)
    assert os.statvfs(directory).f_bfree == os.statvfs(directory).f_blocks


def test_a_block_whose_pages_do_not_fit_is_a_shortage_not_a_signal(monkeypatch, private_shm):
    """The room checked at the run's first block may be taken by others meanwhile: each block reserves its
    pages when made, and one that cannot is the same one line (here: every block after the first)."""
    real, made = os.posix_fallocate, []

    def filling(fd, offset, size):
        if made:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        made.append(size)
        real(fd, offset, size)

    monkeypatch.setattr(os, "posix_fallocate", filling)
    B.reset()
    with pytest.raises(CortexError, match=SHORT.format(dir=private_shm, size=r"\d+")):
        list(B.run_video(frames_of(SMALL, 24), engine="processes", workers=2, chunk=4))
    processes.drop_pool(B)
    assert shared_blocks() == set()


def test_the_run_checks_its_blocks_in_flight_at_its_first(monkeypatch, private_shm):
    cache = blocks.BlockCache(keep=4)
    monkeypatch.setattr(blocks, "available", lambda: 3 * 1000)
    with cache.run(in_flight=4), pytest.raises(blocks.SharedMemoryShortage, match=r"need 1 MB"):
        cache.take(1000)
    with cache.run(in_flight=3):
        block = cache.take(1000)  # 3 fit
        cache.give(block)
    with cache.run(in_flight=4):
        cache.give(cache.take(1000))  # the free block counts: 3 new ones fit
    cache.close()
    assert shared_blocks() == set()


@pytest.mark.parametrize("why", ["missing", "a file"])
def test_an_unusable_shared_memory_directory_is_one_line(monkeypatch, tmp_path, why):
    directory = tmp_path / "shm"
    if why == "a file":
        directory.write_text("")
    got, message = run_first(monkeypatch, str(directory), workers=2)
    assert got == []
    assert message.startswith(f"shared memory is unusable ({directory}: ") and message.endswith("use --engine threads")


# ---------------------------------------------------------------- /dev/shm itself, in a private mount namespace


def in_private_dev_shm(mount_options: str, *command: str) -> subprocess.CompletedProcess:
    """`command` with a fresh tmpfs (`mount_options`) as /dev/shm, in a mount namespace of its own (root only)."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("a private /dev/shm needs root and unshare")
    script = f"mount -t tmpfs -o {mount_options} tmpfs /dev/shm && exec \"$@\""
    env = {k: v for k, v in os.environ.items() if k != blocks.SHM_DIR_VARIABLE}
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", *command],
                          capture_output=True, text=True, timeout=600, env=env)
    if done.returncode and "unshare:" in done.stderr:
        pytest.skip(f"no private mount namespace here: {done.stderr.strip()}")
    return done


def cortex_run(*args: str) -> list[str]:
    return [sys.executable, "-m", "cortex.tools.cortex_run", "--engine", "processes", "--workers", "2", "--quiet",
            "--no-frame-log", *args]


@pytest.mark.slow
@pytest.mark.parametrize("size", ["480x640", "1088x1920"])
def test_cortex_run_on_a_64_mb_dev_shm_says_what_it_needs(size, tmp_path):
    """Docker's default /dev/shm: cortex-run ends with one line naming the need, never a signal."""
    done = in_private_dev_shm("size=64m", *cortex_run("--size", size, "--frames", "24",
                                                       "--scores-jsonl", str(tmp_path / "s.jsonl")))
    assert done.returncode == 1, done.stderr
    assert re.match(SHORT.format(dir="/dev/shm", size=64), done.stderr.strip().removeprefix("error: "))
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_cortex_run_on_a_read_only_dev_shm_is_one_line():
    done = in_private_dev_shm("ro,size=1m", *cortex_run("--size", "96x128", "--frames", "4"))
    assert done.returncode == 1
    assert done.stderr.strip() == ("error: shared memory is unusable (/dev/shm: Read-only file system): the "
                                   "processes engine needs a writable tmpfs there (or CORTEX_SHM_DIR); use --engine threads")


# ---------------------------------------------------------------- the caller killed


CALLER = textwrap.dedent("""
    import itertools, json, multiprocessing.forkserver as fs, sys
    sys.path.insert(0, sys.argv[1])
    from helpers.pipelines import SMALL, small_l2_text
    from helpers.scheduling import compiled, frames_of
    from cortex.runtime.engines import processes

    b = compiled(small_l2_text())
    frames = frames_of(SMALL, 8)
    for k, _ in enumerate(b.run_video((frames[i % 8] for i in itertools.count()), workers=2, engine="processes", chunk=2)):
        if k == 3:  # mid-run: the workers hold their blocks
            pool = processes.pool_for(b, b.program, 2, chain=True)
            print(json.dumps({"workers": pool.pids(), "fork_server": fs._forkserver._forkserver_pid}), flush=True)
""")


def wait_for_exit(pids: list[int], limit: float = 60) -> list[int]:
    """Wait for the processes to end (each pidfd turns readable); the pids still alive after `limit` seconds in
    all (an outer bound that fails the test, not a pause: they end within milliseconds of the event)."""
    deadline = time.monotonic() + limit
    alive = []
    for pid in pids:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            continue
        try:
            if not select.select([fd], [], [], max(deadline - time.monotonic(), 0))[0]:
                alive.append(pid)
        finally:
            os.close(fd)
    return alive


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_caller_leaves_no_workers_and_no_blocks(sig, tmp_path):
    if not hasattr(os, "pidfd_open"):
        pytest.skip("waits on pidfds (Linux)")
    directory = tmp_path / "shm"
    directory.mkdir()
    mounted = os.geteuid() == 0 and subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(directory)],
                                                   capture_output=True).returncode == 0
    try:
        env = {**os.environ, blocks.SHM_DIR_VARIABLE: str(directory)}
        tests = str(Path(__file__).parent)
        caller = subprocess.Popen([sys.executable, "-c", CALLER, tests], stdout=subprocess.PIPE, env=env, text=True)
        try:
            line = caller.stdout.readline()  # the event: the run is under way
            assert line, f"the caller ended first (rc {caller.wait()})"
            seen = json.loads(line)
            if mounted:
                assert os.statvfs(directory).f_bfree < os.statvfs(directory).f_blocks  # its blocks are there
            caller.send_signal(sig)
            assert caller.wait(timeout=120) == -sig
        finally:
            caller.kill()  # (a failed check above: not left running)
            caller.stdout.close()
        assert wait_for_exit([*seen["workers"], seen["fork_server"]]) == []
        assert os.listdir(directory) == []
        if mounted:  # the unnamed blocks' memory too
            assert os.statvfs(directory).f_bfree == os.statvfs(directory).f_blocks
    finally:
        if mounted:
            subprocess.run(["umount", "--lazy", str(directory)], check=True)


# ---------------------------------------------------------------- a task that hangs


def test_a_run_left_while_a_task_hangs_ends_and_kills_its_pool(monkeypatch):
    """The caller leaves a run (a test's time limit, Ctrl-C, `break`) while a worker's task never ends: the run
    gives up waiting for it after `CLOSE_GRACE`, kills the pool's workers and frees the blocks, instead of
    hanging the caller (and a test runner's worker) for good."""
    monkeypatch.setattr(pool, "CLOSE_GRACE", 0.5)
    real = processes.ProcessFrames._submit

    def hanging(self, pool, method, *args):
        if method == "front" and args[1] == 4:  # the third chunk's front
            return pool.submit(select.select, [], [], [])  # waits for nothing, forever
        return real(self, pool, method, *args)

    monkeypatch.setattr(processes.ProcessFrames, "_submit", hanging)
    B.reset()
    run = B.run_video(frames_of(SMALL, 24), workers=2, window=4, engine="processes", chunk=2)
    next(run)
    pids = processes.pool_for(B, B.program, 2, chain=True).pids()
    run.close()
    assert wait_for_exit(pids) == []
    assert shared_blocks() == set()
