"""cortex-run's command line: the parser, in argument groups.

`build_parser` assembles the groups; a new feature adds its flags with an
`add_*_arguments(group)` function of its own and one line in `GROUPS`,
rather than growing one long function. Nothing here loads xDSL or the
dialect: `cortex-run --help` and `--version` answer without them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from cortex.backends.backend import BACKENDS as COMPILED_BACKENDS
from cortex.deprecation import renamed_message
from cortex.semantics.modes import DEFAULT_ENTRY as ENTRY
from cortex.semantics.modes import DEFAULT_MODE, MODES
from cortex.tools import parallel_run
from cortex.tools.outputs import JSONL_FIELDS, VIDEO_CODECS
from cortex.tools.versions import VersionAction
from cortex.video.live import PIX_FMTS
from cortex.video.overlay import SCALES

RUNNERS = ("compiled", "reference")
"""--runner: the program `--backend` compiles, or the reference interpreter (no backend)."""
DEVICES = tuple(dict.fromkeys(device for b in COMPILED_BACKENDS.values() for device in b.devices))

Group = argparse._ActionsContainer  # a parser or one of its argument groups

HELP_EPILOG = """\
the score grid:
  The pipeline scores every block x block pixel square of the frame (block is
  32 for the bundled pipeline); the score map has one cell per block, rows top
  to bottom, columns left to right. A frame whose sides are not multiples of
  the block is padded at the bottom and right first. "at (r, c)" in the
  per-frame log is the block in row r, column c (0-based): it covers pixel
  rows r*block .. r*block+block-1 and columns c*block .. c*block+block-1.
  Scores are in [0, 1]; the encoder keeps blocks scoring at least half the
  frame's maximum sharp and blurs the rest before JPEG encoding.

the blur gate:
  A frame whose sharpness (variance of the Laplacian of the gray image) is
  below the gate's threshold is not scored: it keeps the previous score.
  --blur-threshold auto (the default) gates a frame less than half as sharp
  as the median of the last 25 frames, so it adapts to the camera and
  resolution; --blur-threshold X gates sharpness < X (the original fixed
  gate is 100); --blur-threshold 0 turns the gate off. The gate's runtime
  inputs are in docs/dialects/cortex.md, "Modes and runtime inputs".

--scores-jsonl: one JSON object per line, one line per frame, with fields
""" + "\n".join(f"  {name}: {text}" for name, text in JSONL_FIELDS.items()) + """

