"""cortex-run: compile the L2 pipeline and run it over a video, frame after frame.

    cortex-run                                  # bundled pipeline, synthetic video
    cortex-run clip.mp4 --mode power_save --frames 120 --overlay heat.mp4
    cortex-run --backend reference --scores-jsonl scores.jsonl

The pipeline is `examples/l2_pipeline.mlir` unless `--pipeline` names
another file. A video whose size differs from the bundled pipeline's gets
the pipeline rebuilt for its padded size (`build_l2_pipeline`), compiled
once; frames are padded by the video source. At the end it prints the
per-stage table and what the mode's dead-node elimination saves.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, TensorType
from xdsl.ir import Operation
from xdsl.passes import PassPipeline
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

import cortex
from cortex.dialects import BlurDetectorOp, op_kind
from cortex.dialects.modes import MODES, UnknownModeError, mode_weights
from cortex.errors import CortexError
from cortex.examples.l2_pipeline import ENTRY, build_l2_pipeline
from cortex.passes.dce import eliminate_dead_nodes
from cortex.registry import all_passes
from cortex.tools import parallel_run
from cortex.tools.report import OverlayWriter, ProgressBar, StageTimes, dce_summary, stage_name

BUNDLED_PIPELINE = Path(cortex.__file__).resolve().parent / "examples" / "l2_pipeline.mlir"
BACKENDS = ("numpy", "reference")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cortex-run",
        description="Compile the Cortex L2 ROI-scoring pipeline and run it over a video.",
    )
    p.add_argument("video", nargs="?", help="video file read with OpenCV (default: the built-in synthetic video)")
    p.add_argument("--pipeline", metavar="FILE", help="pipeline .mlir file (default: the bundled l2_pipeline.mlir)")
    p.add_argument("--entry", default=ENTRY, help=f"per-frame function (default: {ENTRY})")
    p.add_argument("--mode", default="balanced", help=f"request type: {' | '.join(MODES)} (default: balanced)")
    p.add_argument("--frames", type=int, default=60, metavar="N", help="frames to run (default: 60)")
    p.add_argument("--backend", choices=BACKENDS, default="numpy", help="numpy (compiled) or reference (default: numpy)")
    p.add_argument(
        "--passes",
        metavar="PIPELINE",
        help="optimisation pipeline, as for cortex-opt -p (numpy default: mode specialisation, canonicalize, dce)",
    )
    p.add_argument(
        "--post-passes",
        metavar="PIPELINE",
        default="default",
        help="passes on the lowered module, numpy backend (default: elementwise fusion, "
        "cortex-fuse-linalg-elementwise; '' for none)",
    )
    p.add_argument("--size", metavar="HxW", help="size of the synthetic video (default: the pipeline's frame size)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument(
        "--no-frame-log", action="store_true", help="no per-frame line (sharpness, score mean/max, JPEG size)"
    )
    p.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)  # internal errors with a traceback
    p.add_argument(
        "--scores-jsonl",
        metavar="FILE",
        help="one JSON object per frame: index, blurred (the blur gate skipped scoring), sharpness, encoded_bytes, score",
    )
    p.add_argument("--overlay", metavar="DIR_OR_VIDEO", help="score heat maps: PNGs into a directory, or a .mp4/.avi")
    p.add_argument(
        "--encoded", metavar="DIR", help="write the encoder's JPEG of each frame as DIR/frame_NNNNN.jpg (cropped back to the video's size)"
    )
    p.add_argument(
        "--dce-frames",
        type=int,
        default=10,
        metavar="N",
        help="frames of the unspecialised pipeline run to price the mode's DCE when this run is specialised (default: 10; 0: skip)",
    )
    parallel_run.add_arguments(p)  # --workers, --engine, several videos (issue 8)
    return p


# --------------------------------------------------------------------------- pipeline


def entry_function(module: ModuleOp, entry: str) -> func.FuncOp:
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.sym_name.data == entry:
            return op
    raise CortexError(f"the pipeline has no function @{entry}")


def frame_geometry(module: ModuleOp, entry: str) -> tuple[int, int, int]:
    """(H, W, block) of the pipeline: its frame argument and its score-map result."""
    fn = entry_function(module, entry)
    inputs, outputs = fn.function_type.inputs.data, fn.function_type.outputs.data
    frame_t = inputs[0] if inputs else None
    maps = [t for t in outputs if isinstance(t, TensorType) and t.get_num_dims() == 2]
    if not isinstance(frame_t, TensorType) or frame_t.get_num_dims() != 3 or not maps:
        raise CortexError(f"@{entry} must take a tensor<HxWx3xui8> frame and return a score map")
    h, w, _ = frame_t.get_shape()
    gh, gw = maps[-1].get_shape()
    if min(h, w, gh, gw) <= 0 or h % gh or w % gw or h // gh != w // gw:
        raise CortexError(f"@{entry}: the score map {gh}x{gw} is not a block grid of the {h}x{w} frame")
    return h, w, h // gh


def load_pipeline(path: str | None, entry: str) -> tuple[ModuleOp, tuple[int, int, int]]:
    module = cortex.parse(Path(path or BUNDLED_PIPELINE))
    return module, frame_geometry(module, entry)


def parse_size(text: str) -> tuple[int, int]:
    try:
        h, w = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CortexError(f"--size must read HxW (e.g. 480x640), got '{text}'") from None
    if h <= 0 or w <= 0:
        raise CortexError(f"--size must be positive, got '{text}'")
    return h, w


# --------------------------------------------------------------------------- probes


def expose_blur_gate(module: ModuleOp, entry: str) -> bool:
    """Make @entry also return the blur gate's sharpness (f32) and condition (i1).

    The per-frame JSON wants the sharpness and whether scoring was skipped;
    both are SSA values of the pipeline. Returning them as extra results
    (after the original ones, before any state the lowering appends) gets
    the exact values of this very run from either backend, with no hook in
    the backends and no recomputation. The gate is the top-level `scf.if`
    whose condition compares a `cortex.blur_detector` result; a pipeline
    without one is left alone (returns False).
    """
    fn = entry_function(module, entry)
    for op in fn.body.block.ops:
        if not (isinstance(op, scf.IfOp) and isinstance(op.cond.owner, arith.CmpfOp)):
            continue
        sharpness = [v for v in op.cond.owner.operands if isinstance(v.owner, BlurDetectorOp)]
        if not sharpness:
            continue
        ret = fn.body.block.last_op
        assert isinstance(ret, func.ReturnOp)
        extra = [sharpness[0], op.cond]
        Rewriter.replace_op(ret, func.ReturnOp(*ret.arguments, *extra))
        outputs = [*fn.function_type.outputs.data, *(v.type for v in extra)]
        fn.function_type = func.FunctionType.from_lists(fn.function_type.inputs.data, outputs)
        if fn.res_attrs is not None:
            fn.res_attrs = ArrayAttr([*fn.res_attrs.data, *(DictionaryAttr({}) for _ in extra)])
        return True
    return False


# --------------------------------------------------------------------------- backends


def stage_table(module: ModuleOp) -> dict[str, tuple[str, str]]:
    """Origin label → (stage, kind) for every cortex op: by result name (`saliency`) and op name."""
    table: dict[str, tuple[str, str]] = {}
    for op in module.walk():
        if op.name.startswith("cortex."):
            entry = (stage_name(op.name), op_kind(op))
            table[op.name] = entry
            if op.results and op.results[0].name_hint:
                table.setdefault(op.results[0].name_hint, entry)
    return table


class ReferenceBackend:
    """The eager reference interpreter; per-stage times from its `op_timer` hook."""

    name = "reference"

    def __init__(self, module: ModuleOp, entry: str, mode: str, passes: str | None):
        from cortex.interpreter.reference import ReferenceRunner

        if passes:
            module = cortex.run_passes(module.clone(), passes)
        self.times = StageTimes()
        self.runner = ReferenceRunner(module, entry=entry, mode=mode, op_timer=self._on_op)

    def _on_op(self, op: Operation, seconds: float) -> None:
        self.times.add(stage_name(op.name), op_kind(op), seconds)

    def __call__(self, frame: np.ndarray) -> tuple:
        return self.runner(frame)

    def stage_times(self, reset: bool = False) -> StageTimes:
        """Seconds per stage since the start (or the last reset)."""
        times = self.times
        if reset:
            self.times = StageTimes()
        return times


class NumpyBackend:
    """The compiled NumPy backend, profiled per source op (`CompiledPipeline.profile()`)."""

    name = "numpy"

    def __init__(
        self, module: ModuleOp, entry: str, mode: str, passes: str | None, profiling: bool = True, post_passes: str | None = "default"
    ):
        self.labels = stage_table(module)
        self.labels[entry] = ("(glue)", "compilable")  # ops with no cortex origin: the gate, returns
        self.compiled = cortex.compile(module, entry=entry, mode=mode, passes=passes, post_passes=post_passes)
        self.compiled.profiling = profiling

    def __call__(self, frame: np.ndarray) -> tuple:
        return self.compiled(frame)

    def stage_times(self, reset: bool = False) -> StageTimes:
        """Seconds per stage since the start (or the last reset)."""
        times = StageTimes()
        for label, seconds in self.compiled.profile(reset=reset).items():
            stage, kind = self.labels.get(label, (f"({label})", "compilable"))
            times.add(stage, kind, seconds, calls=None)
        return times


def default_passes(backend: str, mode: str) -> str | None:
    """numpy: specialise the mode and clean up, so zero-weight stages are never computed."""
    return f"cortex-specialize-mode{{mode={mode}}},canonicalize,dce" if backend == "numpy" else None


def check_passes(passes: str) -> None:
    """Parse a `-p` pipeline now, so a typo fails before any video is opened."""
    try:
        PassPipeline.parse_spec(all_passes(), passes)
    except (ValueError, ArgSpecParseError) as e:
        raise CortexError(f"--passes: {' '.join(str(e).split())}") from None


UNSPECIALISED = {"numpy": "canonicalize,dce", "reference": ""}
"""Passes that keep every stage: what the mode's DCE is priced against."""


