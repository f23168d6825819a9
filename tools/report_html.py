"""`cortex-run --report report.html`: one self-contained page about a run (no network, no script).

What it shows, top to bottom:

- the run's facts and its three rates (`cortex.tools.run_summary`);
- the stage graph: every stage of the pipeline as written, coloured by kind
  (compilable / external), with its measured ms per frame; stages the mode's
  specialisation removed are drawn dashed ("not run");
- the per-stage time table;
- a plot over the frames: score mean and max (0..1), then sharpness and the
  blur gate's threshold; gated frames shaded red, scene cuts as dashed lines;
- thumbnails of a few overlay frames, spread over the run.

Everything is inline: CSS, SVG drawn here, PNG thumbnails as data URIs.
`ReportRecorder` collects the per-frame facts as the frames are written
(`Outputs.recorders`); `write_report` renders and writes the page atomically.
"""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from cortex.passes.expose_scene_change import SceneProbe
from cortex.reports.graph_view import stages as graph_stages
from cortex.tools.atomic import write_bytes_atomic
from cortex.tools.run_summary import RunSummary
from cortex.video.overlay import FrameInfo

KIND_COLOURS = {"compilable": "#4c78a8", "external": "#f58518"}
THUMBNAILS = 6
THUMB_WIDTH = 360


# --------------------------------------------------------------------------- per-frame facts


@dataclass
class FrameFacts:
    number: int
    time: float
    mean: float
    peak: float
    sharpness: float | None
    threshold: float | None
    blurred: bool | None
    scene: float | None  # None: not measured (a gated frame) or no scene stage
    cut: bool
    start: bool = False  # the run's first frame: measured against the all-zeros initial state, so never a cut


@dataclass
class ReportRecorder:
    """Collects what the report plots, frame by frame, and a few overlay thumbnails spread over the run.

    Thumbnails: every `stride`-th frame is rendered; when more than twice `THUMBNAILS` are held,
    every other one is dropped and the stride doubles, so any run length ends with an even spread
    and only O(THUMBNAILS x log frames) pictures are ever rendered.
    """

    scene: SceneProbe | None = None
    frames: list[FrameFacts] = field(default_factory=list)
    thumbs: list[tuple[int, float, bytes]] = field(default_factory=list)
    stride: int = 1

    def __call__(self, index: int, info: FrameInfo, score: np.ndarray, results: Sequence[Any],
                 render: Callable[[], np.ndarray]) -> None:
        scene = None
        if self.scene is not None and len(results) > self.scene.index:
            value = float(results[self.scene.index])
            scene = value if math.isfinite(value) else None
        start = index == 0  # the scene stage compares it with the all-zeros state: a "cut" on every clip
        cut = not start and scene is not None and self.scene is not None and scene > self.scene.reset_threshold
        self.frames.append(FrameFacts(
            info.index, info.time or 0.0, float(np.mean(score)) if score.size else 0.0,
            float(np.max(score)) if score.size else 0.0, info.sharpness, info.threshold, info.blurred, scene, cut,
            start,
        ))
        if index % self.stride == 0:
            image = render()
            h, w = image.shape[:2]
            small = cv2.resize(image, (THUMB_WIDTH, max(1, round(h * THUMB_WIDTH / w))), interpolation=cv2.INTER_AREA)
            ok, png = cv2.imencode(".png", small)
            if ok:
                self.thumbs.append((info.index, info.time or 0.0, png.tobytes()))
            if len(self.thumbs) > 2 * THUMBNAILS:
                self.thumbs = self.thumbs[::2]
                self.stride *= 2

    def chosen_thumbnails(self) -> list[tuple[int, float, bytes]]:
        if len(self.thumbs) <= THUMBNAILS:
            return list(self.thumbs)
        picks = np.linspace(0, len(self.thumbs) - 1, THUMBNAILS).round().astype(int)
        return [self.thumbs[i] for i in sorted(set(picks.tolist()))]


# --------------------------------------------------------------------------- the stage graph


