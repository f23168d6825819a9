"""cortex-run --out-dir: several videos as one batch job.

Each video writes into its own folder, DIR/<stem>/, and DIR/manifest.jsonl (rewritten atomically after
each video) records what was done under which pipeline and options, so a rerun skips finished videos and
a failed video is recorded instead of stopping the batch.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path, PurePath

from cortex.errors import CortexError
from cortex.tools.atomic import write_bytes_atomic
from cortex.tools.report import progress_bar

# the options that change a video's results: a different value makes the manifest's "done" stale
KEY_OPTIONS = ("pipeline", "entry", "mode", "weight", "passes", "post_passes", "blur_threshold", "backend",
               "device", "start", "frames", "size", "encoded", "overlay", "report", "side_by_side", "heat_scale")
NAMED_INSIDE = ("encoded", "overlay", "report")
MANIFEST = "manifest.jsonl"


def folder_names(names: list[str | None]) -> list[str]:
    """One folder per video, its stem; a repeated stem gets -2, -3 ... in argument order."""
    used: set[str] = set()
    out = []
    for name in names:
        stem = Path(name).stem if name else "synthetic"
        candidate, n = stem, 1
        while candidate in used:
            n += 1
            candidate = f"{stem}-{n}"
        used.add(candidate)
        out.append(candidate)
    return out


def check_inside(flag: str, value: str) -> None:
    """--encoded/--overlay/--report name a file inside the video's folder: never outside it."""
    path = PurePath(value)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise CortexError(f"--{flag} {value}: with --out-dir, give a name inside each video's folder "
                          "(no absolute path, no '..')")


def options_key(args: argparse.Namespace) -> str:
    """A hash of the pipeline text and the options that change results."""
    import cortex

    pipeline = args.pipeline or str(Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir")
    digest = hashlib.sha256(Path(pipeline).read_bytes())
    options = {k: getattr(args, k, None) for k in KEY_OPTIONS if k != "pipeline"}
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def read_manifest(path: Path) -> dict[str, dict]:
    if not path.exists():
        return {}
    entries = {}
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a damaged line: that video is simply run again
        if isinstance(entry, dict) and "path" in entry:
            entries[str(entry["path"])] = entry
    return entries


def write_manifest(path: Path, entries: dict[str, dict]) -> None:
    write_bytes_atomic(path, "".join(json.dumps(e, sort_keys=True) + "\n" for e in entries.values()).encode())


def video_args(args: argparse.Namespace, name: str | None, folder: Path) -> argparse.Namespace:
    one = copy.copy(args)
    one.video, one.more_videos, one.frames_done, one.out_dir = name, [], 0, None
    one.scores_jsonl = str(folder / "scores.jsonl")
    one.summary_json = str(folder / "summary.json")
    for flag in NAMED_INSIDE:
        if getattr(args, flag):
            setattr(one, flag, str(folder / getattr(args, flag)))
    return one


def run_batch(args: argparse.Namespace, names: list[str | None], run_one: Callable[[argparse.Namespace], int],
              video_task: Callable | None = None) -> int:
    """Every video into DIR/<stem>/, the manifest after each; failures are recorded and named at the end."""
    for flag in ("scores_jsonl", "summary_json"):
        if getattr(args, flag):
            raise CortexError(f"--{flag.replace('_', '-')} and --out-dir: --out-dir writes each video's "
                              f"{'scores.jsonl' if flag == 'scores_jsonl' else 'summary.json'} itself")
    for flag in NAMED_INSIDE:
        if getattr(args, flag):
            check_inside(flag, getattr(args, flag))
    from cortex.semantics.modes import mode_weights

    mode_weights(args.mode)  # an unknown mode is the whole batch's error, not each video's
    out = Path(args.out_dir)
    if out.exists() and not out.is_dir():
        raise CortexError(f"--out-dir {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / MANIFEST
    entries = read_manifest(manifest_path)
    key = options_key(args)
    jobs = []
    for name, stem in zip(names, folder_names(names), strict=True):
        ident = os.path.abspath(name) if name else "synthetic"
        done = entries.get(ident)
        if done and done.get("status") == "done" and done.get("key") == key and not args.force:
            print(f"{name or 'synthetic'}: done before (same pipeline and options), skipped")
            continue
        folder = out / stem
        folder.mkdir(exist_ok=True)
        jobs.append((ident, name, folder, video_args(args, name, folder)))
    bar = progress_bar(len(jobs), False if args.quiet else (True if args.progress else None))
    bar.unit = "video"
    frames, failures, start = 0, [], time.perf_counter()

    def record(ident: str, name: str | None, folder: Path, rc: int, error: str, n: int) -> None:
        nonlocal frames
        status = "done" if rc == 0 and not error else "failed"
        if status == "failed":
            failures.append(f"{name or 'synthetic'} ({error or f'exit {rc}'})")
        entries[ident] = {"path": ident, "folder": folder.name, "status": status, "frames": n,
                          "error": error or None, "key": key}
        write_manifest(manifest_path, entries)
        frames += n
        bar.update(1)
        bar.set_postfix_str(f"{frames / max(time.perf_counter() - start, 1e-9):.1f} frames/s")

    if args.engine == "ray":
        _batch_on_ray(args, jobs, run_one, record, video_task)
    else:
        for ident, name, folder, one in jobs:
            rc, error = 0, ""
            try:
                rc = run_one(one)
            except CortexError as e:
                error = str(e)
            except Exception as e:  # a bad frame or a decoder error: this video fails, the batch goes on
                error = f"{type(e).__name__}: {' '.join(str(e).split())}"
            if error:
                print(f"error: {name or 'synthetic'}: {error}", file=sys.stderr)
            record(ident, name, folder, rc, error, one.frames_done if not error else 0)
            print()
    bar.close()
    seconds = time.perf_counter() - start
    print(f"{len(jobs)} videos run ({len(names) - len(jobs)} skipped), {frames} frames in {seconds:.2f} s: "
          f"{frames / max(seconds, 1e-9):.1f} frames/s overall (compile included); manifest: {manifest_path}")
    if failures:
        raise CortexError(f"{len(failures)} of {len(names)} videos failed: {'; '.join(failures)}")
    return 0


def _batch_on_ray(args, jobs, run_one, record, video_task) -> None:
    """One Ray task per video (`video_task`: one whole video in a worker); the driver records each result."""
    import ray

    from cortex.runtime.ray_executor import _get
    from cortex.runtime.threads import machine_cores

    task = ray.remote(num_cpus=1)(video_task)
    limit = machine_cores() if args.workers is None else args.workers
    waiting, running = list(jobs), dict[object, tuple]()
    try:
        while waiting or running:
            while waiting and len(running) < limit:
                ident, name, folder, one = waiting.pop(0)
                one = copy.copy(one)
                if name is not None and os.path.exists(name):
                    one.video = os.path.abspath(name)
                for flag in ("scores_jsonl", "summary_json", *NAMED_INSIDE):
                    if getattr(one, flag):
                        setattr(one, flag, os.path.abspath(getattr(one, flag)))
                running[task.remote(one, run_one)] = (ident, name, folder)
            done, _ = ray.wait(list(running), num_returns=1)
            ident, name, folder = running.pop(done[0])
            rc, text, n = _get(ray, done[0])
            print(text.rstrip() + f"\n[{name or 'synthetic'}: a Ray worker]\n")
            error = ""
            if rc:
                lines = [line[len("error: "):] for line in text.splitlines() if line.startswith("error: ")]
                error = lines[-1] if lines else f"exit {rc}"
            record(ident, name, folder, rc, error, n if not rc else 0)
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
