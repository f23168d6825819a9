"""Overlay pictures a person can read: the score as a heat map, with its scale and context.

`heat_overlay` blends the score map over the frame (JET colours, scaled to
[0, the frame's max]). `overlay_picture` adds what the picture alone must
say: a legend band under it with the colour bar and its numeric ends, the
frame index, the mode, the sharpness and the gate's threshold, and on a
frame the blur gate skipped, a red border and "BLURRED" (its score is the
previous frame's). With `side_by_side`, the band sits under
original | heat map | encoded JPEG.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

FONT = cv2.FONT_HERSHEY_SIMPLEX
BAND = 44  # pixels of the legend band under the picture
GATED_RED = (0, 0, 255)
WHITE = (255, 255, 255)


def heat_overlay(frame: np.ndarray, score: np.ndarray, block: int | None = None, alpha: float = 0.45) -> np.ndarray:
    """The score map, scaled to [0, max] and upsampled to the frame, blended as a JET heat map.

    The map may cover a padded frame (a whole number of `block`s larger than
    `frame`): it is upsampled to the padded size and cropped back, so each
    cell lands on the pixels it scored. Without `block`, the frame must be
    a whole number of cells.
    """
    h, w = frame.shape[:2]
    grid_h, grid_w = score.shape
    if block is None:
        if h % grid_h or w % grid_w or h // grid_h != w // grid_w:
            raise ValueError(f"a {grid_h}x{grid_w} score map does not tile a {h}x{w} frame; give the block size")
        block = h // grid_h
    peak = float(np.max(score)) if score.size else 0.0
    levels = np.clip(score / peak, 0.0, 1.0) if peak > 0 else np.zeros_like(score)
    heat = cv2.resize((levels * 255).astype(np.uint8), (grid_w * block, grid_h * block), interpolation=cv2.INTER_LINEAR)
    colored = cv2.applyColorMap(heat[:h, :w], cv2.COLORMAP_JET)
    return cv2.addWeighted(frame, 1.0 - alpha, colored, alpha, 0.0)


@dataclass(frozen=True)
class FrameInfo:
    """What the legend says about one frame."""

    index: int
    mode: str
    blurred: bool | None = None  # None: the pipeline has no blur gate to report
    sharpness: float | None = None
    threshold: float | None = None


def colour_bar(width: int, height: int) -> np.ndarray:
    """A horizontal JET ramp, 0 at the left, the frame's max at the right."""
    ramp = np.linspace(0, 255, max(width, 1)).astype(np.uint8)[None, :].repeat(max(height, 1), axis=0)
    return cv2.applyColorMap(ramp, cv2.COLORMAP_JET)


def put_text(image: np.ndarray, text: str, origin: tuple[int, int], scale: float = 0.45, color=WHITE,
             backdrop: bool = False) -> int:
    """Text (on a dark box with `backdrop`, readable on any picture); returns its width in pixels."""
    (w, h), base = cv2.getTextSize(text, FONT, scale, 1)
    if backdrop:
        x, y = origin
        cv2.rectangle(image, (x - 4, y - h - 4), (x + w + 4, y + base + 2), (0, 0, 0), -1)
    cv2.putText(image, text, origin, FONT, scale, color, 1, cv2.LINE_AA)
    return w


def legend_band(width: int, peak: float, info: FrameInfo) -> np.ndarray:
    """The band under the picture: colour bar with its ends, then frame, mode, sharpness and gate."""
    band = np.full((BAND, width, 3), 32, np.uint8)
    bar_w = min(200, max(width // 4, 40))
    x = 8
    band[6:20, x : x + bar_w] = colour_bar(bar_w, 14)
    put_text(band, "0", (x, 36), 0.4)
    end = f"{peak:.3f}"
    put_text(band, end, (x + bar_w - cv2.getTextSize(end, FONT, 0.4, 1)[0][0], 36), 0.4)
    put_text(band, "score", (x + bar_w // 2 - 18, 36), 0.4)
    x += bar_w + 14
    parts = [f"frame {info.index}", f"mode {info.mode}"]
    if info.sharpness is not None:
        gate = f" (gate < {info.threshold:.0f})" if info.threshold is not None else ""
        parts.append(f"sharpness {info.sharpness:.0f}{gate}")
    put_text(band, "   ".join(parts), (x, 20))
    if info.blurred:
        put_text(band, "BLURRED: scoring skipped, previous score shown", (x, 38), color=GATED_RED)
    else:
        put_text(band, "heat: score / this frame's max score", (x, 38), 0.4)
    return band


def mark_gated(image: np.ndarray) -> np.ndarray:
    """A red border and a BLURRED label on a frame the blur gate skipped."""
    marked = image.copy()
    cv2.rectangle(marked, (0, 0), (marked.shape[1] - 1, marked.shape[0] - 1), GATED_RED, 6)
    put_text(marked, "BLURRED", (14, 32), 0.8, GATED_RED, backdrop=True)
    return marked


def decode_jpeg(encoded: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """The encoder's JPEG as an image of `shape` (black when it does not decode)."""
    image = cv2.imdecode(np.asarray(encoded, np.uint8).reshape(-1), cv2.IMREAD_COLOR)
    if image is None or image.shape[:2] != shape:
        return np.zeros((*shape, 3), np.uint8)
    return image


def overlay_picture(
    frame: np.ndarray,
    score: np.ndarray,
    info: FrameInfo,
    block: int | None = None,
    encoded: np.ndarray | None = None,
    side_by_side: bool = False,
) -> np.ndarray:
    """The heat map over `frame` with its legend band; with `side_by_side`, original | heat | encoded."""
    heat = heat_overlay(frame, score, block)
    if info.blurred:
        heat = mark_gated(heat)
    if side_by_side:
        panels = [frame, heat]
        if encoded is not None:
            panels.append(decode_jpeg(encoded, frame.shape[:2]))
        picture = np.concatenate(panels, axis=1)
    else:
        picture = heat
    peak = float(np.max(score)) if score.size else 0.0
    return np.concatenate([picture, legend_band(picture.shape[1], peak, info)], axis=0)


__all__ = ["BAND", "FrameInfo", "colour_bar", "heat_overlay", "legend_band", "overlay_picture"]
