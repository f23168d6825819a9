"""cortex-run --out-dir: several videos as one batch job.

Each video writes into its own folder, DIR/<name>/, and DIR/manifest.jsonl records what was done under
which pipeline and options (`cortex.tools.manifest`: the folder names, the statuses, the locks), so a rerun
skips finished videos and a failed video is recorded instead of stopping the batch. docs/running.md,
"Batches", states the rules.

On Ray (`--engine ray`) each video is one task, spread over the cluster, and the driver writes every file:
a task writes the video's outputs into a scratch folder on its own node and returns them (scores,
summary, encoded JPEGs, overlay, report: name and bytes) with its result; the driver writes them into
DIR/<name>/ atomically, then the manifest. The nodes need not share a disk with the driver, nothing
is ever written on a node's disk outside its scratch folder (removed when the task ends), and a task
retried after its node was lost (`RAY_RETRIES` times) starts afresh in a new scratch folder: only the
attempt that returns is written, once. The inputs are read where the task runs, at their absolute
path: the videos and `--pipeline` must be readable at that path on every node (a read-only mount, a
copy per node). A video's outputs travel through Ray's object store: a long `--overlay` video is
held there whole once.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path, PurePath

from cortex.errors import CortexError
from cortex.tools.atomic import FrameFolder
from cortex.tools.manifest import FINISHED, Manifest, folder_stem, unique_folder
from cortex.tools.report import progress_bar
from cortex.tools.run_summary import finished_status

# the options that change a video's results: a different value makes the manifest's "done" stale
KEY_OPTIONS = ("pipeline", "entry", "mode", "weight", "passes", "post_passes", "blur_threshold", "backend",
               "device", "start", "frames", "size", "encoded", "overlay", "report", "side_by_side", "heat_scale")
NAMED_INSIDE = ("encoded", "overlay", "report")
PER_VIDEO = {"scores.jsonl": "the batch's own scores.jsonl", "summary.json": "the batch's own summary.json"}
"""The files the batch writes into every video's folder itself."""


def folder_names(names: list[str | None]) -> list[str]:
    """One folder per video (`manifest.folder_stem`); a repeated stem gets -2, -3 ... in argument order."""
    taken: set[str] = set()
    out = []
    for name in names:
        folder = unique_folder(folder_stem(name), taken, Path("/nonexistent-cortex-batch"))
        taken.add(folder.casefold())
        out.append(folder)
    return out


def check_inside(flag: str, value: str) -> None:
    """--encoded/--overlay/--report name a file inside the video's folder: never outside it."""
    path = PurePath(value)
    if path.is_absolute() or ".." in path.parts or not path.parts:
        raise CortexError(f"--{flag} {value}: with --out-dir, give a name inside each video's folder "
                          "(no absolute path, no '..')")


def check_output_names(args: argparse.Namespace) -> None:
    """The per-video output names, once for the whole batch: each inside the folder, none the same file as
    (or a folder around) another, nor the batch's own scores.jsonl and summary.json."""
    names = [(f"({what})", PurePath(name)) for name, what in PER_VIDEO.items()]
    for flag in NAMED_INSIDE:
        value = getattr(args, flag)
        if value:
            check_inside(flag, value)
            names.append((f"--{flag} {value}", PurePath(value)))
    for i, (flag, path) in enumerate(names):
        for other, other_path in names[:i]:
            a, b = [p.casefold() for p in path.parts], [p.casefold() for p in other_path.parts]
            if a[:len(b)] == b or b[:len(a)] == a:
                raise CortexError(f"{flag}: the same file as, or a folder around, {other} in each video's folder; "
                                  "give another name")