outputs are written atomically: a JPEG or PNG appears whole, the JSONL and an
overlay video when the run ends; a failed write exits 1 naming the file.
No output may lie inside the --encoded or --overlay folder; frame_NNNNN files
there that the run did not write (an earlier run's) are removed at its end.
A run that processes no frame (--start past the end) exits 1.
"""


class BackendAction(argparse.Action):
    """--backend; its former value `reference` (the reference interpreter is no backend) still works for one
    release: a warning on stderr, and the run is `--runner reference`."""

    def __call__(self, parser, namespace, values, option_string=None):
        if values == "reference":
            print(f"warning: {renamed_message('--backend reference', '--runner reference')}", file=sys.stderr)
            namespace.runner = "reference"
            return
        setattr(namespace, self.dest, values)


def backend_of(args: argparse.Namespace) -> str | None:
    """The backend a run compiles for: `--backend`, or None under `--runner reference` (the interpreter)."""
    return None if args.runner == "reference" else str(args.backend)


def blur_threshold(text: str) -> str:
    """`auto` or a number >= 0 (checked when the arguments are parsed)."""
    if text != "auto":
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected 'auto' or a number, got '{text}'") from None
        if not value >= 0:
            raise argparse.ArgumentTypeError(f"must be >= 0, got '{text}'")
    return text


def add_input_arguments(g: Group) -> None:
    """The video, and which of its frames."""
    g.add_argument(
        "--frames", default=None, metavar="N|Ts",
        help="at most N frames, or T seconds of video (12.5s, 800ms) (default: a video file to its end; "
        "the synthetic video has 60)",
    )
    g.add_argument(
        "--start", default="0", metavar="N|Ts",
        help="start at source frame N, or at time T (12.5s: the first frame at or after it) (default: 0)",
    )
    g.add_argument(
        "--size", metavar="HxW",
        help="size of the synthetic video (default: the pipeline's frame size), or of raw frames on standard input "
        "('-'); an error with a video file",
    )


def add_live_arguments(g: Group) -> None:
    """A live source: raw frames on standard input ('-'), a URL or a device, and the latency budget."""
    g.add_argument("--pix-fmt", choices=PIX_FMTS, default=None,
                   help="the raw frames' pixel format on standard input, as ffmpeg's -pix_fmt names it (default: bgr24)")
    g.add_argument("--fps", type=float, default=None, metavar="F",
                   help="frames per second of a live source, for the rows' times (default: the stream's, 25 on a pipe)")
    g.add_argument("--max-latency", type=float, default=None, metavar="MS",
                   help="at most MS milliseconds from a frame's arrival to its outputs written: a frame that cannot "
                        "make it is dropped when it arrives (counted in the rows, the summary and the report)")


def add_pipeline_arguments(g: Group) -> None:
    """Which pipeline, its mode and weights, and how it is compiled."""
    g.add_argument("--pipeline", metavar="FILE", help="pipeline .mlir file (default: the bundled l2_pipeline.mlir)")
    g.add_argument("--entry", default=None,
                   help=f"per-frame function (default: the pipeline's only public function; {ENTRY} in the bundled one)")
    g.add_argument("--mode", default=DEFAULT_MODE,
                   help=f"request type: {' | '.join(MODES)}, or auto (see --target-fps) (default: {DEFAULT_MODE})")
    g.add_argument(
        "--weight", action="append", metavar="NAME=VALUE",
        help="set one of the pipeline's weights, over the mode's value (repeatable: --weight wc=0.4 --weight wt=0.3)",
    )
    g.add_argument(
        "--blur-threshold", type=blur_threshold, default="auto", metavar="auto|X",
        help="the blur gate: auto (relative to the video's own recent sharpness) or a fixed sharpness X (default: auto)",
    )
    g.add_argument("--runner", choices=RUNNERS, default="compiled",
                   help="compiled: the program --backend makes; reference: the reference interpreter, no backend "
                        "(default: compiled)")
    g.add_argument("--backend", choices=(*COMPILED_BACKENDS, "reference"), default="numpy", action=BackendAction,
                   metavar="{" + ",".join(COMPILED_BACKENDS) + "}",
                   help="what compiles the pipeline: numpy, or iree (native code: pip install 'cortex[iree]') "
                        "(default: numpy)")
    g.add_argument("--device", choices=DEVICES, default="cpu",
                   help="where the backend runs: cuda with --backend iree (default: cpu)")
    g.add_argument("--print-pipeline", action="store_true",
                   help="print every pass the run takes, as one cortex-opt -p pipeline (its own: binding to the "
                        "video, --weight, the probes; then the compile's), and exit without running frames")
    g.add_argument(
        "--passes",
        metavar="PIPELINE",
        help="optimisation pipeline, as for cortex-opt -p (numpy default: mode specialisation, canonicalize, dce)",
    )
    g.add_argument(
        "--post-passes",
        metavar="PIPELINE",
        default="default",
        help="passes on the lowered module, numpy backend (default: elementwise fusion, "
        "cortex-fuse-linalg-elementwise; '' for none)",
    )


def add_request_arguments(g: Group) -> None:
    """Several request types in one run: one program with a variant per mode, the mode picked per frame."""
    g.add_argument("--modes", metavar="all|A,B",
                   help="compile one program for these modes (switched per frame without recompiling); "
                        "default: the modes --mode-schedule names, every mode with --mode auto")
    g.add_argument("--mode-schedule", metavar="FILE",
                   help='change points, one per line: JSON lines {"frame": 120, "mode": "power_save"} or CSV '
                        "frame,mode (.csv); frames before the first point run in --mode")
    g.add_argument("--target-fps", type=float, metavar="F",
                   help="with --mode auto: each frame in the richest mode whose expected time (the compiled "
                        "profile corrected by measured frame times) holds F frames per second")


def add_output_arguments(g: Group) -> None:
    """What the run writes besides its terminal output."""
    g.add_argument("--scores-jsonl", metavar="FILE",
                   help="one JSON object per frame (fields below); '-': on standard output, flushed per frame "
                        "(every other message then goes to standard error)")
    g.add_argument(
        "--overlay", metavar="DIR_OR_VIDEO",
        help=f"score heat maps with a legend: PNGs into a directory, or one video ({', '.join(VIDEO_CODECS)})",
    )
    g.add_argument(
        "--side-by-side", action="store_true", help="overlay pictures show original | heat map | encoded JPEG"
    )
    g.add_argument(
        "--heat-scale", choices=SCALES, default="absolute",
        help="heat-map colours: absolute (score 0..1, the same for every frame) or frame "
        "(0..each frame's own max) (default: absolute)",
    )
    g.add_argument("--summary-json", metavar="FILE", help="the end-of-run summary as JSON (rates, times, threads)")
    g.add_argument(
        "--report", metavar="HTML",
        help="a self-contained HTML report: stage graph and times, score/sharpness/blur gate over the frames "
        "(gated frames, scene cuts), overlay thumbnails",
    )
    g.add_argument(
        "--encoded", metavar="DIR", help="write the encoder's JPEG of each frame as DIR/frame_NNNNN.jpg (cropped back to the video's size)"
    )


def add_terminal_arguments(g: Group) -> None:
    """What the run prints while it runs, and at the end."""
    g.add_argument("--quiet", action="store_true", help="no progress bar")
    g.add_argument("--progress", action="store_true", help="a progress bar even when stderr is not a terminal")
    g.add_argument(
        "--no-frame-log", action="store_true", help="no per-frame table (sharpness, gate, score mean/max, JPEG size)"
    )
    g.add_argument("--debug", action="store_true", help="on an internal error, show the Python traceback")
    g.add_argument(
        "--dce-frames",
        type=int,
        default=10,
        metavar="N",
        help="frames of the unspecialised pipeline run to price the mode's DCE when this run is specialised (default: 10; 0: skip)",
    )


def add_execution_arguments(g: Group) -> None:
    """How the frames are run: workers, engines, several videos, memory."""
    parallel_run.add_arguments(g)  # --workers, --engine, several videos
    g.add_argument("--return-memory", action="store_true",
                   help="let glibc give the memory each frame frees back to the OS (default: kept for the next frame, "
                        "15-25%% faster at 1088x1920: every freed page came back zero-filled, a fault each)")


GROUPS: tuple[tuple[str, Callable[[Group], None]], ...] = (
    ("input", add_input_arguments),
    ("live sources", add_live_arguments),
    ("pipeline", add_pipeline_arguments),
    ("request types", add_request_arguments),
    ("outputs", add_output_arguments),
    ("terminal", add_terminal_arguments),
    ("execution", add_execution_arguments),
)
"""cortex-run's argument groups, in --help's order: (title, the function that adds the group's flags)."""


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cortex-run",
        description="Compile the Cortex L2 ROI-scoring pipeline and run it over a video.",
        epilog=HELP_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("video", nargs="?",
                   help="video file read with OpenCV (default: the built-in synthetic video); live: '-' (raw frames on "
                        "standard input, with --size), a URL (http://, rtsp://, ...) or a device (/dev/video0)")
    p.add_argument("--version", action=VersionAction, help="print cortex's version, and xDSL's, NumPy's, OpenCV's and the backend's, then exit")
    for title, add in GROUPS:
        add(p.add_argument_group(title))
    return p