def make_backend(backend: str, module: ModuleOp, entry: str, mode: str, passes: str | None, post_passes: str | None = "default"):
    passes = passes if passes is not None else default_passes(backend, mode)
    if backend == "numpy":
        return NumpyBackend(module, entry, mode, passes, post_passes=post_passes)
    return ReferenceBackend(module, entry, mode, passes)


# --------------------------------------------------------------------------- main loop


class Outputs:
    """The optional per-frame outputs: JSONL scores, heat-map overlays, encoded JPEGs."""

    def __init__(self, args: argparse.Namespace, fps: float, block: int):
        self.jsonl = open(args.scores_jsonl, "w") if args.scores_jsonl else None  # noqa: SIM115
        self.overlay = OverlayWriter(args.overlay, fps, block) if args.overlay else None
        self.encoded = Path(args.encoded) if args.encoded else None
        if self.encoded:
            self.encoded.mkdir(parents=True, exist_ok=True)

    def write(self, index: int, frame: np.ndarray, results: tuple, probed: bool) -> None:
        encoded, score = results[0], results[1]
        if self.jsonl:
            record = {
                "index": index,
                "blurred": bool(results[3]) if probed else None,
                "sharpness": float(results[2]) if probed else None,
                "encoded_bytes": int(encoded.size),
                "score": np.asarray(score, np.float32).tolist(),
            }
            self.jsonl.write(json.dumps(record) + "\n")
        if self.overlay:
            self.overlay.write(frame, score)
        if self.encoded:
            (self.encoded / f"frame_{index:05d}.jpg").write_bytes(np.asarray(encoded, np.uint8).tobytes())

    def close(self) -> None:
        if self.jsonl:
            self.jsonl.close()
        if self.overlay:
            self.overlay.close()


