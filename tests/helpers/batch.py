"""The batch mode's test inputs and its manifest, for the threads and the Ray batch tests alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.videos import write_video


def clip(path: Path, size: tuple[int, int] = (64, 96), frames: int = 5) -> str:
    """A short synthetic MJPG video at `path` (its folder made), as the path text cortex-run takes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(write_video(path, frames, size))


def manifest(out: Path) -> list[dict[str, Any]]:
    """The records of `out/manifest.jsonl`, one per video, in order."""
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]


def fake_run_one(args, calls: list | None = None, jpegs: int = 0, warnings: tuple[str, ...] = (), rc: int = 0) -> int:
    """Stands in for cortex-run's run_one in the batch's own tests (no compile): writes the video's
    scores.jsonl and summary.json (and `jpegs` frames into --encoded) from its arguments, as run_one would,
    and reports `warnings` from its source; appends the video to `calls`."""
    if calls is not None:
        calls.append(args.video)
    if args.encoded:
        folder = Path(args.encoded)
        folder.mkdir(parents=True, exist_ok=True)
        for i in range(jpegs):
            (folder / f"frame_{i:05d}.jpg").write_bytes(f"{args.mode} {i}".encode())
    Path(args.scores_jsonl).write_text(json.dumps({"video": args.video, "mode": args.mode}) + "\n")
    Path(args.summary_json).write_text(json.dumps({"frames": 3, "warnings": list(warnings)}) + "\n")
    args.frames_done, args.warnings = 3, list(warnings)
    return rc


def held_batch(out: str, video: str, *options: str, jpegs: int = 0) -> int:
    """A batch of one video in this process (a test's child): its run writes `jpegs` JPEGs, prints
    `started` and waits for a line on stdin before it returns; exits with the batch's code."""
    import sys

    from cortex.tools.batch import run_batch
    from cortex.tools.run_args import build_parser

    def run_one(args) -> int:
        fake_run_one(args, jpegs=jpegs)
        print("started", flush=True)
        sys.stdin.readline()
        return 0

    args = build_parser().parse_args([video, "--out-dir", out, "--quiet", *options])
    return run_batch(args, [video], run_one)


def spawn_held_batch(out, video, *options: str, jpegs: int = 0):
    """`held_batch` in a child process (stdin, stdout and stderr piped, text), at once."""
    import os
    import subprocess
    import sys

    tests = str(Path(__file__).resolve().parent.parent)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), tests) if p)}
    code = f"import sys; from helpers.batch import held_batch; sys.exit(held_batch(*sys.argv[1:], jpegs={jpegs}))"
    return subprocess.Popen([sys.executable, "-c", code, str(out), str(video), *options], env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def wait_started(child) -> None:
    """Until a `held_batch` child prints `started` (its video's run has begun)."""
    line = ""
    while child.stdout is not None and line.strip() != "started":
        line = child.stdout.readline()
        if not line:
            raise AssertionError(f"the batch ended before its run started: {child.stderr.read() if child.stderr else ''}")


def start_held_batch(out, video, *options: str, jpegs: int = 0):
    """`held_batch` in a child process, once its run has started (its `started` line read)."""
    child = spawn_held_batch(out, video, *options, jpegs=jpegs)
    wait_started(child)
    return child
