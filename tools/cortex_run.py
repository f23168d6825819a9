"""cortex-run: compile the L2 pipeline and run it over a video, frame after frame.

    cortex-run                                  # bundled pipeline, synthetic video
    cortex-run clip.mp4 --mode power_save --frames 120 --overlay heat.mkv
    cortex-run --runner reference --scores-jsonl scores.jsonl

The pipeline is `examples/l2_pipeline.mlir` unless `--pipeline` names
another file. A shape-generic pipeline (`tensor<?x?x3xui8>` frames, as the
bundled one) is bound to the video's frame size before the first frame
(`cortex.passes.pad_frames.binding_pipeline`: where a side is no multiple of
the block, a `cortex.pad_frame` pads the frame in IR and the encoder crops
back) and compiled once. A pipeline built for one size runs videos of that
size. At the end it prints the per-stage table and what the mode's
dead-node elimination saves.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

# What the parser and main need, and nothing that loads xDSL or the dialect: `--help` and `--version`
# answer without them. The compiler's modules are imported where a run first needs them.
import cortex
from cortex.backends.backend import BACKENDS as COMPILED_BACKENDS
from cortex.errors import CortexError
from cortex.runtime.memory_policy import keep_freed_memory
from cortex.semantics.modes import BLUR_AUTO, INPUT_DEFAULTS, MODES, UnknownModeError, mode_weights
from cortex.tools import parallel_run, run_native
from cortex.tools.atomic import (
    Signalled,
    detach_stdout,
    install_signal_handlers,
    is_write_failure,
    remove_temporaries,
)
from cortex.tools.frame_log import frame_header, frame_line, run_frames
from cortex.tools.live_run import check_live_arguments, check_live_run, live_frame_loop
from cortex.tools.outputs import STDOUT, Outputs, check_output_paths
from cortex.tools.report import dce_summary
from cortex.tools.requests import ModedRun, plan_from_args
from cortex.tools.run_args import DEVICES, ENTRY, RUNNERS, backend_of, build_parser
from cortex.tools.run_summary import RunClock, RunSummary, library_threads, process_start
from cortex.video.live import is_live
from cortex.video.source import Seconds, parse_position
from cortex.video.synthetic import DEFAULT_SIZE

if TYPE_CHECKING:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ModuleOp

    from cortex.frame_runners import StageTimes
    from cortex.passes.expose_scene_change import SceneProbe
    from cortex.tools.report_html import ReportRecorder
    from cortex.tools.run_steps import RunSteps
    from cortex.video.source import VideoSource

__all__ = ["BUNDLED_PIPELINE", "DEVICES", "ENTRY", "RUNNERS", "build_parser", "main", "run_one"]

BUNDLED_PIPELINE = Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir"
SYNTHETIC_SIZE = DEFAULT_SIZE
"""The synthetic video's size when neither --size nor a static pipeline gives one."""


# --------------------------------------------------------------------------- pipeline


def entry_function(module: ModuleOp, entry: str) -> func.FuncOp:
    """`interpreter.calling.entry_function`, imported on first use (`--help` loads no xDSL)."""
    from cortex.interpreter.calling import entry_function as resolve

    return resolve(module, entry)


def frame_geometry(module: ModuleOp, entry: str) -> tuple[int | None, int | None, int]:
    """(H, W, block) of the pipeline: its frame argument and its score-map result
    (H and W None for a shape-generic pipeline, block from its ops)."""
    from xdsl.dialects.builtin import TensorType

    from cortex.passes.specialize_shapes import is_shape_generic, video_block

    fn = entry_function(module, entry)
    inputs, outputs = fn.function_type.inputs.data, fn.function_type.outputs.data
    frame_t = inputs[0] if inputs else None
    maps = [t for t in outputs if isinstance(t, TensorType) and t.get_num_dims() == 2]
    if not isinstance(frame_t, TensorType) or frame_t.get_num_dims() != 3 or not maps:
        raise CortexError(f"@{entry} must take a tensor<HxWx3xui8> frame and return a score map")
    if is_shape_generic(module, entry):
        return None, None, video_block(module, entry)
    h, w, _ = frame_t.get_shape()
    gh, gw = maps[-1].get_shape()
    if min(h, w, gh, gw) <= 0 or h % gh or w % gw or h // gh != w // gw:
        raise CortexError(f"@{entry}: the score map {gh}x{gw} is not a block grid of the {h}x{w} frame")
    return h, w, h // gh