def run_frames(backend, frames: Iterable[np.ndarray], size: tuple[int, int], total: int | None,
               outputs: Outputs | None = None, probed: bool = False, quiet: bool = True,
               log: bool = False) -> tuple[int, float, int]:
    """`frames` through `backend`; returns (frames, seconds inside the backend, frames the blur gate skipped).

    With `log`, one line per frame on stdout (see `frame_line`).
    """
    h, w = size
    bar = ProgressBar(total, enabled=False if quiet else None)
    count, seconds, skipped = 0, 0.0, 0
    try:
        for frame in frames:
            start = time.perf_counter()
            results = backend(frame)
            seconds += time.perf_counter() - start
            if probed and results[3]:
                skipped += 1
            if outputs:
                outputs.write(count, frame[:h, :w], results, probed)  # the frame without its padding
            if log:
                bar.clear()
                print(frame_line(count, results, probed), flush=True)
            count += 1
            bar.update(count)
    finally:
        bar.close()
    return count, seconds, skipped


def frame_line(index: int, results: tuple, probed: bool) -> str:
    """`frame  12  sharpness 1523.4  score mean 0.284 max 0.712 at (7, 10)  jpeg 41.2 kB`."""
    encoded, score = results[0], np.asarray(results[1])
    row, col = np.unravel_index(int(np.argmax(score)), score.shape)
    gate = ""
    if probed:
        gate = f"  sharpness {float(results[2]):8.1f}" + ("  blurred: kept previous score" if results[3] else "")
    return (
        f"frame {index:4d}{gate}  score mean {float(score.mean()):.3f} max {float(score.max()):.3f} "
        f"at ({row}, {col})  jpeg {encoded.size / 1000:.1f} kB"
    )