@dataclass
class GraphNode:
    name: str
    kind: str
    label: str  # the SSA name, e.g. %saliency
    ms: float | None  # None: no time of its own (removed by the mode, folded, or fused into another stage)
    removed: bool = False  # the mode's dead-node elimination removes it: it never runs
    preds: set[int] = field(default_factory=set)


def stage_graph(module: ModuleOp, ms_per_frame: dict[str, float], removed: Sequence[str] = ()) -> list[GraphNode]:
    """The pipeline's stages (program order) and which feed which, through any glue between them."""
    rows = graph_stages(module)
    index = {id(s.op): i for i, s in enumerate(rows)}
    nodes = [
        GraphNode(s.name, "external" if s.external else "compilable", s.label, ms_per_frame.get(s.name), s.name in removed)
        for s in rows
    ]

    def feeders(value: SSAValue, seen: set[int]) -> set[int]:
        owner: Operation | Block = value.owner
        if isinstance(owner, Block):
            return set()
        if id(owner) in index:
            return {index[id(owner)]}
        if id(owner) in seen:
            return set()
        seen.add(id(owner))
        found: set[int] = set()
        for operand in owner.operands:
            found |= feeders(operand, seen)
        for region in owner.regions:  # an scf.if's results come from its yields
            for block in region.blocks:
                if block.last_op is not None:
                    for operand in block.last_op.operands:
                        found |= feeders(operand, seen)
        return found

    for i, s in enumerate(rows):
        for operand in s.op.operands:
            nodes[i].preds |= feeders(operand, set()) - {i}
    return nodes


def graph_svg(nodes: list[GraphNode]) -> str:
    """Columns by depth (longest path from the frame), one box per stage, arrows from feeder to fed."""
    depth: list[int] = []
    for node in nodes:  # program order: feeders come first
        depth.append(1 + max((depth[p] for p in node.preds if p < len(depth)), default=-1))
    columns: dict[int, list[int]] = {}
    for i, d in enumerate(depth):
        columns.setdefault(d, []).append(i)
    box_w, box_h, gap_x, gap_y, pad = 150, 46, 56, 14, 12
    where: dict[int, tuple[int, int]] = {}
    for d, members in columns.items():
        for row, i in enumerate(members):
            where[i] = (pad + d * (box_w + gap_x), pad + row * (box_h + gap_y))
    width = pad * 2 + (max(columns, default=0) + 1) * (box_w + gap_x) - gap_x
    height = pad * 2 + max((len(m) for m in columns.values()), default=1) * (box_h + gap_y) - gap_y
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="stage graph">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555"/></marker></defs>',
    ]
    for i, node in enumerate(nodes):
        x2, y2 = where[i]
        for p in sorted(node.preds):
            x1, y1 = where[p]
            out.append(
                f'<path d="M {x1 + box_w} {y1 + box_h / 2} C {x1 + box_w + gap_x / 2} {y1 + box_h / 2}, '
                f'{x2 - gap_x / 2} {y2 + box_h / 2}, {x2} {y2 + box_h / 2}" fill="none" stroke="#555" '
                'stroke-width="1.2" marker-end="url(#arrow)"/>'
            )
    for i, node in enumerate(nodes):
        x, y = where[i]
        colour = KIND_COLOURS.get(node.kind, "#888")
        ran = not node.removed
        time = f"{node.ms:.2f} ms/frame" if node.ms is not None else "removed by the mode" if node.removed else "no own time"
        dash = "" if ran else ' stroke-dasharray="4 3" fill-opacity="0.25"'
        out.append(
            f'<g><title>{html.escape(node.name)} {html.escape(node.label)}: {node.kind}, {time}</title>'
            f'<rect x="{x}" y="{y}" width="{box_w}" height="{box_h}" rx="6" fill="{colour}" stroke="#333"{dash}/>'
            f'<text x="{x + box_w / 2}" y="{y + 19}" text-anchor="middle" class="node">{html.escape(node.name)}</text>'
            f'<text x="{x + box_w / 2}" y="{y + 36}" text-anchor="middle" class="time">{node.kind} · {time}</text></g>'
        )
    out.append("</svg>")
    return "".join(out)