def load_pipeline(path: str | None, entry: str | None) -> tuple[ModuleOp, str, tuple[int | None, int | None, int]]:
    """The pipeline, its entry (`--entry`, or the module's only public function, as `cortex.compile` picks it)
    and its frame geometry, checked before any frame."""
    from cortex.interpreter.calling import resolve_entry
    from cortex.tools.pipeline_check import check_signature

    where = path or "the bundled pipeline"
    module = cortex.parse(Path(path or BUNDLED_PIPELINE))
    try:
        entry = resolve_entry(module, entry)
    except CortexError as e:
        if entry is not None:
            raise
        raise CortexError(f"{where}: {str(e).replace('entry=...', '--entry NAME')}") from None
    check_signature(entry_function(module, entry), where)  # before any frame
    return module, entry, frame_geometry(module, entry)


def parse_size(text: str) -> tuple[int, int]:
    try:
        h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CortexError(f"--size must read HxW (e.g. 480x640), got '{text}'") from None
    if h <= 0 or w <= 0:
        raise CortexError(f"--size must be positive, got '{text}'")
    return h, w


# --------------------------------------------------------------------------- backends


def blas_line(runner, backend) -> str:
    """How many BLAS threads the run used and who set them (threadpoolctl), for the summary."""
    if runner is not None:
        from cortex.runtime.threads import machine_cores

        per = max(1, machine_cores() // max(runner.workers, 1))
        return f"BLAS threads: {per} per worker (threadpoolctl; {machine_cores()} cores ÷ {runner.workers} workers, OpenCV likewise)"
    compiled = getattr(backend, "compiled", None)
    if compiled is None:
        return "BLAS threads: the library's default (reference interpreter)"
    threads = compiled.blas_threads
    if threads is None:
        return "BLAS threads: the library's default (compiled.blas_threads = None)"
    if not getattr(compiled, "calls_blas", True):
        return f"BLAS threads: not held (the generated code calls no BLAS; compiled.blas_threads = {threads})"
    return f"BLAS threads: {threads} per call (threadpoolctl; compiled.blas_threads)"


def check_passes(passes: str) -> None:
    """Parse a `-p` pipeline now, so a typo fails before any video is opened."""
    from cortex.driver import build_pipeline

    try:
        build_pipeline(passes)
    except CortexError as e:
        raise CortexError(f"--passes: {e}") from None


def gate_inputs(setting: str) -> dict[str, float]:
    """The blur gate's runtime inputs for `--blur-threshold` (`auto` or a number)."""
    if setting == "auto":
        return dict(BLUR_AUTO)
    return {**INPUT_DEFAULTS, "blur_threshold": float(setting), "blur_fraction": 0.0}


def dce_report(args, module: ModuleOp, measured: StageTimes, frames: int, frame_seconds: float, source) -> str:
    """What the mode's dead-node elimination removes, priced with times of the unspecialised pipeline.

    The removed stages come from `cortex-dce`'s own report (on a copy of the
    module). Their price: the reference, run as written (weights at run
    time), has timed them already. A specialised run (numpy's default, or
    any `--passes`) never executed them, so the unspecialised pipeline on
    the same backend is profiled on the first `--dce-frames` frames.
    """
    from cortex.frame_runners import UNSPECIALISED, make_runner
    from cortex.passes.dce import eliminate_dead_nodes

    removed = eliminate_dead_nodes(module.clone(), args.mode).names
    if not removed:
        return dce_summary(args.mode, removed, {}, None)
    if getattr(source, "live", False) and not (args.runner == "reference" and not args.passes):
        return f"{dce_summary(args.mode, removed, {}, None)} [not priced: a live source is read once]"
    if args.runner == "reference" and not args.passes:
        return dce_summary(args.mode, removed, measured.ms_per_frame(frames), 1e3 * frame_seconds / max(frames, 1))
    if args.dce_frames <= 0:
        return dce_summary(args.mode, removed, {}, None)
    unspecialised = make_runner(
        backend_of(args), module, args.entry, args.mode, UNSPECIALISED[backend_of(args)], gate_inputs(args.blur_threshold),
        args.post_passes, device=args.device,
    )
    n, seconds, _ = run_frames(unspecialised, itertools.islice(source, args.dce_frames), None)
    line = dce_summary(args.mode, removed, unspecialised.stage_times().ms_per_frame(n), 1e3 * seconds / max(n, 1))
    return f"{line} [unspecialised {unspecialised.name} pipeline, {n} frames]"


def run(args: argparse.Namespace) -> int:
    check_live_run(args, parallel_run.videos(args))
    from cortex.tools.pipeline_check import parse_weights

    position_arg("--frames", args.frames)  # the checks that need no video, once: a batch refuses bad
    position_arg("--start", args.start)  # options up front, not once per video
    parse_weights(args.weight)
    check_arguments(args)
    return parallel_run.run_each_video(args, run_one)


def position_arg(flag: str, text: str | None) -> int | Seconds | None:
    """--start/--frames: a frame count or a time (`12.5s`), as a one-line error otherwise."""
    if text is None:
        return None
    text = str(text)
    if text.strip().startswith("-"):
        raise CortexError(f"{flag} must be >= 0, got {text.strip()}")
    try:
        return parse_position(text)
    except ValueError as e:
        raise CortexError(f"{flag}: {e}") from None


def output_roles(args: argparse.Namespace) -> tuple[tuple[tuple[str, str | None], ...], tuple[tuple[str, str | None], ...]]:
    """(the files the run reads, its outputs besides the per-frame ones), as `Outputs` checks them."""
    video = None if is_live(args.video) else args.video  # a pipe, a URL or a device is no file to protect
    return ((("the input video", video), ("--pipeline", args.pipeline)),
            (("--summary-json", args.summary_json), ("--report", args.report)))


@dataclass
class Prepared:
    """What `prepare` makes of the arguments before anything is compiled."""

    module: ModuleOp  # the pipeline, bound to the video and with the --weight overrides (what the reports show)
    probed_module: ModuleOp  # its copy with the probes, the one compiled
    source: VideoSource
    block: int
    padded: tuple[int, int]  # the frame size the pipeline scores: the video's, padded to the block grid in IR
    steps: RunSteps
    probed: bool  # the blur gate's values are results of the entry
    scene: SceneProbe | None  # where the scene measure is (--report), or None
    reads: tuple[tuple[str, str | None], ...]
    others: tuple[tuple[str, str | None], ...]


def check_arguments(args: argparse.Namespace) -> None:
    """The checks that need no pipeline and no video: a typo fails before any work."""
    check_live_arguments(args, is_live(args.video))
    if args.size and args.video and not is_live(args.video):
        raise CortexError("--size sizes the synthetic video, or raw frames on standard input ('-'); "
                          "a video file is run at its own size")
    if args.side_by_side and not (args.overlay or args.report):
        raise CortexError("--side-by-side needs --overlay or --report (their pictures)")
    plan_from_args(args, tuple(MODES))  # an unknown mode, a bad schedule line: before any work
    if args.passes:
        check_passes(args.passes)
    if args.post_passes and args.post_passes != "default":
        check_passes(args.post_passes)


def prepare(args: argparse.Namespace) -> Prepared:
    """Check the arguments, load the pipeline, open the video and run the run's own passes (`RunSteps`)."""
    from cortex.driver import run_passes
    from cortex.passes.pad_frames import binding_pipeline, scored_frame_size
    from cortex.tools.pipeline_check import check_weights, parse_weights
    from cortex.tools.run_steps import RunSteps
    from cortex.video.live import open_live
    from cortex.video.source import open_video

    frames_arg = position_arg("--frames", args.frames)
    start_arg = position_arg("--start", args.start) or 0
    check_arguments(args)
    check_not_an_image(args.video)
    reads, others = output_roles(args)
    check_output_paths(args.scores_jsonl, args.overlay, args.encoded, reads, others)  # before any compile
    module, args.entry, (h, w, block) = load_pipeline(args.pipeline, args.entry)
    size = parse_size(args.size) if args.size else (h or SYNTHETIC_SIZE[0], w or SYNTHETIC_SIZE[1])
    if is_live(args.video):
        source: VideoSource = open_live(args.video, size=parse_size(args.size) if args.size else None,
                                        pix_fmt=args.pix_fmt or "bgr24", fps=args.fps, frames=frames_arg, start=start_arg)
    else:
        source = open_video(args.video, frames=frames_arg, height=size[0], width=size[1], start=start_arg)
    if h is not None and source.size != (h, w):
        raise CortexError(
            f"{args.pipeline} is built for {h}x{w} frames, but the video's frames are "
            f"{source.size[0]}x{source.size[1]}: write its frame as tensor<?x?x3xui8> "
            "(as examples/l2_pipeline.mlir does) to run it on any size"
        )

    overrides = parse_weights(args.weight)
    check_weights(module, args.mode, mode_weights(args.mode), overrides)  # before any frame, not after the last
    others_args = [None] * (len(entry_function(module, args.entry).args) - 1)
    bind = "" if h is not None else binding_pipeline(module, args.entry, [(*source.size, 3), *others_args])
    steps = RunSteps(args.entry, bind, overrides, bool(args.report))
    if steps.preparation():
        run_passes(module, steps.preparation())
    probed_module = run_passes(module.clone(), steps.probes())
    probed, scene = steps.exposed(len(entry_function(module, args.entry).function_type.outputs),
                                  len(entry_function(probed_module, args.entry).function_type.outputs), probed_module)
    padded = scored_frame_size(module, args.entry)
    return Prepared(module, probed_module, source, block, padded, steps, probed, scene, reads, others)


def check_device(args: argparse.Namespace) -> None:
    """--device names a device the backend can run on (before compiling for it)."""
    if args.device == "cpu":
        return
    if args.runner == "reference":
        raise CortexError(f"--device {args.device} needs a compiled backend, not --runner reference")
    try:
        COMPILED_BACKENDS[args.backend].check_device(args.device)
    except CortexError as e:
        raise CortexError(f"--device {args.device}: {e}") from None


def open_outputs(args: argparse.Namespace, prep: Prepared) -> tuple[Outputs, ReportRecorder | None, dict]:
    """The run's outputs, the report's recorder (with --report) and the thread counts, sampled while frames run."""
    from cortex.tools.report_html import ReportRecorder

    outputs = Outputs(args.scores_jsonl, args.overlay, args.encoded, prep.source.fps, prep.block, args.mode,
                      args.side_by_side, scale=args.heat_scale, keep_ratio=encoder_threshold(prep.module),
                      inputs=prep.reads, others=prep.others, rows_stream=getattr(args, "rows_stream", None))
    outputs.frame_number = prep.source.frame_number
    recorder = ReportRecorder(prep.scene) if args.report else None
    if recorder is not None:
        outputs.recorders.append(recorder)
    threads: dict = {}
    outputs.on_frame = lambda index: threads or threads.update(library_threads())
    return outputs, recorder, threads


def frame_loop(args: argparse.Namespace, prep: Prepared, backend, runner, outputs: Outputs) -> tuple[int, float, int]:
    """Every frame through the backend (or the parallel runner); on any failure the outputs keep what is whole."""
    progress = False if args.quiet else (True if args.progress else None)
    source = prep.source
    try:
        if getattr(source, "live", False):
            frames, seconds, skipped, args.live_stats = live_frame_loop(args, prep, backend, runner, outputs,
                                                                        frame_line, frame_header)
            return frames, seconds, skipped
        if runner:
            return runner.run_frames(
                source, source.frame_count, outputs, prep.probed, progress, not args.no_frame_log,
                line=frame_line, header=frame_header,
            )
        return run_frames(
            backend, source, source.frame_count, outputs, prep.probed, progress, log=not args.no_frame_log
        )
    except BaseException:
        try:  # keep what is complete (whole records, a readable video); the error below is what counts
            outputs.close(finished=False)
        except CortexError:
            pass
        raise


def run_one(args: argparse.Namespace) -> int:
    """One video through the pipeline."""
    from cortex.frame_runners import make_runner, run_pipeline_text
    from cortex.tools.run_native import print_native_preview, warn_if_nothing_native

    # End to end: as a program, the first video's clock starts with the process (imports count);
    # called from Python (main(argv)), and for the next videos, it starts here.
    box = getattr(args, "clock_origin", None)  # a list shared by the per-video copies of args: the first takes it
    origin, since = box.pop() if box else (time.perf_counter(), "this video's start")
    clock = RunClock(origin=origin, since=since)
    prep = prepare(args)
    weights = gate_inputs(args.blur_threshold)
    clock.compile_start = time.perf_counter()
    check_device(args)
    if args.print_pipeline:
        print(prep.steps.text(run_pipeline_text(backend_of(args), args.entry, args.mode, args.passes, weights,
                                               args.post_passes, device=args.device)))
        print_native_preview(args, prep, weights)
        return 0
    backend = make_runner(backend_of(args), prep.probed_module, args.entry, args.mode, args.passes, weights,
                           args.post_passes, device=args.device, modes=args.requests.modes)
    if args.requests.modes is not None:
        backend = ModedRun(backend, args.requests)
    clock.compile_end = time.perf_counter()
    warn_if_nothing_native(backend)
    if getattr(prep.source, "live", False) and args.workers is None:
        args.workers = 1  # a live source: each row as soon as its frame is done (see docs/running.md)
    runner = parallel_run.ParallelRunner.maybe(args, backend)  # None: frame after frame

    outputs, recorder, threads = open_outputs(args, prep)
    if isinstance(backend, ModedRun):
        backend.outputs = outputs
    clock.loop_start = time.perf_counter()
    frames, seconds, skipped = frame_loop(args, prep, backend, runner, outputs)
    clock.loop_end = time.perf_counter()
    if not frames:  # nothing to show: empty outputs would pass for a run
        outputs.discard()
        reasons = "; ".join(prep.source.warnings()) or f"{prep.source.name} gave no frame"
        raise CortexError(f"no frame processed ({reasons}): no output written")
    outputs.close()
    for note in outputs.notes:
        print(f"note: {note}", file=sys.stderr)
    clock.outputs_closed = time.perf_counter()
    clock.pipeline_seconds = seconds
    args.frames_done = frames
    args.warnings = prep.source.warnings()  # into the summary, and a batch's manifest
    for warning in args.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    summary = summarise(args, prep, backend, runner, clock, (frames, seconds, skipped), threads)
    if args.summary_json:
        write_summary_json(args.summary_json, summary)
    if recorder is not None:
        from cortex.passes.dce import eliminate_dead_nodes
        from cortex.tools.report_html import write_report

        write_report(args.report, summary, prep.module, recorder, eliminate_dead_nodes(prep.module.clone(), args.mode).names)
    return live_exit_code(summary)


def summarise(args: argparse.Namespace, prep: Prepared, backend, runner, clock: RunClock,
              counts: tuple[int, float, int], threads: dict) -> RunSummary:
    """Print the end-of-run summary, the stage table and the DCE line; the summary for --summary-json/--report."""
    frames, seconds, skipped = counts
    source = prep.source
    ph, pw = prep.padded
    padded = f" (padded {ph}x{pw})" if prep.padded != source.size else ""
    print(
        f"{source.name}: {source.size[0]}x{source.size[1]}{padded}, {frames} frames, mode {args.requests.label}, "
        f"backend {backend.name} (compiled in {clock.compile_end - clock.compile_start:.2f} s)"
    )
    summary = RunSummary(
        source.name, source.size, prep.padded, frames, args.requests.label, backend.name, clock,
        engine=runner.describe() if runner else "sequential", parallel=runner is not None,
        workers=runner.workers if runner else 1, skipped=skipped if prep.probed else None,
        blur_threshold=args.blur_threshold if prep.probed else None, threads=threads,
        outputs={k: str(v) for k, v in (("scores_jsonl", args.scores_jsonl), ("overlay", args.overlay),
                                        ("encoded", args.encoded)) if v},
        memory=getattr(args, "memory", ""), warnings=list(args.warnings), native=run_native.native_of(backend),
    )
    summary.live = getattr(args, "live_stats", None)
    summary.frames_per_mode = dict(backend.frames_per_mode) if isinstance(backend, ModedRun) else {args.mode: frames}
    if isinstance(backend, ModedRun) and not runner:
        summary.ms_per_mode = {m: 1e3 * s / backend.frames_per_mode[m] for m, s in backend.seconds_per_mode.items()}
    gate = f"; {skipped} skipped by the blur gate ({args.blur_threshold})" if prep.probed else ""
    how = f" ({runner.describe()})" if runner else ""
    print(f"{summary.text()}\n  {frames} frames{how}{gate}; per mode: {summary.per_mode_text()}")
    for line in summary.native:
        print(f"  {line}")
    if summary.live is not None:
        print(summary.live.text())
    print(blas_line(runner, backend))
    times = (runner or backend).stage_times()
    summary.stages = times
    print(times.table(frames, seconds, title="per-stage time, averaged over all frames"))
    if runner:
        print(runner.overlap_table(frames))
    print(dce_report(args, prep.module, times, frames, seconds, source))
    for line in getattr(getattr(backend, "compiled", None), "mode_report", []):  # a multi-mode program's states
        print(line)
    return summary


IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp", ".ppm", ".pgm", ".pbm",
                            ".jp2", ".exr", ".hdr", ".pfm", ".pnm", ".sr", ".ras", ".avif"})


