"""A deterministic synthetic video: the project's embedded default input.

Every behaviour the L2 pipeline reacts to is staged on purpose, and the
ground truth is exposed so tests can check the pipeline against it:

- a scene cut every `SCENE_LENGTH` frames: a new palette, gradient and dot
  texture, so the mean luminance and the structure change everywhere;
- some frames heavily Gaussian-blurred, so the blur gate (variance of the
  Laplacian < 100) fires on them and only on them;
- one frame per scene that repeats the previous frame exactly (zero motion);
- a few moving shapes, and a line of large text drifting slowly, which
  MSER (`cortex.text_roi`) finds.

The background is a smooth gradient with sparse small dots and faint
noise. The dots carry the sharpness (Laplacian energy) without forming
regions big enough for MSER, so plain background scores low on text_roi.
Frame `i` is a pure function of `(seed, height, width, i)`: frames may be
requested in any order. Backgrounds are cached per scene.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import cv2
import numpy as np

SCENE_LENGTH = 20
BLURRED_AT = (8,)  # positions in a scene whose frame is blurred ...
BLURRED_AT_ODD_SCENES = (8, 9)  # ... two in a row in odd scenes (prev_score must persist)
STATIC_AT = 15  # this position repeats the frame before it
BLUR_SIGMA = 6.0
FONT = cv2.FONT_HERSHEY_SIMPLEX
FPS = 30.0


@dataclass(frozen=True)
class Shape:
    """A filled circle or rectangle bouncing inside the frame."""

    kind: str  # "circle" | "rect"
    size: int  # radius, or half side
    color: tuple[int, int, int]
    start: tuple[float, float]  # (x, y) at the scene's first frame
    velocity: tuple[float, float]  # pixels per frame

    def center(self, t: int, height: int, width: int) -> tuple[int, int]:
        x = bounce(self.start[0] + self.velocity[0] * t, self.size, width - 1 - self.size)
        y = bounce(self.start[1] + self.velocity[1] * t, self.size, height - 1 - self.size)
        return int(round(x)), int(round(y))

    def draw(self, image: np.ndarray, t: int, color=None) -> None:
        x, y = self.center(t, image.shape[0], image.shape[1])
        color = self.color if color is None else color
        if self.kind == "circle":
            cv2.circle(image, (x, y), self.size, color, thickness=-1, lineType=cv2.LINE_8)
        else:
            s = self.size
            cv2.rectangle(image, (x - s, y - s), (x + s, y + s), color, thickness=-1)


def bounce(position: float, lo: float, hi: float) -> float:
    """`position` reflected into [lo, hi] (a triangle wave), so shapes stay in frame."""
    span = hi - lo
    if span <= 0:
        return lo
    p = (position - lo) % (2 * span)
    return lo + (p if p <= span else 2 * span - p)


@dataclass(frozen=True)
class Scene:
    """Everything random about one scene, drawn from `(seed, scene index)`."""

    background: np.ndarray  # H×W×3 uint8, read-only
    shapes: tuple[Shape, ...]
    text: str
    text_origin: tuple[int, int]  # bottom-left of the text at the scene's first frame
    text_color: tuple[int, int, int]  # white on dark scenes, near-black on bright ones
    font_scale: float
    thickness: int


DEFAULT_SIZE = (480, 640)
"""The synthetic video's (height, width) when nothing else gives one (`cortex-run` on a shape-generic
pipeline, `cortex-profile` of one)."""


class SyntheticVideo:
    """`frame(i)`: uint8 H×W×3 BGR; the `is_*`/`*_blocks` methods are the ground truth."""

    def __init__(self, height: int = DEFAULT_SIZE[0], width: int = DEFAULT_SIZE[1], seed: int = 0):
        if height < 64 or width < 64:
            raise ValueError(f"the synthetic video needs at least 64x64 pixels, got {height}x{width}")
        self.height, self.width, self.seed = int(height), int(width), int(seed)
        self.fps = FPS

    # ---- ground truth -------------------------------------------------

    @staticmethod
    def scene_of(i: int) -> int:
        return i // SCENE_LENGTH

    def is_cut(self, i: int) -> bool:
        """First frame of a new scene (frame 0 starts the video, it is no cut)."""
        return i > 0 and i % SCENE_LENGTH == 0

    def is_blurred(self, i: int) -> bool:
        at = BLURRED_AT_ODD_SCENES if self.scene_of(i) % 2 else BLURRED_AT
        return i % SCENE_LENGTH in at

    def is_static(self, i: int) -> bool:
        """Frame i is identical to frame i − 1."""
        return i % SCENE_LENGTH == STATIC_AT

    def time_of(self, i: int) -> int:
        """The content time frame i shows, counted from its scene's first frame."""
        local = i % SCENE_LENGTH
        return local - 1 if self.is_static(i) else local

    def text_coverage(self, i: int) -> np.ndarray:
        """H×W uint8: how much of each pixel the text covers (OpenCV 5 antialiases text), 255 = all."""
        coverage = np.zeros((self.height, self.width), np.uint8)
        draw_text(coverage, self.scene(self.scene_of(i)), self.time_of(i), 255)
        return coverage

    def text_mask(self, i: int) -> np.ndarray:
        """H×W bool: the pixels the text touches in frame i."""
        return self.text_coverage(i) > 0

    def shape_mask(self, i: int) -> np.ndarray:
        """H×W bool: the pixels the moving shapes cover in frame i."""
        mask = np.zeros((self.height, self.width), np.uint8)
        for shape in self.scene(self.scene_of(i)).shapes:
            shape.draw(mask, self.time_of(i), 255)
        return mask > 0

    def text_blocks(self, i: int, block: int = 32) -> np.ndarray:
        """Bool grid (ceil(H/block) × ceil(W/block)): cells holding any text pixel."""
        return block_any(self.text_mask(i), block)

    def shape_blocks(self, i: int, block: int = 32) -> np.ndarray:
        """Bool grid: cells touched by a moving shape."""
        return block_any(self.shape_mask(i), block)

    # ---- pixels -------------------------------------------------------

    def scene(self, index: int) -> Scene:
        return make_scene(self.seed, self.height, self.width, index)

    def frame(self, i: int) -> np.ndarray:
        """Frame i, uint8 (H, W, 3) BGR; the same whatever order frames are asked in."""
        if i < 0:
            raise IndexError(f"frame index must be >= 0, got {i}")
        scene = self.scene(self.scene_of(i))
        t = self.time_of(i)
        image = scene.background.copy()
        for shape in scene.shapes:
            shape.draw(image, t)
        draw_text(image, scene, t, scene.text_color)
        if self.is_blurred(i):
            image = cv2.GaussianBlur(image, (0, 0), BLUR_SIGMA, borderType=cv2.BORDER_REFLECT_101)
        return image

    def frames(self, n: int, start: int = 0) -> Iterator[np.ndarray]:
        for i in range(start, start + n):
            yield self.frame(i)