# --------------------------------------------------------------------------- the plot


def _polyline(xs: Sequence[float], ys: Sequence[float | None], colour: str, dash: str = "") -> str:
    """Line segments through the defined points (a None breaks the line)."""
    parts: list[list[str]] = []
    run: list[str] = []
    for x, y in zip(xs, ys):
        if y is None:
            if len(run) > 1:
                parts.append(run)
            run = []
        else:
            run.append(f"{x:.1f},{y:.1f}")
    if len(run) > 1:
        parts.append(run)
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return "".join(
        f'<polyline points="{" ".join(p)}" fill="none" stroke="{colour}" stroke-width="1.6"{dashed}/>' for p in parts
    )


def plot_svg(frames: list[FrameFacts], width: int = 900) -> str:
    """Two panels over the frame number: score mean/max on 0..1, then sharpness and the gate's threshold."""
    left, right, top, panel, gap, bottom = 64, 16, 28, 150, 46, 40
    height = top + 2 * panel + gap + bottom
    plot_w = width - left - right
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        'role="img" aria-label="score, sharpness and blur gate over the frames">'
    ]
    if not frames:
        out.append(f'<text x="{left}" y="{top + 20}">no frames</text></svg>')
        return "".join(out)
    first, last = frames[0].number, frames[-1].number
    span = max(last - first, 1)

    def fx(number: float) -> float:
        return left + (number - first) / span * plot_w

    step = max(plot_w / max(len(frames), 1), 1.0)
    tops = (top, top + panel + gap)
    for frame in frames:  # gated frames: red bands through both panels
        if frame.blurred:
            for y0 in tops:
                out.append(f'<rect x="{fx(frame.number) - step / 2:.1f}" y="{y0}" width="{step:.1f}" height="{panel}" '
                           'fill="#d62728" fill-opacity="0.18"/>')
    for frame in frames:  # the start (not a cut: nothing came before it), then scene cuts as dashed lines
        if frame.start:
            out.append(f'<text x="{fx(frame.number):.1f}" y="{top - 4}" text-anchor="start" class="tick">start</text>')
        if frame.cut:
            x = fx(frame.number)
            out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + 2 * panel + gap}" stroke="#9467bd" '
                       'stroke-width="1.4" stroke-dasharray="5 3"/>')
    xs = [fx(f.number) for f in frames]
    # panel 1: score
    y0 = tops[0]

    def fy_score(v: float) -> float:
        return y0 + panel - min(max(v, 0.0), 1.0) * panel

    out.append(_polyline(xs, [fy_score(f.peak) for f in frames], "#d62728"))
    out.append(_polyline(xs, [fy_score(f.mean) for f in frames], "#1f77b4"))
    out += _axes(left, y0, plot_w, panel, [(0.0, "0"), (0.5, "0.5"), (1.0, "1")], lambda v: fy_score(v), "score")
    # panel 2: sharpness and threshold
    y1 = tops[1]
    values = [v for f in frames for v in (f.sharpness, f.threshold) if v is not None and math.isfinite(v)]
    top_value = max(values, default=1.0) * 1.05 or 1.0

    def fy_sharp(v: float | None) -> float | None:
        if v is None or not math.isfinite(v):
            return None
        return y1 + panel - min(max(v / top_value, 0.0), 1.0) * panel

    out.append(_polyline(xs, [fy_sharp(f.sharpness) for f in frames], "#2ca02c"))
    out.append(_polyline(xs, [fy_sharp(f.threshold) for f in frames], "#555", dash="6 3"))
    ticks = [(0.0, "0"), (top_value / 2, f"{top_value / 2:.0f}"), (top_value, f"{top_value:.0f}")]
    out += _axes(left, y1, plot_w, panel, ticks, lambda v: fy_sharp(v) or 0.0, "sharpness")
    # the frame axis
    for k in range(6):
        number = first + span * k / 5
        x = fx(number)
        out.append(f'<text x="{x:.1f}" y="{y1 + panel + 16}" text-anchor="middle" class="tick">{number:.0f}</text>')
    out.append(f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" class="tick">source frame</text>')
    legend = [("#1f77b4", "score mean", ""), ("#d62728", "score max", ""), ("#2ca02c", "sharpness", ""),
              ("#555", "gate threshold", "6 3"), ("#9467bd", "scene cut", "5 3")]
    x = left
    for colour, text, dash in legend:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{x}" y1="12" x2="{x + 22}" y2="12" stroke="{colour}" stroke-width="2"{dashed}/>'
                   f'<text x="{x + 27}" y="16" class="tick">{text}</text>')
        x += 40 + 7 * len(text)
    out.append(f'<rect x="{x}" y="6" width="18" height="12" fill="#d62728" fill-opacity="0.18"/>'
               f'<text x="{x + 23}" y="16" class="tick">blurred (gated)</text>')
    out.append("</svg>")
    return "".join(out)