def check_not_an_image(path: str | None) -> None:
    """Refuse a still image given as the video: OpenCV would read it (and its numbered siblings,
    photo_001.jpg → photo_002.jpg ...) as an image sequence, not as the one file named."""
    if not path or not os.path.isfile(path) or Path(path).suffix.lower() not in IMAGE_SUFFIXES:
        return
    import cv2

    if cv2.haveImageReader(path):
        raise CortexError(f"{path}: is an image, not a video (cortex-run reads video files: .mp4, .avi, .mkv ...)")


def encoder_threshold(module: ModuleOp) -> float | None:
    """The pipeline's encoder threshold (blocks scoring >= it x the frame's max stay sharp); None without one."""
    from cortex.dialects import EncoderOp

    for op in module.walk():
        if isinstance(op, EncoderOp):
            return float(op.threshold.value.data)
    return None


def write_summary_json(path: str, summary: RunSummary) -> None:
    import json

    from cortex.tools.atomic import write_bytes_atomic

    write_bytes_atomic(path, (json.dumps(summary.to_json(), indent=2) + "\n").encode())


def main(argv: Sequence[str] | None = None) -> int:
    """The program (`argv` None: the command line, and the end-to-end clock starts with the process)."""
    started = (process_start(), "process start") if argv is None else (time.perf_counter(), "cortex-run's start")
    if argv is None:
        install_signal_handlers()  # SIGTERM/SIGHUP unwind like Ctrl-C: no temporary file is left behind
    args = build_parser().parse_args(argv)
    from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

    args.clock_origin = [started]
    if argv is not None:  # called as a function: the host process's allocator is not ours to retune
        args.memory = "memory: the host process's malloc policy (cortex-run called in-process)"
    elif args.return_memory:
        args.memory = "memory: glibc's default (freed memory goes back to the OS; each frame faults it in again)"
    else:
        args.memory = keep_freed_memory()
    try:
        with rows_on_stdout(args):
            return run(args)
    except BrokenPipeError:  # `cortex-run | head`: the reader has gone, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        if is_write_failure(e):  # standard output itself is full (> /dev/full, a full disk)
            detach_stdout()
            print(f"error: cannot write standard output: {e.strerror or e}", file=sys.stderr)
        else:
            print(f"error: {e}", file=sys.stderr)
        return 1
    except (CortexError, UnknownModeError, ParseError, DiagnosticException, ArgSpecParseError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        remove_temporaries()
        print("error: interrupted", file=sys.stderr)
        return 130
    except Signalled as e:
        remove_temporaries()
        print(f"error: terminated by {e}", file=sys.stderr)
        return e.code
    except Exception as e:  # a bug, not bad input: still one line (rerun with --debug for the traceback)
        if args.debug:
            raise
        print(f"error: internal error: {type(e).__name__}: {' '.join(str(e).split())} (rerun with --debug)", file=sys.stderr)
        return 2


def live_exit_code(summary: RunSummary) -> int:
    """0, or 128 + the signal that stopped a live source's input (every output of the frames done is written)."""
    stopped = summary.live.stopped_by if summary.live is not None else None
    if stopped is None:
        return 0
    import signal

    print(f"note: the input was stopped by {stopped}; the {summary.frames} frames read before it are written",
          file=sys.stderr)
    return 128 + int(signal.Signals[stopped])


@contextlib.contextmanager
def rows_on_stdout(args: argparse.Namespace) -> Iterator[None]:
    """With `--scores-jsonl -`: standard output carries the rows alone; everything printed goes to stderr."""
    if args.scores_jsonl != STDOUT:
        yield
        return
    args.rows_stream = sys.stdout
    with contextlib.redirect_stdout(sys.stderr):
        yield


if __name__ == "__main__":
    sys.exit(main())