def options_key(args: argparse.Namespace) -> str:
    """A hash of Cortex's version, the pipeline file's content and the options that change results."""
    import cortex

    pipeline = args.pipeline or str(Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir")
    try:
        digest = hashlib.sha256(Path(pipeline).read_bytes())
    except OSError as e:
        raise CortexError(f"--pipeline {pipeline}: cannot read it: {e.strerror or e}") from None
    options = {k: getattr(args, k, None) for k in KEY_OPTIONS if k != "pipeline"}
    if getattr(args, "runner", None) == "reference":  # the interpreter: the key its runs had as --backend reference
        options["backend"] = "reference"
    options["cortex"] = cortex.__version__
    digest.update(json.dumps(options, sort_keys=True, default=str).encode())
    return digest.hexdigest()[:16]


def video_key(options: str, name: str | None) -> str:
    """`options_key` and the video file's size and modification time: a file replaced at the same path is
    run again."""
    stamp = ""
    if name is not None:
        try:
            info = os.stat(name)
            stamp = f"{info.st_size}:{info.st_mtime_ns}"
        except OSError:
            stamp = "missing"
    return hashlib.sha256(f"{options}\0{stamp}".encode()).hexdigest()[:16]


def video_args(args: argparse.Namespace, name: str | None, folder: Path) -> argparse.Namespace:
    one = copy.copy(args)
    one.video, one.more_videos, one.frames_done, one.out_dir = name, [], 0, None
    one.warnings = []
    one.scores_jsonl = str(folder / "scores.jsonl")
    one.summary_json = str(folder / "summary.json")
    for flag in NAMED_INSIDE:
        if getattr(args, flag):
            setattr(one, flag, str(folder / getattr(args, flag)))
    return one


def named(name: str | None, error: str) -> str:
    """`name: error`, unless the error already begins with the name (`in/x.avi: no such video file`)."""
    label = name or "synthetic"
    return error if error.startswith(f"{label}:") or error.startswith(f"{label} ") else f"{label}: {error}"


def empty_folder(folder: Path) -> None:
    """The video's folder, made or emptied (its entry already says `running`): it never mixes two runs' files."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        raise CortexError(f"{folder}: the video's folder is a symbolic link or not a folder; refusing to write there")
    folder.mkdir(exist_ok=True)
    for child in folder.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def claim(manifest: Manifest, names: list[str | None], keys: list[str], force: bool) -> list[tuple]:
    """Under the manifest's lock: each video skipped (done with its key, or run by another live batch) or
    given its folder and recorded `running`. Returns (ident, name, folder name, key) of the videos to run."""
    jobs: list[tuple[str, str | None, str, str]] = []
    with manifest.locked() as entries:
        taken = {e["folder"].casefold() for e in entries.values()}
        for name, key in zip(names, keys, strict=True):
            ident = os.path.abspath(name) if name else "synthetic"
            if any(job[0] == ident for job in jobs):
                print(f"{name or 'synthetic'}: given twice, run once")
                continue
            old = entries.get(ident)
            if old and old["status"] in FINISHED and old.get("key") == key and not force:
                print(f"{name or 'synthetic'}: done before (same video, pipeline and options), skipped"
                      + (" (it finished with warnings)" if old["status"] != "done" else ""))
                continue
            folder = old["folder"] if old else unique_folder(folder_stem(name), taken, manifest.out)
            if not manifest.hold(folder):
                print(f"{name or 'synthetic'}: being run by another batch into {manifest.out / folder}, skipped")
                continue
            taken.add(folder.casefold())
            entries[ident] = {"path": ident, "folder": folder, "status": "running", "key": key, "frames": 0,
                              "error": None, "warnings": [], "pid": os.getpid()}
            jobs.append((ident, name, folder, key))
    return jobs


def run_batch(args: argparse.Namespace, names: list[str | None], run_one: Callable[[argparse.Namespace], int],
              video_task: Callable | None = None) -> int:
    """Every video into DIR/<folder>/, the manifest after each; failures are recorded and named at the end."""
    for flag in ("scores_jsonl", "summary_json"):
        if getattr(args, flag):
            raise CortexError(f"--{flag.replace('_', '-')} and --out-dir: --out-dir writes each video's "
                              f"{'scores.jsonl' if flag == 'scores_jsonl' else 'summary.json'} itself")
    check_output_names(args)
    from cortex.semantics.modes import mode_weights

    mode_weights(args.mode)  # an unknown mode is the whole batch's error, not each video's
    out = Path(args.out_dir)
    if out.exists() and not out.is_dir():
        raise CortexError(f"--out-dir {out}: exists and is not a folder")
    out.mkdir(parents=True, exist_ok=True)
    manifest = Manifest(out)
    options = options_key(args)
    try:
        jobs = claim(manifest, names, [video_key(options, name) for name in names], args.force)
        return _run_jobs(args, names, jobs, manifest, run_one, video_task)
    finally:
        manifest.release_all()


def _run_jobs(args, names, jobs, manifest: Manifest, run_one, video_task) -> int:
    bar = progress_bar(len(jobs), False if args.quiet else (True if args.progress else None))
    bar.unit = "video"
    frames, failures, warned, start = 0, [], [], time.perf_counter()

    def record(ident: str, name: str | None, folder: str, rc: int, error: str, n: int, warnings: list[str]) -> None:
        nonlocal frames
        if rc and not error:
            error = f"exit {rc}"
        status = "failed" if error else finished_status(warnings)
        if error:
            failures.append(named(name, error))
        elif warnings:
            warned.append(name or "synthetic")
        with manifest.locked() as entries:
            key = entries.get(ident, {}).get("key")
            entries.pop(ident, None)  # re-added last: the manifest lists videos in the order they finished
            entries[ident] = {"path": ident, "folder": folder, "status": status, "frames": n if not error else 0,
                              "error": error or None, "warnings": list(warnings), "key": key}
        manifest.release(folder)
        frames += n if not error else 0
        bar.update(1)
        bar.set_postfix_str(f"{frames / max(time.perf_counter() - start, 1e-9):.1f} frames/s")

    if args.engine == "ray":
        _batch_on_ray(args, jobs, run_one, record, video_task, manifest.out)
    else:
        for ident, name, folder, _ in jobs:
            one = video_args(args, name, manifest.out / folder)
            rc, error = 0, ""
            try:
                empty_folder(manifest.out / folder)
                rc = run_one(one)
            except CortexError as e:
                error = str(e)
            except Exception as e:  # a bad frame or a decoder error: this video fails, the batch goes on
                error = f"{type(e).__name__}: {' '.join(str(e).split())}"
            if error:
                print(f"error: {named(name, error)}", file=sys.stderr)
            record(ident, name, folder, rc, error, one.frames_done, one.warnings)
            print()
    bar.close()
    seconds = time.perf_counter() - start
    print(f"{len(jobs)} videos run ({len(names) - len(jobs)} skipped), {frames} frames in {seconds:.2f} s: "
          f"{frames / max(seconds, 1e-9):.1f} frames/s overall (compile included); manifest: {manifest.path}")
    if warned:
        print(f"warning: {len(warned)} of {len(names)} videos finished with warnings (status done-with-warnings in "
              f"the manifest): {', '.join(warned)}", file=sys.stderr)
    if failures:
        raise CortexError(f"{len(failures)} of {len(names)} videos failed: {'; '.join(failures)}")
    return 0


RAY_RETRIES = 3
"""How many times a video's task is run again when its worker process or node dies (a video's outputs
are made from its inputs alone, in a scratch folder of the attempt: a retry gives the same files)."""


SCRATCH_PREFIX = "cortex-video-"
"""A task's scratch folder in the node's temporary directory: `cortex-video-<pid>-<random>`."""


def sweep_scratch(root: Path) -> list[Path]:
    """Remove the scratch folders under `root` whose process is gone (a task killed with its worker leaves
    its folder; the next task on that node removes it). Returns what it removed."""
    import shutil

    removed = []
    for path in root.glob(f"{SCRATCH_PREFIX}*-*"):
        pid = path.name[len(SCRATCH_PREFIX):].partition("-")[0]
        if not pid.isdigit() or not path.is_dir() or path.is_symlink():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # alive (or another user's: not ours to remove)
        except ProcessLookupError:
            pass
        except (PermissionError, OverflowError):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def video_on_node(args: argparse.Namespace, name: str | None, run_one: Callable[[argparse.Namespace], int],
                  video_task: Callable) -> tuple[int, str, int, list[str], dict[str, bytes]]:
    """One video in a Ray task: `video_task` with every output in a scratch folder of this node, then
    (exit code, what it printed, frames, the source's warnings, {path in the video's folder: bytes}); the
    scratch folder goes."""
    import shutil
    import tempfile

    sweep_scratch(Path(tempfile.gettempdir()))
    scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    try:
        rc, text, frames, warnings = video_task(video_args(args, name, scratch), run_one)
        files = {
            path.relative_to(scratch).as_posix(): path.read_bytes()
            for path in sorted(scratch.rglob("*")) if path.is_file() and not path.is_symlink()
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return rc, text, frames, warnings, files


def relocate_summary(files: dict[str, bytes], final: argparse.Namespace) -> None:
    """summary.json as a task wrote it names its outputs in the task's scratch folder: name them where the
    driver writes them (`final`: the video's arguments with its folder in DIR)."""
    data = files.get("summary.json")
    if data is None:
        return
    try:
        summary = json.loads(data)
    except ValueError:
        return  # not ours to judge here: written as returned
    if isinstance(summary, dict) and isinstance(summary.get("outputs"), dict):
        summary["outputs"] = {k: str(getattr(final, k, v) or v) for k, v in summary["outputs"].items()}
        files["summary.json"] = (json.dumps(summary, indent=2) + "\n").encode()


def write_video_files(folder: Path, files: dict[str, bytes]) -> None:
    """A task's outputs into the video's folder, each file atomically and inside the folder: a name that
    leaves it, or a subfolder or file there that is a symbolic link, is refused (as `FrameFolder` refuses a
    link among a run's JPEGs), never followed out of the folder."""
    for rel, data in files.items():
        parts = PurePath(rel).parts
        if not parts or PurePath(rel).is_absolute() or ".." in parts:
            raise CortexError(f"a Ray task returned the output {rel!r}, which is not inside {folder}")
        where = folder
        for part in parts[:-1]:
            where = where / part
            if where.is_symlink():
                raise CortexError(f"cannot write {folder / rel}: {where} is a symbolic link; "
                                  f"refusing to follow it out of {folder}")
            where.mkdir(exist_ok=True)
        files_here = FrameFolder(where)
        try:
            files_here.write(parts[-1], data)
        finally:
            files_here.close()


def _batch_on_ray(args, jobs, run_one, record, video_task, out: Path) -> None:
    """One Ray task per video (`video_on_node`), at most --workers at once; the driver writes each video's
    files as its task returns them, then records it (the module docstring says why)."""
    import ray

    from cortex.runtime.engines.ray import _get
    from cortex.runtime.threads import machine_cores

    task = ray.remote(num_cpus=1, max_retries=RAY_RETRIES)(video_on_node)
    limit = machine_cores() if args.workers is None else args.workers
    base = copy.copy(args)
    if base.pipeline:  # read where the task runs
        base.pipeline = os.path.abspath(base.pipeline)
    waiting, running = list(jobs), dict[object, tuple]()
    try:
        while waiting or running:
            while waiting and len(running) < limit:
                ident, name, folder, _ = waiting.pop(0)
                where = os.path.abspath(name) if name is not None and os.path.exists(name) else name
                running[task.remote(base, where, run_one, video_task)] = (ident, name, folder)
            done, _ = ray.wait(list(running), num_returns=1)
            ident, name, folder = running.pop(done[0])
            try:
                rc, text, n, warnings, files = _get(ray, done[0])
            except CortexError as e:  # its node lost more often than it is retried, ...
                rc, text, n, warnings, files = 1, f"error: {e}", 0, [], {}
            error = ""
            try:
                empty_folder(out / folder)
                relocate_summary(files, video_args(args, name, out / folder))
                write_video_files(out / folder, files)
            except (CortexError, OSError) as e:
                rc, error = rc or 1, f"writing its outputs: {e}"
            print(text.rstrip() + f"\n[{name or 'synthetic'}: a Ray worker]\n")
            for warning in warnings:
                print(f"warning: {warning}", file=sys.stderr)
            if rc and not error:
                lines = [line[len("error: "):] for line in text.splitlines() if line.startswith("error: ")]
                error = lines[-1] if lines else f"exit {rc}"
            record(ident, name, folder, rc, error, n if not rc else 0, warnings)
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
