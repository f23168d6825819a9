"""cortex-run's parallel runner: `--workers N`, `--engine threads|ray`, several input videos.

With the NumPy backend and more than one worker (or `--engine ray`), the
frames go through `LoadedProgram.run_video` (`cortex.runtime.engines`):
several frames in flight, the outputs in order and equal to the sequential
run, so `--scores-jsonl` is the same file whatever `--workers` is. The
summary gives frames/s; the stage table gives each stage's wall-clock and
CPU time per frame, whose sums exceed the run's own time per frame when
stages of different frames overlap. Several videos: with threads, one after
the other; with Ray, one task per video, spread over the cluster.
"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

import numpy as np

from cortex.errors import CortexError, whole_number
from cortex.runtime.pipeline import ENGINES
from cortex.runtime.threads import MAX_WORKERS, machine_cores
from cortex.tools.report import progress_bar

if TYPE_CHECKING:  # the runners load the compiler: imported when stage times are asked for, not for cortex-run --help
    from cortex.frame_runners import StageTimes


def add_arguments(p: argparse._ActionsContainer) -> None:
    p.add_argument("more_videos", nargs="*", metavar="VIDEO ...", help="more videos, run one after the other")
    p.add_argument(
        "--workers", type=int, default=None, metavar="N",
        help="frames in flight at once (numpy backend; default: the machine's cores, 1 on a live source; "
             "1: frame after frame)",
    )
    p.add_argument("--engine", choices=ENGINES, default="threads",
                   help="threads: worker threads in this process; processes: worker processes, past the GIL; "
                        "ray: Ray actors, on one or several machines (default: threads)")
    p.add_argument("--ray-address", metavar="ADDR", help="join this Ray cluster (default: start a local Ray)")
    p.add_argument("--out-dir", metavar="DIR",
                   help="a batch: per video DIR/<name>/ with scores.jsonl and summary.json (--encoded, --overlay, "
                        "--report then name files inside it), and DIR/manifest.jsonl; a rerun skips videos done "
                        "with the same pipeline and options; a failed video does not stop the others")
    p.add_argument("--force", action="store_true", help="with --out-dir: recompute videos the manifest says are done")


def videos(args: argparse.Namespace) -> list[str | None]:
    return [args.video, *args.more_videos] if args.more_videos else [args.video]


def run_each_video(args: argparse.Namespace, run_one: Callable[[argparse.Namespace], int]) -> int:
    """`run_one` per input video; with several, a last line with the frames/s over all of them."""
    names = videos(args)
    if args.workers is not None:
        whole_number("--workers", args.workers, 1, MAX_WORKERS)
    if args.engine == "ray":  # one Ray for all the videos (starting one takes seconds)
        from cortex.runtime.engines.ray import start_ray

        started = start_ray(args.ray_address)
        try:
            return _each_video(args, names, run_one)
        finally:
            if started:
                import ray

                ray.shutdown()
    return _each_video(args, names, run_one)


def _each_video(args: argparse.Namespace, names: list[str | None], run_one: Callable[[argparse.Namespace], int]) -> int:
    if getattr(args, "out_dir", None):
        from cortex.tools.batch import run_batch

        return run_batch(args, names, run_one, run_video_task)
    if args.force:
        raise CortexError("--force goes with --out-dir (it recomputes videos its manifest says are done)")
    if len(names) == 1:
        return run_one(args)
    for flag in ("scores_jsonl", "overlay", "encoded", "summary_json", "report"):
        if getattr(args, flag):
            raise CortexError(f"--{flag.replace('_', '-')} writes one video's outputs; give one video, not {len(names)}")
    frames, start = 0, time.perf_counter()
    if args.engine == "ray":
        frames = _videos_on_ray(args, names, run_one)
    else:
        for name in names:
            one = _one_video(args, name)
            rc = run_one(one)
            if rc:
                return rc
            frames += one.frames_done
            print()
    seconds = time.perf_counter() - start
    print(f"{len(names)} videos, {frames} frames in {seconds:.2f} s: {frames / seconds:.1f} frames/s overall (compile included)")
    return 0


def _one_video(args: argparse.Namespace, name: str | None) -> argparse.Namespace:
    one = copy.copy(args)
    one.video, one.more_videos, one.frames_done = name, [], 0
    return one


def run_video_task(args: argparse.Namespace,
                   run_one: Callable[[argparse.Namespace], int]) -> tuple[int, str, int, list[str]]:
    """One whole video in a Ray worker, frame after frame: (exit code, what it printed, frames, the source's
    warnings: a worker's stderr reaches no one, so the driver prints them)."""
    import contextlib
    import io

    from cortex.runtime.engines.ray import limit_library_threads

    limit_library_threads(1)
    out = io.StringIO()
    args = copy.copy(args)
    args.engine, args.workers, args.quiet = "threads", 1, True
    args.clock_origin = None  # another process: its clock starts with this task
    with contextlib.redirect_stdout(out):
        try:
            rc = run_one(args)
        except CortexError as e:
            print(f"error: {e}")
            rc = 1
        except Exception as e:  # a bad frame: this video fails, the driver goes on with the others
            print(f"error: {type(e).__name__}: {' '.join(str(e).split())}")
            rc = 1
    return rc, out.getvalue(), args.frames_done, list(getattr(args, "warnings", []))


def _videos_on_ray(args: argparse.Namespace, names: list[str | None], run_one) -> int:
    """Several videos spread over the Ray cluster: one task (one CPU) per video, at most --workers at once;
    each video's report is printed as it finishes. Returns the frames run."""
    import ray

    from cortex.runtime.engines.ray import _get

    task = ray.remote(num_cpus=1)(run_video_task)
    limit = machine_cores() if args.workers is None else args.workers
    waiting = list(names)
    running: dict = {}
    frames, failed = 0, 0
    try:
        while waiting or running:
            while waiting and len(running) < limit:
                name = waiting.pop(0)
                # workers may run elsewhere: a local file goes by its absolute path
                where = os.path.abspath(name) if name is not None and os.path.exists(name) else name
                running[task.remote(_one_video(args, where), run_one)] = name
            done, _ = ray.wait(list(running), num_returns=1)
            name = running.pop(done[0])
            rc, text, n, warnings = _get(ray, done[0])
            print(text.rstrip() + f"\n[{name or 'synthetic'}: a Ray worker]\n")
            for warning in warnings:
                print(f"warning: {warning}", file=sys.stderr)
            frames += n
            failed += rc != 0
    finally:
        for ref in running:
            ray.cancel(ref, force=True)
    if failed:
        raise CortexError(f"{failed} of {len(names)} videos failed (see above)")
    return frames


class ParallelRunner:
    """Frames of one video through `run_video`; timing per stage across the worker threads."""

    def __init__(self, compiled, workers: int, engine: str, address: str | None):
        self.compiled, self.workers, self.engine, self.address = compiled, workers, engine, address
        self.labels: dict[str, tuple[str, str]] = {}
        self.cpu_seconds = 0.0
        self.wall_seconds = 0.0

    @classmethod
    def maybe(cls, args: argparse.Namespace, backend) -> ParallelRunner | None:
        """A runner when this run is parallel (numpy backend, workers > 1 or Ray); None for the sequential loop."""
        workers = machine_cores() if args.workers is None else whole_number("--workers", args.workers, 1, MAX_WORKERS)
        if getattr(backend, "compiled", None) is None:  # the reference interpreter's runner
            if args.engine == "ray" or (args.workers or 1) > 1:
                raise CortexError("--workers/--engine need a compiled backend (the reference interpreter runs frame after frame)")
            return None
        if workers == 1 and args.engine == "threads":
            return None
        runner = cls(backend.compiled, workers, args.engine, args.ray_address)
        runner.labels = backend.labels
        return runner

    def describe(self) -> str:
        return f"frame-parallel, {self.workers} worker{'s' if self.workers != 1 else ''}, {self.engine}"

    def run_frames(self, frames: Iterable[np.ndarray], total: int | None, outputs=None,
                   probed: bool = False, progress: bool | None = False, log: bool = False,
                   line: Callable[[int, tuple, bool], str] | None = None,
                   header: Callable[[bool], str] | None = None) -> tuple[int, float, int]:
        """As `cortex_run.run_frames`: (frames, seconds, frames the blur gate skipped); seconds are wall-clock
        of the whole run minus the time spent writing outputs."""
        bar = progress_bar(total, progress)
        if log and header is not None:
            bar.write(header(probed), file=sys.stdout)
        count, skipped, writing = 0, 0, 0.0
        options = {"address": self.address} if self.engine == "ray" and self.address else {}
        held: list[np.ndarray] = []

        def source():
            for frame in frames:
                held.append(frame)
                yield frame

        start, cpu = time.perf_counter(), time.process_time()
        results_iter = self.compiled.run_video(
            source(), workers=self.workers, engine=self.engine, profile=self.engine == "threads", **options
        )
        try:
            for results in results_iter:
                frame = held.pop(0)
                t = time.perf_counter()
                if probed and results[3]:
                    skipped += 1
                if outputs:
                    outputs.write(count, frame, results, probed)
                if log and line is not None:
                    bar.write(line(count, results, probed), file=sys.stdout)
                count += 1
                bar.update(1)
                writing += time.perf_counter() - t
        finally:
            results_iter.close()  # on an error or Ctrl-C: the workers stop now, not when the traceback goes
            bar.close()
        self.wall_seconds = time.perf_counter() - start - writing
        self.cpu_seconds = time.process_time() - cpu
        return count, self.wall_seconds, skipped

    def stage_times(self) -> StageTimes:
        """Wall-clock and thread CPU seconds per stage, summed over frames and threads (threads engine)."""
        from cortex.frame_runners import StageTimes

        times = StageTimes()
        for label, section in self._sections().items():
            stage, kind = self._stage(label)
            times.add(stage, kind, section.seconds, calls=None, cpu_seconds=section.cpu_seconds)
        return times

    def _sections(self):
        if self.engine != "threads":
            return {}
        return self.compiled.loaded_split(profile=True).sections

    def _stage(self, label: str) -> tuple[str, str]:
        if label.startswith(f"{self.compiled.entry}__") or label == self.compiled.entry:
            return "(glue)", "compilable"
        return self.labels.get(label, (f"({label})", "compilable"))

    def overlap_table(self, frames: int) -> str:
        """Wall-clock and CPU per stage, and how much of it overlapped."""
        sections = self._sections()
        lines = [f"wall-clock and CPU time per stage ({frames} frames, {self.describe()})"]
        if not sections:
            lines.append(f"  (not collected on {self.engine} workers)")
        else:
            rows: dict[str, list[float]] = {}
            for label, s in sections.items():
                stage, _ = self._stage(label)
                row = rows.setdefault(stage, [0.0, 0.0])
                row[0] += s.seconds
                row[1] += s.cpu_seconds
            width = max(len("stage"), *(len(k) for k in rows))
            n = max(frames, 1)
            lines.append(f"  {'stage':<{width}}  {'wall ms/frame':>13}  {'CPU ms/frame':>12}")
            for stage, (wall, cpu) in rows.items():
                lines.append(f"  {stage:<{width}}  {1e3 * wall / n:>13.3f}  {1e3 * cpu / n:>12.3f}")
            staged = sum(r[0] for r in rows.values())
            lines.append(f"  {'all stages':<{width}}  {1e3 * staged / n:>13.3f}  {1e3 * sum(r[1] for r in rows.values()) / n:>12.3f}")
            if self.wall_seconds > 0:
                lines.append(
                    f"  the run: {1e3 * self.wall_seconds / n:.3f} ms/frame of wall-clock; stages overlapped "
                    f"{staged / self.wall_seconds:.2f}× on average"
                )
        if self.wall_seconds > 0:
            lines.append(
                f"  process CPU {self.cpu_seconds:.2f} s over {self.wall_seconds:.2f} s wall-clock: "
                f"{self.cpu_seconds / self.wall_seconds:.2f} cores busy of {machine_cores()}"
            )
        return "\n".join(lines)


__all__ = ["ParallelRunner", "add_arguments", "run_each_video", "videos"]