def draw_text(image: np.ndarray, scene: Scene, t: int, color) -> None:
    """The scene's text, drifting one pixel per frame to the right."""
    x, y = scene.text_origin
    cv2.putText(image, scene.text, (x + t, y), FONT, scene.font_scale, color, scene.thickness, cv2.LINE_8)


def block_any(mask: np.ndarray, block: int) -> np.ndarray:
    """Per block×block cell (edge cells may be partial): does any pixel hold?"""
    h, w = mask.shape
    gh, gw = -(-h // block), -(-w // block)
    padded = np.zeros((gh * block, gw * block), bool)
    padded[:h, :w] = mask
    return np.asarray(padded.reshape(gh, block, gw, block).any(axis=(1, 3)))


WORDS = ("CORTEX", "ROI", "SCORE", "VIDEO", "FRAME", "TEXT", "BLOCK", "SCENE", "ENCODE", "MSER")


@lru_cache(maxsize=16)
def make_scene(seed: int, height: int, width: int, index: int) -> Scene:
    """Draw scene `index`: consecutive scenes alternate dark and bright."""
    rng = np.random.default_rng([seed, index])
    background = make_background(rng, height, width, bright=index % 2 == 1)
    background.flags.writeable = False

    scale = min(height, width) / 480
    shapes = []
    for k in range(3):
        size = int(rng.integers(18, 40) * scale)
        b, g, r = (int(c) for c in rng.integers(0, 256, 3))
        color = (b, g, r)
        start = (float(rng.uniform(size, width - size)), float(rng.uniform(size, height - size)))
        speed = rng.uniform(3, 8) * scale
        angle = rng.uniform(0, 2 * np.pi)
        velocity = (float(speed * np.cos(angle)), float(speed * np.sin(angle)))
        shapes.append(Shape("circle" if k % 2 == 0 else "rect", size, color, start, velocity))

    words = rng.choice(len(WORDS), size=2, replace=False)
    text = f"{WORDS[words[0]]} {WORDS[words[1]]} {index:02d}"
    font_scale = 1.6 * width / 640
    thickness = max(2, int(round(4 * width / 640)))
    (tw, th), _ = cv2.getTextSize(text, FONT, font_scale, thickness)
    x0 = int(rng.integers(0, max(1, width - tw - SCENE_LENGTH)))
    y0 = int(rng.integers(th + 4, max(th + 5, height // 3)))
    text_color = (20, 20, 20) if index % 2 else (255, 255, 255)
    return Scene(background, tuple(shapes), text, (x0, y0), text_color, font_scale, thickness)


def make_background(rng: np.random.Generator, height: int, width: int, bright: bool) -> np.ndarray:
    """A smooth two-colour gradient, sparse sharp dots, faint noise."""
    level = (150, 200) if bright else (40, 90)
    c0 = rng.integers(*level, size=3).astype(np.float32)
    c1 = rng.integers(*level, size=3).astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    ramp = (np.cos(angle) * xx / width + np.sin(angle) * yy / height + 1.0) / 2.0
    image = c0 + (c1 - c0) * ramp[..., None]

    n_dots = height * width // 150
    ys = rng.integers(0, height, n_dots)
    xs = rng.integers(0, width, n_dots)
    dots = np.zeros((height, width), np.float32)
    dots[ys, xs] = rng.uniform(60, 90, n_dots)
    dots = np.asarray(cv2.dilate(dots, np.ones((2, 2), np.uint8)), np.float32)  # 2×2 dots: far below MSER's min_area
    image += (-dots if bright else dots)[..., None]  # dark dots on bright scenes, and vice versa
    image += rng.normal(0.0, 2.0, (height, width, 1)).astype(np.float32)
    return np.clip(np.rint(image), 0, 255).astype(np.uint8)


__all__ = ["BLUR_SIGMA", "FPS", "SCENE_LENGTH", "STATIC_AT", "SyntheticVideo", "block_any"]