def dce_report(args, module: ModuleOp, measured: StageTimes, frames: int, frame_seconds: float, source) -> str:
    """What the mode's dead-node elimination removes, priced with times of the unspecialised pipeline.

    The removed stages come from `cortex-dce`'s own report (on a copy of the
    module). Their price: the reference, run as written (weights at run
    time), has timed them already. A specialised run (numpy's default, or
    any `--passes`) never executed them, so the unspecialised pipeline on
    the same backend is profiled on the first `--dce-frames` frames.
    """
    removed = eliminate_dead_nodes(module.clone(), args.mode).names
    if not removed:
        return dce_summary(args.mode, removed, {}, None)
    if args.backend == "reference" and not args.passes:
        return dce_summary(args.mode, removed, measured.ms_per_frame(frames), 1e3 * frame_seconds / max(frames, 1))
    if args.dce_frames <= 0:
        return dce_summary(args.mode, removed, {}, None)
    unspecialised = make_backend(args.backend, module, args.entry, args.mode, UNSPECIALISED[args.backend])
    n, seconds, _ = run_frames(unspecialised, itertools.islice(source, args.dce_frames), source.size, None)
    line = dce_summary(args.mode, removed, unspecialised.stage_times().ms_per_frame(n), 1e3 * seconds / max(n, 1))
    return f"{line} [unspecialised {args.backend} pipeline, {n} frames]"


def run(args: argparse.Namespace) -> int:
    return parallel_run.run_each_video(args, run_one)


def run_one(args: argparse.Namespace) -> int:
    """One video through the pipeline."""
    if args.frames < 0:
        raise CortexError(f"--frames must be >= 0, got {args.frames}")
    mode_weights(args.mode)  # an unknown mode fails before any work
    if args.passes:
        check_passes(args.passes)
    if args.post_passes and args.post_passes != "default":
        check_passes(args.post_passes)
    from cortex.video.source import open_video

    module, (h, w, block) = load_pipeline(args.pipeline, args.entry)
    size = parse_size(args.size) if args.size else (h, w)
    source = open_video(args.video, block, args.frames, height=size[0], width=size[1])
    if source.padded_size != (h, w) or (source.size != source.padded_size and not args.pipeline):
        if args.pipeline:
            ph, pw = source.padded_size
            raise CortexError(
                f"{args.pipeline} is built for {h}x{w} frames, but the video's frames are "
                f"{source.size[0]}x{source.size[1]} (padded {ph}x{pw}): build one with "
                f"cortex.build_l2_pipeline({ph}, {pw}, {block})"
            )
        crop = source.size if source.size != source.padded_size else None
        module = build_l2_pipeline(*source.padded_size, block, crop=crop)

    probed_module = module.clone()
    probed = expose_blur_gate(probed_module, args.entry)
    start = time.perf_counter()
    backend = make_backend(args.backend, probed_module, args.entry, args.mode, args.passes, args.post_passes)
    compile_seconds = time.perf_counter() - start
    runner = parallel_run.ParallelRunner.maybe(args, backend)  # None: frame after frame

    outputs = Outputs(args, source.fps, block)
    try:
        if runner:
            frames, seconds, skipped = runner.run_frames(
                source, source.size, source.frame_count, outputs, probed, args.quiet, not args.no_frame_log, frame_line
            )
        else:
            frames, seconds, skipped = run_frames(
                backend, source, source.size, source.frame_count, outputs, probed, args.quiet, log=not args.no_frame_log
            )
    finally:
        outputs.close()
    args.frames_done = frames

    ph, pw = source.padded_size
    padded = f" (padded {ph}x{pw})" if source.padded_size != source.size else ""
    print(
        f"{source.name}: {source.size[0]}x{source.size[1]}{padded}, {frames} frames, mode {args.mode}, "
        f"backend {backend.name} (compiled in {compile_seconds:.2f} s)"
    )
    if frames:
        fps = frames / seconds if seconds > 0 else float("inf")
        gate = f"; {skipped} skipped by the blur gate" if probed else ""
        how = f" ({runner.describe()})" if runner else ""
        print(f"{1e3 * seconds / frames:.2f} ms/frame, {fps:.1f} frames/s{how}{gate}")
        times = (runner or backend).stage_times()
        print(times.table(frames, seconds, title="per-stage time, averaged over all frames"))
        if runner:
            print(runner.overlap_table(frames))
        print(dce_report(args, module, times, frames, seconds, source))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return run(args)
    except BrokenPipeError:  # `cortex-run | head`: the reader has gone, nothing to say
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except (CortexError, UnknownModeError, ParseError, DiagnosticException, ArgSpecParseError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # a bug, not bad input: still one line (rerun with --debug for the traceback)
        if args.debug:
            raise
        print(f"error: internal error: {type(e).__name__}: {' '.join(str(e).split())} (rerun with --debug)", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