def _axes(left: int, y0: int, width: int, height: int, ticks, fy: Callable[[float], float], title: str) -> list[str]:
    out = [f'<rect x="{left}" y="{y0}" width="{width}" height="{height}" fill="none" stroke="#999"/>']
    for value, text in ticks:
        y = fy(value)
        out.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{left}" y2="{y:.1f}" stroke="#999"/>'
                   f'<text x="{left - 7}" y="{y + 4:.1f}" text-anchor="end" class="tick">{text}</text>')
    out.append(f'<text x="14" y="{y0 + height / 2}" transform="rotate(-90 14 {y0 + height / 2})" '
               f'text-anchor="middle" class="tick">{title}</text>')
    return out


# --------------------------------------------------------------------------- the page


STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #222; max-width: 1100px; }
h1 { font-size: 22px; margin-bottom: 4px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; font-size: 13px; } td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; }
th { text-align: left; background: #f3f3f3; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.facts td:first-child { color: #666; } .node { font-size: 12px; fill: #fff; font-weight: 600; }
.time { font-size: 10px; fill: #fff; } .tick { font-size: 11px; fill: #444; }
.thumbs { display: flex; flex-wrap: wrap; gap: 12px; } figure { margin: 0; font-size: 12px; color: #444; }
figure img { display: block; border: 1px solid #ccc; } .scroll { overflow-x: auto; }
"""


def _esc(value: object) -> str:
    return html.escape(str(value))


CPU_CAPTION = ("<p>wall ms/frame: elapsed time in the stage, which includes waiting "
               "for a core; thread CPU ms/frame: the CPU time of the thread running the stage (<code>time.thread_time</code>), "
               "the stage's own work, without the helper threads OpenCV or BLAS may start.</p>")


def has_cpu(summary: RunSummary) -> bool:
    return summary.stages is not None and summary.stages.has_cpu


def stage_table_html(summary: RunSummary) -> tuple[str, str]:
    """The stage table's head and rows: wall-clock per frame, thread CPU beside it where it was measured."""
    frames = max(summary.frames, 1)
    stages = list(summary.stages.stages.values()) if summary.stages else []
    total = sum(s.seconds for s in stages) / frames
    cpu = has_cpu(summary)
    head = ("<tr><th>stage</th><th>kind</th><th>wall ms/frame</th>" + ("<th>thread CPU ms/frame</th>" if cpu else "")
            + "<th>share</th></tr>")
    rows = "".join(
        f'<tr><td>{_esc(s.name)}</td><td><span style="color:{KIND_COLOURS.get(s.kind, "#888")}">■</span> {_esc(s.kind)}</td>'
        f'<td class="num">{1e3 * s.seconds / frames:.3f}</td>'
        + (f'<td class="num">{1e3 * (s.cpu_seconds or 0.0) / frames:.3f}</td>' if cpu else "")
        + f'<td class="num">{(100 * s.seconds / frames / total) if total else 0:.1f}%</td></tr>'
        for s in stages
    )
    return head, rows


def render_report(summary: RunSummary, module: ModuleOp, recorder: ReportRecorder, removed: Sequence[str] = ()) -> str:
    """The page as one string of HTML; `removed`: the stages the mode's dead-node elimination removes."""
    frames = max(summary.frames, 1)
    ms = {name: 1e3 * s.seconds / frames for name, s in (summary.stages.stages.items() if summary.stages else [])}
    nodes = stage_graph(module, ms, removed)
    rates = summary.rates()
    seconds = summary.to_json()["seconds"]

    def rate(key: str) -> str:
        value = rates[key]
        return "-" if value is None else f"{value:.1f}"

    facts = [
        ("video", summary.video), ("size", f"{summary.size[0]}x{summary.size[1]}"), ("frames", summary.frames),
        ("mode", summary.mode), ("frames per mode", summary.per_mode_text()), ("backend", summary.backend),
        ("engine", summary.engine),
        ("blur gate", f"{summary.blur_threshold} ({summary.skipped} frames gated)" if summary.skipped is not None else "none"),
        ("scene cuts", f"{sum(f.cut for f in recorder.frames)} (the first frame is the start, not a cut)"),
        ("end to end", f"{rate('end_to_end')} frames/s ({seconds['end_to_end']:.2f} s from {seconds['since']} to every output written)"),
        ("frame loop", f"{rate('frame_loop')} frames/s (decode → pipeline → outputs written)"),
        ("pipeline", f"{rate('pipeline')} frames/s (the pipeline's own time)"),
        ("threads", summary.threads_line().removeprefix("threads: ")),
    ] + ([("live source", summary.live.text().removeprefix("live: "))] if summary.live is not None else []) \
      + ([("native code", " · ".join(line.strip() for line in summary.native))] if summary.native else [])
    rows = "".join(f"<tr><td>{_esc(k)}</td><td>{_esc(v)}</td></tr>" for k, v in facts)
    stage_head, stage_rows = stage_table_html(summary)
    thumbs = "".join(
        f'<figure><img alt="overlay of frame {n}" width="{THUMB_WIDTH}" src="data:image/png;base64,'
        f'{base64.b64encode(png).decode()}"><figcaption>frame {n} · t {t:.2f} s</figcaption></figure>'
        for n, t, png in recorder.chosen_thumbnails()
    )
    title = f"cortex-run report: {summary.video}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{_esc(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{_esc(title)}</h1><table class=\"facts\">{rows}</table>"
        "<h2>Stage graph</h2><p>Each box is a stage of the pipeline, coloured by kind "
        f'(<span style="color:{KIND_COLOURS["compilable"]}">■ compilable</span>, '
        f'<span style="color:{KIND_COLOURS["external"]}">■ external</span>), with its time per frame; '
        "dashed: removed by the mode's specialisation; \"no own time\": folded to a constant or fused into "
        "another stage's code (its time is in that row of the table).</p>"
        f'<div class="scroll">{graph_svg(nodes)}</div>'
        f"<h2>Time per stage</h2><table>{stage_head}{stage_rows}</table>{CPU_CAPTION if has_cpu(summary) else ''}"
        "<h2>Over the frames</h2>"
        f'<div class="scroll">{plot_svg(recorder.frames)}</div>'
        f"<h2>Overlay frames</h2><div class=\"thumbs\">{thumbs or '<p>no frames</p>'}</div>"
        "</body></html>\n"
    )


def write_report(path: str, summary: RunSummary, module: ModuleOp, recorder: ReportRecorder,
                 removed: Sequence[str] = ()) -> None:
    write_bytes_atomic(path, render_report(summary, module, recorder, removed).encode("utf-8"))


__all__ = ["FrameFacts", "ReportRecorder", "graph_svg", "plot_svg", "render_report", "stage_graph", "write_report"]
