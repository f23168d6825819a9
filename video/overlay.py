"""Overlay pictures a person can read: the score as a heat map, with its scale and context.

`heat_overlay` blends the score map over the frame as JET colours. The
default scale is absolute: colour = score on [0, 1], the same for every
frame, so a dull frame looks dull (per-frame normalisation, `scale="frame"`,
stretches each frame's own maximum to red). `overlay_picture` adds what
the picture alone must say: the blocks the encoder keeps sharp, outlined
(`kept`: computed by the caller with the encoder's own rule); a legend
band under it with the colour bar, the encoder's keep cut marked on it,
the source frame number and time, the mode, the sharpness and the gate's
threshold; on a frame the blur gate skipped, a red border and "BLURRED"
(its score is the previous frame's). With `side_by_side`, the band sits
under labelled panels original | heat map | encoded JPEG.

The band's layout depends on the picture's width only (never on the
frame's text), so every frame of a video has the same size; below ~400 px
the colour bar goes on top and the text wraps under it in a smaller font,
down to 160 px.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

FONT = cv2.FONT_HERSHEY_SIMPLEX
GATED_RED = (0, 0, 255)
WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
SCALES = ("absolute", "frame")
"""Heat-map scales: `absolute` (score 0..1, the default) or `frame` (0..this frame's max)."""

MARGIN = 8
WIDE = 400  # from this width the colour bar sits left of the text


def heat_levels(score: np.ndarray, scale: str = "absolute") -> np.ndarray:
    """Colour levels in [0, 1] per cell: the score itself (`absolute`) or score / the frame's max (`frame`)."""
    if scale not in SCALES:
        raise ValueError(f"unknown heat-map scale '{scale}' (known: {', '.join(SCALES)})")
    score = np.asarray(score, np.float32)
    if scale == "absolute":
        return np.clip(np.nan_to_num(score), 0.0, 1.0)
    peak = float(np.max(score)) if score.size else 0.0
    return np.clip(score / peak, 0.0, 1.0) if peak > 0 else np.zeros_like(score)


def _block(frame_shape: tuple[int, ...], grid: tuple[int, int], block: int | None) -> int:
    h, w = frame_shape[:2]
    grid_h, grid_w = grid
    if block is None:
        if h % grid_h or w % grid_w or h // grid_h != w // grid_w:
            raise ValueError(f"a {grid_h}x{grid_w} score map does not tile a {h}x{w} frame; give the block size")
        block = h // grid_h
    return block


def heat_overlay(frame: np.ndarray, score: np.ndarray, block: int | None = None, alpha: float = 0.45,
                 scale: str = "absolute") -> np.ndarray:
    """The score map, coloured on `scale` and upsampled to the frame, blended as a JET heat map.

    The map may cover a padded frame (a whole number of `block`s larger than
    `frame`): it is upsampled to the padded size and cropped back, so each
    cell lands on the pixels it scored. Without `block`, the frame must be
    a whole number of cells.
    """
    h, w = frame.shape[:2]
    grid_h, grid_w = score.shape
    block = _block(frame.shape, score.shape, block)
    levels = heat_levels(score, scale)
    heat = cv2.resize((levels * 255).astype(np.uint8), (grid_w * block, grid_h * block), interpolation=cv2.INTER_LINEAR)
    colored = cv2.applyColorMap(heat[:h, :w], cv2.COLORMAP_JET)
    return cv2.addWeighted(frame, 1.0 - alpha, colored, alpha, 0.0)


def outline_kept(image: np.ndarray, kept: np.ndarray, block: int) -> np.ndarray:
    """The outline of the kept blocks' region drawn on `image` (white over a dark edge, 2 px)."""
    h, w = image.shape[:2]
    mask = np.repeat(np.repeat(kept.astype(np.uint8), block, axis=0), block, axis=1)[:h, :w]
    if not mask.any():
        return image
    # A one-pixel frame of zeros, so a region touching the picture's edge is closed there too.
    contours, _ = cv2.findContours(np.pad(mask, 1), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE, offset=(-1, -1))
    out = image.copy()
    cv2.drawContours(out, contours, -1, BLACK, 4)
    cv2.drawContours(out, contours, -1, WHITE, 2)
    return out


@dataclass(frozen=True)
class FrameInfo:
    """What the legend says about one frame."""

    index: int  # the source frame number (0 = the video's first frame)
    mode: str
    blurred: bool | None = None  # None: the pipeline has no blur gate to report
    sharpness: float | None = None
    threshold: float | None = None
    time: float | None = None  # seconds from the video's start
    keep: float | None = None  # the encoder's cut this frame: blocks scoring at least this stay sharp
    keep_ratio: float | None = None  # the encoder's threshold: keep = keep_ratio x the frame's max score


@dataclass(frozen=True)
class BandLayout:
    """Where the legend band puts things, for a picture `width` pixels wide."""

    width: int
    font: float
    line: int  # pixels per text line
    bar: tuple[int, int, int]  # x, y, width of the colour bar (14 px tall)
    text_x: int
    text_y: int  # baseline of the first text line
    text_width: int
    rows: int  # text lines (from the widest texts any frame can have)

    @property
    def height(self) -> int:
        bar_bottom = self.bar[1] + 14 + self.line + 4  # the bar, then its end labels
        return max(bar_bottom, self.text_y + (self.rows - 1) * self.line + 8)


TEMPLATES = (
    "frame 000000  t 00000.00 s",
    "mode power_save",
    "sharpness 000000 (gate < 000000)",
    "kept sharp (outlined): score >= 0.000",
    "BLURRED: previous score shown",
)
"""The widest text of each legend slot: the layout is planned with these, so it never depends on a frame."""


def text_width(text: str, font: float) -> int:
    return cv2.getTextSize(text, FONT, font, 1)[0][0]


def wrap(items: list[str], width: int, font: float, gap: str = "   ") -> list[list[int]]:
    """Greedy lines of item indices that fit in `width` pixels (an item wider than a line gets a line alone)."""
    lines: list[list[int]] = []
    used = 0
    for i, item in enumerate(items):
        w = text_width(item, font)
        if lines and used + text_width(gap, font) + w <= width:
            lines[-1].append(i)
            used += text_width(gap, font) + w
        else:
            lines.append([i])
            used = w
    return lines


def band_layout(width: int) -> BandLayout:
    """Bar left of the text when the widest texts fit beside it; else the bar on top and the text under it,
    in the largest font (down to a small one at 160 px) in which every slot fits the width."""
    width = max(int(width), 1)
    widest = max(TEMPLATES, key=len)
    if width >= WIDE:
        font, line = 0.45, 18
        bar_w = min(200, max(width // 4, 100))
        text_x = MARGIN + bar_w + 16
        room = width - text_x - MARGIN
        if max(text_width(t, font) for t in TEMPLATES) <= room:
            rows = len(wrap(list(TEMPLATES), room, font))
            return BandLayout(width, font, line, (MARGIN, 8, bar_w), text_x, 20, room, rows)
    room = max(width - 2 * MARGIN, 8)
    font = next((f for f in (0.45, 0.4, 0.35, 0.3, 0.27) if text_width(widest, f) <= room), 0.25)
    line = max(10, round(32 * font))
    rows = len(wrap(list(TEMPLATES), room, font))
    text_y = 8 + 14 + line + 4 + line - 2
    return BandLayout(width, font, line, (MARGIN, 8, room), MARGIN, text_y, room, rows)


def band_height(width: int) -> int:
    """Pixels of the legend band under a picture `width` pixels wide."""
    return band_layout(width).height


BAND = band_height(640)
"""The band's height at 640 px (a common width); `band_height` gives it for any width."""


def colour_bar(width: int, height: int) -> np.ndarray:
    """A horizontal JET ramp, 0 at the left, the scale's top at the right."""
    ramp = np.linspace(0, 255, max(width, 1)).astype(np.uint8)[None, :].repeat(max(height, 1), axis=0)
    return cv2.applyColorMap(ramp, cv2.COLORMAP_JET)


def put_text(image: np.ndarray, text: str, origin: tuple[int, int], scale: float = 0.45, color=WHITE,
             backdrop: bool = False) -> int:
    """Text (on a dark box with `backdrop`, readable on any picture); returns its width in pixels."""
    (w, h), base = cv2.getTextSize(text, FONT, scale, 1)
    if backdrop:
        x, y = origin
        cv2.rectangle(image, (x - 4, y - h - 4), (x + w + 4, y + base + 2), BLACK, -1)
    cv2.putText(image, text, origin, FONT, scale, color, 1, cv2.LINE_AA)
    return w


def legend_texts(info: FrameInfo, scale: str, peak: float) -> list[tuple[str, tuple[int, int, int]]]:
    """The band's texts for one frame, slot by slot as in `TEMPLATES`."""
    when = f"  t {info.time:.2f} s" if info.time is not None else ""
    sharp = ""
    if info.sharpness is not None:
        gate = f" (gate < {info.threshold:.0f})" if info.threshold is not None else ""
        sharp = f"sharpness {info.sharpness:.0f}{gate}"
    kept = f"kept sharp (outlined): score >= {info.keep:.3f}" if info.keep is not None else ""
    if info.blurred:
        status = ("BLURRED: previous score shown", GATED_RED)
    elif scale == "absolute":
        status = ("heat: score 0 to 1 (absolute)", WHITE)
    else:
        status = (f"heat: score / frame max {peak:.3f}", WHITE)
    return [(f"frame {info.index}{when}", WHITE), (f"mode {info.mode}", WHITE), (sharp, WHITE), (kept, WHITE), status]


def legend_band(width: int, score: np.ndarray | float, info: FrameInfo, scale: str = "absolute") -> np.ndarray:
    """The band under the picture: the colour bar (keep cut marked), then frame, time, mode, sharpness, gate."""
    layout = band_layout(width)
    band = np.full((layout.height, width, 3), 32, np.uint8)
    peak = float(np.max(score)) if np.size(score) else 0.0
    x, y, bar_w = layout.bar
    band[y : y + 14, x : x + bar_w] = colour_bar(bar_w, 14)
    top = 1.0 if scale == "absolute" else peak
    if info.keep is not None and top > 0:  # the encoder's cut on this scale
        at = x + int(round(min(max(info.keep / top, 0.0), 1.0) * (bar_w - 1)))
        cv2.line(band, (at, y - 3), (at, y + 16), BLACK, 3)
        cv2.line(band, (at, y - 3), (at, y + 16), WHITE, 1)
    label_y = y + 14 + layout.line - 2
    put_text(band, "0", (x, label_y), layout.font)
    end = "1" if scale == "absolute" else f"max {peak:.3f}"
    end_w = text_width(end, layout.font)
    put_text(band, end, (x + bar_w - end_w, label_y), layout.font)
    middle = "score"
    if text_width("0", layout.font) + text_width(middle, layout.font) + end_w + 24 <= bar_w:
        put_text(band, middle, (x + (bar_w - text_width(middle, layout.font)) // 2, label_y), layout.font)
    texts = legend_texts(info, scale, peak)
    lines = wrap(list(TEMPLATES), layout.text_width, layout.font)
    for row, slots in enumerate(lines):
        tx = layout.text_x
        ty = layout.text_y + row * layout.line
        for slot in slots:
            text, colour = texts[slot]
            if text:
                put_text(band, text, (tx, ty), layout.font, colour)
            tx += text_width(TEMPLATES[slot] + "   ", layout.font)
    return band


def mark_gated(image: np.ndarray) -> np.ndarray:
    """A red border and a BLURRED label on a frame the blur gate skipped."""
    marked = image.copy()
    cv2.rectangle(marked, (0, 0), (marked.shape[1] - 1, marked.shape[0] - 1), GATED_RED, 6)
    put_text(marked, "BLURRED", (14, 32), 0.8 if marked.shape[1] >= 240 else 0.5, GATED_RED, backdrop=True)
    return marked


def label_panel(image: np.ndarray, label: str) -> np.ndarray:
    """`label` at the panel's bottom left, on a dark box."""
    out = image.copy()
    font = 0.45 if image.shape[1] >= 240 else 0.35
    put_text(out, label, (8, image.shape[0] - 8), font, WHITE, backdrop=True)
    return out


def decode_jpeg(encoded: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The encoder's JPEG as an image of `shape` (black when it does not decode)."""
    image = cv2.imdecode(np.asarray(encoded, np.uint8).reshape(-1), cv2.IMREAD_COLOR)
    if image is None or image.shape[:2] != shape:
        return np.zeros((*shape, 3), np.uint8)
    return image


PANEL_LABELS = ("original", "heat map", "encoded JPEG")


def overlay_picture(
    frame: np.ndarray,
    score: np.ndarray,
    info: FrameInfo,
    block: int | None = None,
    encoded: np.ndarray | None = None,
    side_by_side: bool = False,
    scale: str = "absolute",
    kept: np.ndarray | None = None,
) -> np.ndarray:
    """The heat map over `frame` with its legend band; with `side_by_side`, original | heat | encoded.

    `kept`: the blocks the encoder keeps sharp (a boolean map like `score`), outlined on the heat map.
    """
    heat = heat_overlay(frame, score, block, scale=scale)
    if kept is not None:
        heat = outline_kept(heat, kept, _block(frame.shape, score.shape, block))
    if info.blurred:
        heat = mark_gated(heat)
    if side_by_side:
        panels = [frame, heat]
        if encoded is not None:
            panels.append(decode_jpeg(encoded, frame.shape[:2]))
        picture = np.concatenate([label_panel(p, name) for p, name in zip(panels, PANEL_LABELS)], axis=1)
    else:
        picture = heat
    return np.concatenate([picture, legend_band(picture.shape[1], score, info, scale)], axis=0)


__all__ = [
    "BAND", "SCALES", "FrameInfo", "band_height", "band_layout", "colour_bar", "heat_levels", "heat_overlay",
    "legend_band", "outline_kept", "overlay_picture",
]
